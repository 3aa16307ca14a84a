"""One meaning per word (issue 23 item 10; docs/ARCHITECTURE.md, Glossary).

"fallback" means only the composite reference implementation of a crossdev fused op (impl
`fallback`). The other senses it once had were renamed: sim's CPU delegation, the manager's device
chain and its recovery actions move_to_next_device / move_to_cpu, and the redirect action
`substituted`. This test fails when one of the old names comes back anywhere in the tracked sources.

Allowed: PyTorch's own names, quoted (`torch::Library::fallback()`, `at::native::cpu_fallback`,
PYTORCH_ENABLE_MPS_FALLBACK, MPSFallback.mm: none of them matches a pattern below), the seeds' words
on a line that cites the seed ("seed 003: fallback chain ..."), and the files that document the
rename itself (ALLOWED_FILES).
"""
import os
import re
import subprocess
from pathlib import Path

# (pattern, the name to use instead). Identifiers are matched case-sensitively, prose ignoring case.
RENAMED = [
    (r"\bsim_cpu_fallback\b", "sim_delegate_to_cpu"),
    (r"\bsim_fallback\b", "sim_cpu_delegate"),
    (r"\bFallbackReason\b", "DelegationReason"),
    (r"\bFallbackRecord\b", "DelegationRecord"),
    (r"\bfallback_reason_text\b", "delegation_reason_text"),
    (r"\bfallback_records\b", "delegation_records"),
    (r"\bop_fallback(_enabled)?\b", "unsupported_ops_on_cpu"),
    (r"\bfallback_env\b", "cpu_switch_env"),
    (r"\b\w*fallback_warning\b", "cpu_switch_warning"),
    (r"\bFallbackChain\b", "DeviceChain"),
    (r"\bFallbackStep\b", "ChainStep"),
    (r"\bfallback_chain\b", "device_chain"),
    (r"\ballow_fallback\b", "allow_chain_steps"),
    (r"\bfallback_cpu\b", "move_to_cpu"),
    (r"\bfallback_next_device\b", "move_to_next_device"),
    (r"\bfall_back\(", "leave_device("),
    (r"\.fallbacks\b|\[\"fallbacks\"\]", "chain_steps"),
    (r"\bAction::Fallback\b", "Action::Substituted"),
    (r"\baction:\s*(\[[^\]\n]*)?\bfallback\b", "action: substituted"),
    (r"\[fallback, via\b", "[substituted, via"),
    (r"\bcheck:\s*fallback\b", "check: device_chain"),
    (r"\bmgr\.fallback\.", "mgr.chain."),
    (r"\bcpu-fallback\b", "to-cpu"),
    (r"(?i)\bboxed cpu fallback\b", "CPU delegation"),
    (r"(?i)\bfallback switch\b", "the MPS CPU switch"),
    (r"(?i)\bfallback chain\b", "the device chain"),
    # A default for an absent key (ops_suite.cpp's pick and parse_list, bench_matrix.cpp's list_of,
    # OpCall::scalar).
    (r"\b(?:parity::Tolerance|std::vector<T>|double)\s+fallback\b", "when_absent"),
]
SEED_QUOTE = re.compile(r"\bseed 00\d\b")
ALLOWED_FILES = {
    "tests/python/source_rules/test_one_meaning_of_fallback.py",  # this file
    "docs/bundle-schema.md",  # the schema history names what version 3 renamed
    "python/crossdev/report/schema.py",  # reads version 1-2 bundles: knows the old action name
}
TEXT_SUFFIXES = {".cpp", ".h", ".cu", ".cuh", ".py", ".yaml", ".yml", ".md", ".txt", ".cmake", ".sh", ".toml",
                 ".json", ".in", ".cfg", ".ini"}


def violations(rel_path: str, text: str):
    """Yields "path:line: old -> use new" for every renamed sense in `text`."""
    if rel_path in ALLOWED_FILES:
        return
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, new in RENAMED:
            match = re.search(pattern, line)
            if match and not (pattern.startswith("(?i)") and SEED_QUOTE.search(line)):
                yield f"{rel_path}:{number}: '{match.group(0)}' -> use {new}: {line.strip()[:120]}"


def tracked_files(root: Path):
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # a source tree without git: walk it, minus outputs
        names = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d not in {"venv", "__pycache__"}]
            names += [str(Path(folder, f).relative_to(root)) for f in files]
    return [n for n in names if Path(n).suffix in TEXT_SUFFIXES or Path(n).name == "CMakeLists.txt"]


def test_no_renamed_sense_of_fallback_in_the_sources(repo_root):
    found = []
    for name in tracked_files(Path(repo_root)):
        path = Path(repo_root, name)
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += violations(name.replace(os.sep, "/"), text)
    assert not found, "\"fallback\" is only the fused op's composite reference (docs/ARCHITECTURE.md, Glossary):\n" + \
        "\n".join(found)


def test_the_patterns_catch_each_old_name_and_spare_the_one_meaning():
    old = {
        "impl/sim/x.cpp": "void sim_cpu_fallback(); auto r = fallback_records(); FallbackReason::NoNativeSimKernel;",
        "python/x.py": 'sim.set_profile("mps-like", op_fallback=True); report["fallbacks"]',
        "impl/manager/x.h": "#include \"manager/fallback_chain.h\"\nFallbackChain c; FallbackStep s; options.allow_fallback = 1;",
        "matrices/data/x.yaml": "recovery: [empty_cache, fallback_cpu]\nrecovery: [\"empty_cache+fallback_next_device\"]",
        "matrices/x.yaml": "{id: mgr.fallback.a, check: fallback, from: mps}\n{host: cpu-only, action: fallback}\n"
                           "{action: [honored, fallback]}",
        "impl/policy/x.cpp": "Action::Fallback",
        "docs/x.md": "The boxed CPU fallback runs unless the fallback switch is off; the Fallback chain walks on.",
        "python/crossdev/report/sample.py": "cuda:5 -> cuda:0 [fallback, via create] reason",
        "conformance/suites/x.cpp": "auto pick = [&](const Table& t, parity::Tolerance fallback) {};\n"
                                    "std::vector<T> list_of(const Row& row, std::vector<T> fallback);",
    }
    caught = [v for path, text in old.items() for v in violations(path, text)]
    flagged = {line.split(": '")[1].split("'")[0] for line in caught}
    assert flagged >= {"sim_cpu_fallback", "fallback_records", "FallbackReason", "op_fallback", '["fallbacks"]',
                       "fallback_chain", "FallbackChain", "FallbackStep", "allow_fallback", "fallback_cpu",
                       "fallback_next_device", "mgr.fallback.", "check: fallback", "action: fallback",
                       "action: [honored, fallback", "Action::Fallback", "boxed CPU fallback", "fallback switch",
                       "Fallback chain", "[fallback, via",
                       "parity::Tolerance fallback", "std::vector<T> fallback"}, caught

    kept = {
        "impl/sim/x.cpp": "at::native::cpu_fallback(op, stack); lib.fallback(f); // MPSFallback.mm, mps_fallback()",
        "impl/sim/y.cpp": '"set the environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` to use the CPU as a fallback"',
        "matrices/ops.yaml": "impls: [fused, fallback, torchscript]  # fused_vs_fallback, Impl::Fallback",
        "matrices/manager.yaml": '{source: "seed 003: fallback chain MPS -> CUDA -> CPU", check: device_chain}',
        "docs/bundle-schema.md": "the redirect action `fallback` is `substituted`; action: fallback",
    }
    assert [v for path, text in kept.items() for v in violations(path, text)] == []
