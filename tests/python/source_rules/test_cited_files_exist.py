"""Every repository file a comment or a doc cites exists.

A comment that sends a newcomer to `opinfo/expectations.py` or `suites/opinfo_suite.cpp` after the file
moved is worse than none (issue 50). A citation is a path ending in a source or doc extension whose first
folder is one of this repository's folders: a top-level one (`conformance/suites/python_suite.cpp`) or one
inside conformance/, impl/, python/crossdev/, tests/, bench/, ci/ (`suites/python_suite.cpp`,
`opinfo/samples.py`); it exists when a tracked file is that path or ends with it. Upstream files are cited
with their project first (`pytorch/cmake/Codegen.cmake`, `torch_xla/runtime.py`), which no repository
folder is named. Generated files (`.inc`), URLs and the files under tests/ (whose paths are test data) are
not checked."""
import re
import subprocess

from conftest import ROOT

EXTENSIONS = ("json.gz", "py", "cpp", "h", "hpp", "cu", "cuh", "md", "yaml", "yml", "json", "sh", "cmake", "txt", "toml")
CITATION = re.compile(r"(?<![\w./<>{}$*~-])((?:[\w.+-]+/)+[\w.+-]+\.(?:" + "|".join(map(re.escape, EXTENSIONS))
                      + r"))(?![\w/])")
SUBFOLDER_BASES = ("conformance", "impl", "python", "python/crossdev", "tests", "bench", "ci")
NOT_CITED = ("build", "reports")  # generated output: nothing there is a source to cite


def tracked() -> list:
    return subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.split()


def citation_roots(files) -> set:
    roots = {f.split("/", 1)[0] for f in files if "/" in f}
    for base in SUBFOLDER_BASES:
        prefix = base + "/"
        roots |= {f[len(prefix):].split("/", 1)[0] for f in files if f.startswith(prefix) and "/" in f[len(prefix):]}
    return (roots | {"crossdev"}) - set(NOT_CITED)


def missing_citations(text, files, roots):
    """[(line number, path)] of the citations in text that name no file of `files`."""
    suffixes = set()
    for f in files:
        parts = f.split("/")
        suffixes |= {"/".join(parts[i:]) for i in range(len(parts))}
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in CITATION.finditer(line):
            path = m.group(1)
            if path.split("/", 1)[0] not in roots or re.search(r"https?://\S*" + re.escape(path), line):
                continue
            if path not in suffixes:
                found.append((number, path))
    return found


def test_the_check_finds_a_moved_file_and_passes_the_allowed_citations():
    files = ["conformance/suites/python_suite.cpp", "python/crossdev/opinfo/samples.py", "docs/opinfo.md"]
    roots = citation_roots(files)
    text = ("see suites/opinfo_suite.cpp and opinfo/expectations.py\n"
            "see conformance/suites/python_suite.cpp, suites/python_suite.cpp, opinfo/samples.py, docs/opinfo.md\n"
            "upstream: pytorch/cmake/Codegen.cmake, ATen/Config.h; https://github.com/x/engine/a.cpp\n"
            "generated: runner/case_statuses.inc")
    assert missing_citations(text, files, roots) == [(1, "suites/opinfo_suite.cpp"), (1, "opinfo/expectations.py")]


def test_every_cited_repository_file_exists():
    files = tracked()
    roots = citation_roots(files)
    missing = []
    for rel in files:
        path = ROOT / rel
        if rel.startswith("tests/") or not path.is_file() or path.suffix in (".gz", ".png", ".whl"):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        missing += [f"{rel}:{n}: {cited}" for n, cited in missing_citations(text, files, roots)]
    assert not missing, "citations of files that do not exist:\n" + "\n".join(missing)
