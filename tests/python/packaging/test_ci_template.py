"""The CI template (ci/workflows/crossdev.yml) cannot rot: its shell steps run on this host.

Two tests:
- test_template_static reads the whole template, evaluates every `${{ }}` expression and `if:` of every
  job for every runner row, and checks what issue 22 asks of it: each runner job pip-installs crossdev
  with --no-build-isolation (against the runner's own torch) and runs `crossdev run`, uploading its
  bundle even when the run fails; one merge job, run whatever the runners did, merges, reports and
  gates; no step that runs on macOS calls apt-get.
- test_template_runs_on_this_host runs the template's own `run:` steps, unchanged, with bash as GitHub
  runs them: the `conformance` job for the rows linux-cpu and linux-cpu-sim, then the `merge` job over
  the bundles they uploaded. Only `uses:` steps are emulated (checkout: the workspace's checkout is a
  link to this repository; upload/download-artifact: files copied through a local artifact store).

A tiny evaluator stands in for GitHub's expression engine. Anything in the template it does not
understand (an expression, a function, a context, a step key, an action, a shell) FAILS the test with
its name, so a template change this test cannot follow is caught, never skipped.

Cost: one fresh venv (`--system-site-packages`, as a runner has its own torch) serves both rows. The
template's `pip install --no-build-isolation` of the checkout builds its wheel in a build tree of this
test's own, `<build dir>-ci-template` beside the main one (scikit-build-core's build-dir, through SKBUILD_*
variables, with the cmake defines the main tree was configured with), never in the main build folder, so
a source edited while `make test` runs cannot fail this test or change what the other tests run. The test
builds that tree first (tests/python/packaging/ci_template_tree.py, which `make build-tests` runs before
pytest, so the test itself compiles nothing unless a source changed since; ccache, keyed on paths relative
to the checkout, serves a first build: cmake/CrossdevBuildSpeed.cmake), so each install then compiles
nothing and takes a few seconds. The runs are narrowed with CROSSDEV_RUN_ARGS, which the template passes
to `crossdev run`.
"""
import fnmatch
import json
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

import ci_template_tree
from conftest import REAL_ACCELERATOR

TEMPLATE = pathlib.Path(__file__).resolve().parents[3] / "ci" / "workflows" / "crossdev.yml"

# The rows run for real, and the exit code each one's gate must give on this CPU host: the gate's exit
# status is the verdict, not a step failure.
ROWS = ("linux-cpu", "linux-cpu-sim")
GATE_VERDICT = {"linux-cpu": 0, "linux-cpu-sim": 0, "merge": 0}
RUN_ARGS = "--filter presets.*"          # a small slice of the built-in catalog per run
INSTALL_LIMIT_S = 120                    # an install that reuses the build tree takes ~5-10 s
STEP_TIMEOUT_S = 300

GITHUB_CONTEXT = {"ref": "refs/heads/main", "ref_name": "main", "sha": "0" * 40, "repository": "your-org/crossdev",
                  "repository_owner": "your-org", "event_name": "push", "run_id": "1", "run_number": "1",
                  "run_attempt": "1", "actor": "crossdev-test", "server_url": "https://github.com",
                  "workflow": "crossdev"}
# What GitHub sets in every step's environment; a workflow cannot overwrite GITHUB_* and RUNNER_*.
RESERVED_ENV = re.compile(r"^(GITHUB_|RUNNER_)")
JOB_KEYS = {"name", "runs-on", "needs", "if", "strategy", "env", "steps", "timeout-minutes", "permissions",
            "defaults", "continue-on-error", "concurrency", "outputs"}
STEP_KEYS = {"name", "id", "if", "uses", "with", "run", "env", "shell", "working-directory", "continue-on-error",
             "timeout-minutes"}
STATUS_FUNCTIONS = ("always", "success", "failure", "cancelled")


class TemplateError(Exception):
    """Something in the template that this test cannot follow."""


# ---------------------------------------------------------------------------------------------------
# A tiny GitHub expression evaluator: literals, contexts (matrix, github, runner, steps), `.`/`[]`,
# ! == != < <= > >= && || (GitHub's value semantics), the status functions and contains/startsWith/
# endsWith. Strings compare case-insensitively, as on GitHub.
# ---------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""\s*(?:(?P<str>'(?:[^']|'')*')
                             |(?P<num>\d+(?:\.\d+)?)
                             |(?P<op>==|!=|<=|>=|&&|\|\||[!<>()\[\].,])
                             |(?P<name>[A-Za-z_][A-Za-z0-9_-]*))""", re.X)
_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def truthy(value):
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (None, False, 0, "")


def _number(value):
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value) if value.strip() else 0
        except ValueError:
            return math.nan
    return math.nan


def _equal(a, b):
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is type(b):
        return a == b
    return _number(a) == _number(b)


class _Expression:
    def __init__(self, text, ctx, where):
        self.text, self.ctx, self.where = text.strip(), ctx, where
        self.tokens, pos = [], 0
        while pos < len(self.text):
            m = _TOKEN.match(self.text, pos)
            if not m or m.end() == pos:
                self.fail(f"cannot read {self.text[pos:]!r}")
            pos = m.end()
            self.tokens.append((m.lastgroup, m.group(m.lastgroup)))
        self.i = 0

    def fail(self, what):
        raise TemplateError(f"{self.where}: {what} in the expression `{self.text}` (this test's evaluator "
                            f"does not understand it: teach tests/python/packaging/test_ci_template.py, or "
                            f"simplify the template)")

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def take(self, op=None):
        token = self.peek()
        if token[0] is None or (op is not None and token != ("op", op)):
            self.fail(f"expected {op or 'more'} at {token[1]!r}")
        self.i += 1
        return token

    def evaluate(self):
        if not self.tokens:
            self.fail("empty expression")
        value = self.or_()
        if self.i != len(self.tokens):
            self.fail(f"unexpected {self.peek()[1]!r}")
        return value

    def or_(self):
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self):
        value = self.equality()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self):
        value = self.comparison()
        while self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            same = _equal(value, self.comparison())
            value = same if op == "==" else not same
        return value

    def comparison(self):
        value = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("<", "<=", ">", ">="):
            op = self.take()[1]
            a, b = _number(value), _number(self.unary())
            value = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        return value

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self):
        value, path = self.primary()
        while True:
            if self.peek() == ("op", "."):
                self.take()
                kind, name = self.take()
                if kind != "name":
                    self.fail(f"expected a property name after {path}.")
            elif self.peek() == ("op", "["):
                self.take()
                name = self.or_()
                self.take("]")
            else:
                return value
            value, path = self.member(value, name, path), f"{path}.{name}"

    def member(self, value, name, path):
        if isinstance(value, dict):
            for key in value:
                if isinstance(key, str) and isinstance(name, str) and key.casefold() == name.casefold():
                    return value[key]
            self.fail(f"unknown property {path}.{name} (known: {', '.join(map(str, value)) or 'none'})")
        if isinstance(value, list) and isinstance(name, (int, float)) and 0 <= int(name) < len(value):
            return value[int(name)]
        self.fail(f"cannot take {name!r} of {path}")

    def primary(self):
        kind, value = self.take()
        if kind == "str":
            return value[1:-1].replace("''", "'"), value
        if kind == "num":
            return (float(value) if "." in value else int(value)), value
        if (kind, value) == ("op", "("):
            inner = self.or_()
            self.take(")")
            return inner, "(...)"
        if kind == "name":
            low = value.lower()
            if low in ("true", "false"):
                return low == "true", value
            if low == "null":
                return None, value
            if self.peek() == ("op", "("):
                return self.call(low), f"{value}()"
            if low not in self.ctx or low.startswith("__"):
                known = ", ".join(sorted(k for k in self.ctx if not k.startswith("__")))
                self.fail(f"unknown context `{value}` (known here: {known})")
            return self.ctx[low], value
        self.fail(f"unexpected {value!r}")

    def call(self, name):
        self.take("(")
        args = []
        while self.peek() != ("op", ")"):
            args.append(self.or_())
            if self.peek() == ("op", ","):
                self.take()
        self.take(")")
        status = self.ctx.get("__status__", "success")
        if name in STATUS_FUNCTIONS and not args:
            return {"always": True, "success": status == "success", "failure": status == "failure",
                    "cancelled": False}[name]
        text = [a.casefold() if isinstance(a, str) else a for a in args]
        if name == "contains" and len(args) == 2:
            if isinstance(args[0], list):
                return any(_equal(x, args[1]) for x in args[0])
            return str(text[1]) in str(text[0])
        if name in ("startswith", "endswith") and len(args) == 2:
            return getattr(str(text[0]), name)(str(text[1]))
        self.fail(f"function {name}() with {len(args)} argument(s) is not understood")


def evaluate(text, ctx, where):
    return _Expression(text, ctx, where).evaluate()


def _as_text(value, where, expression):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (str, int, float)):
        return str(value)
    raise TemplateError(f"{where}: `${{{{{expression}}}}}` gives a {type(value).__name__} inside a string")


def interpolate(value, ctx, where):
    """A template value with its `${{ }}` expressions replaced (a whole-value expression keeps its type)."""
    if isinstance(value, str):
        whole = _EXPR.fullmatch(value.strip())
        if whole:
            return evaluate(whole.group(1), ctx, where)
        text = _EXPR.sub(lambda m: _as_text(evaluate(m.group(1), ctx, where), where, m.group(1)), value)
        if "${{" in text:
            raise TemplateError(f"{where}: an unterminated `${{{{` in {value!r}")
        return text
    if isinstance(value, list):
        return [interpolate(v, ctx, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: interpolate(v, ctx, f"{where}.{k}") for k, v in value.items()}
    return value


def condition(value, ctx, where):
    """An `if:` as GitHub reads it: an expression with or without `${{ }}`, `success() &&` implied."""
    if value is None:
        value = "success()"
    if isinstance(value, bool):
        return value and ctx.get("__status__", "success") == "success"
    text = str(value).strip()
    whole = _EXPR.fullmatch(text)
    if whole:
        text = whole.group(1)
    elif "${{" in text:
        raise TemplateError(f"{where}: an `if:` mixing text and `${{{{ }}}}` ({text!r})")
    if not re.search(r"\b(%s)\s*\(" % "|".join(STATUS_FUNCTIONS), text, re.I):
        text = f"success() && ({text})"
    return truthy(evaluate(text, ctx, where))


# ---------------------------------------------------------------------------------------------------
# The template's structure
# ---------------------------------------------------------------------------------------------------
def load_workflow(path=TEMPLATE):
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise TemplateError(f"{path}: not a workflow (a YAML mapping)")
    if True in doc and "on" not in doc:          # YAML 1.1 reads the key `on` as the boolean True
        doc["on"] = doc.pop(True)
    return doc


def matrix_rows(job_id, job):
    matrix = (job.get("strategy") or {}).get("matrix")
    if matrix is None:
        return [{}]
    if not isinstance(matrix, dict) or set(matrix) != {"include"}:
        raise TemplateError(f"jobs.{job_id}.strategy.matrix: only a list of `include:` rows is understood "
                            f"(found {sorted(matrix) if isinstance(matrix, dict) else matrix!r})")
    return [dict(row) for row in matrix["include"]]


def row_label(row):
    return str(row.get("name", "")) or "-"


def runner_os(runs_on, where):
    labels = [runs_on] if isinstance(runs_on, str) else list(runs_on or [])
    for label in (str(x).lower() for x in labels):
        if label.startswith("ubuntu") or label == "linux":
            return "Linux"
        if label.startswith("macos"):
            return "macOS"
        if label.startswith("windows"):
            return "Windows"
    raise TemplateError(f"{where}: cannot tell the runner OS from runs-on {runs_on!r}")


def context(row, os_name, workspace, status="success", steps=None):
    github = dict(GITHUB_CONTEXT, workspace=str(workspace), job="")
    return {"matrix": row, "github": github, "runner": {"os": os_name, "arch": "X64", "name": "Hosted Agent",
                                                         "temp": str(pathlib.Path(workspace).parent / "_temp")},
            "steps": steps or {}, "__status__": status}


def step_label(job_id, row, index, step):
    name = step.get("name") or step.get("uses") or (step.get("run") or "").strip().splitlines()[0]
    return f"jobs.{job_id}[{row_label(row)}].steps[{index}] ({name})"


def shell_text(script):
    """A run: script with continuation lines joined and comment lines dropped."""
    joined = re.sub(r"\\\n", " ", script or "")
    return "\n".join(line for line in joined.splitlines() if not line.strip().startswith("#"))


_CMD = r"(?:^|[\s;&|(`])"
_CROSSDEV = _CMD + r"(?:crossdev|python3?\s+-m\s+crossdev)\s+"


def calls_crossdev(script, sub):
    return re.search(_CROSSDEV + re.escape(sub) + r"(?:\s|$)", shell_text(script), re.M) is not None


def calls_apt(script):
    return re.search(_CMD + r"(?:sudo\s+)?apt(?:-get)?\s", shell_text(script), re.M) is not None


def pip_installs_crossdev(script):
    for line in shell_text(script).splitlines():
        if re.search(r"\bpip3?\s+install\b", line) and "--no-build-isolation" in line and re.search(
                r"crossdev", line, re.I):
            return True
    return False


def runner_and_merge_jobs(workflow):
    jobs = workflow["jobs"]
    merge = [j for j, job in jobs.items() if job.get("needs")]
    runners = [j for j in jobs if j not in merge]
    return runners, merge


def check_job_shape(workflow, job_id, job, row, os_name, workspace):
    """Evaluates everything of one job for one row (failing on what cannot be followed); returns its
    steps as [(label, step, with, env)]."""
    where = f"jobs.{job_id}[{row_label(row)}]"
    unknown = set(job) - JOB_KEYS
    if unknown:
        raise TemplateError(f"{where}: job keys this test cannot follow: {sorted(unknown)}")
    ctx = context(row, os_name, workspace)
    for key in ("name", "runs-on", "env", "timeout-minutes", "continue-on-error", "concurrency"):
        if key in job:
            interpolate(job[key], ctx, f"{where}.{key}")
    for status in ("success", "failure"):
        condition(job.get("if"), context(row, os_name, workspace, status), f"{where}.if")
    for key in (job.get("env") or {}):
        if RESERVED_ENV.match(key):
            raise TemplateError(f"{where}.env.{key}: GitHub does not let a workflow overwrite GITHUB_* and "
                                f"RUNNER_* variables (its own value wins), so the steps would read the runner's")
    out = []
    for index, step in enumerate(job.get("steps") or []):
        label = step_label(job_id, row, index, step)
        unknown = set(step) - STEP_KEYS
        if unknown:
            raise TemplateError(f"{label}: step keys this test cannot follow: {sorted(unknown)}")
        if ("run" in step) == ("uses" in step):
            raise TemplateError(f"{label}: a step needs exactly one of run: and uses:")
        if "run" in step and "${{" in str(step["run"]):
            raise TemplateError(f"{label}: a run: script with `${{{{ }}}}` in it; pass the value through env: "
                                f"(GitHub pastes expressions into the script before bash reads it)")
        shell = step.get("shell") or ((job.get("defaults") or {}).get("run") or {}).get("shell") or \
            ((workflow.get("defaults") or {}).get("run") or {}).get("shell")
        if shell not in (None, "bash"):
            raise TemplateError(f"{label}: shell {shell!r} is not understood (only bash)")
        for status in ("success", "failure"):
            condition(step.get("if"), context(row, os_name, workspace, status), f"{label}.if")
        for key in ("env", "continue-on-error", "timeout-minutes", "working-directory", "name"):
            if key in step:
                interpolate(step[key], ctx, f"{label}.{key}")
        for key in (step.get("env") or {}):
            if RESERVED_ENV.match(key):
                raise TemplateError(f"{label}.env.{key}: GitHub does not let a workflow overwrite GITHUB_* "
                                    f"and RUNNER_* variables")
        out.append((label, step, interpolate(step.get("with") or {}, ctx, f"{label}.with")))
    return out


@pytest.fixture(scope="module")
def workflow():
    return load_workflow()


def test_template_static(workflow):
    try:
        _check_static(workflow)
        error = None
    except TemplateError as e:
        error = str(e)
    if error:
        pytest.fail(error, pytrace=False)


def _check_static(workflow):
    assert workflow.get("on"), f"{TEMPLATE}: no `on:` triggers"
    for key in (workflow.get("env") or {}):
        assert not RESERVED_ENV.match(key), f"env.{key}: GITHUB_* and RUNNER_* cannot be overwritten"
    interpolate({k: v for k, v in workflow.items() if k not in ("jobs", "on")}, context({}, "Linux", "/w"),
                "(workflow)")
    runners, merges = runner_and_merge_jobs(workflow)
    assert runners, "no runner job (a job that needs no other)"
    assert len(merges) == 1, f"expected one merge job (a job with needs:), found {merges}"
    jobs, workspace = workflow["jobs"], "/home/runner/work/crossdev/crossdev"
    saw_macos = False
    for job_id, job in jobs.items():
        for row in matrix_rows(job_id, job):
            where = f"jobs.{job_id}[{row_label(row)}]"
            runs_on = interpolate(job.get("runs-on"), context(row, "Linux", workspace), f"{where}.runs-on")
            os_name = runner_os(runs_on, f"{where}.runs-on")
            saw_macos |= os_name == "macOS"
            steps = check_job_shape(workflow, job_id, job, row, os_name, workspace)
            # Whatever the row's own OS: a step that would run on macOS never calls apt-get.
            mac = context(row, "macOS", workspace)
            for label, step, _ in steps:
                if "run" in step and condition(step.get("if"), mac, f"{label}.if"):
                    assert not calls_apt(step["run"]), f"{label}: calls apt-get on macOS (runner.os == 'macOS')"
            runs = [step["run"] for _, step, _ in steps if "run" in step]
            uploads = [(label, step, w) for label, step, w in steps
                       if str(step.get("uses", "")).startswith("actions/upload-artifact@")]
            if job_id in runners:
                assert any(pip_installs_crossdev(r) for r in runs), \
                    f"{where}: no step pip-installs crossdev with --no-build-isolation (against the runner's torch)"
                assert any(calls_crossdev(r, "run") for r in runs), f"{where}: no step runs `crossdev run`"
                assert any("CROSSDEV_RUN_ARGS" in r for r in runs if calls_crossdev(r, "run")), \
                    f"{where}: `crossdev run` no longer passes $CROSSDEV_RUN_ARGS (this test's way to run a slice)"
                for r in runs:
                    for line in shell_text(r).splitlines():
                        if re.search(r"\bpip3?\s+install\b.*\btorch\b", line):
                            assert re.search(r"import torch.*\|\|", line), \
                                f"{where}: installs torch unconditionally; a runner's own torch is never " \
                                f"replaced: {line.strip()}"
                assert uploads, f"{where}: no step uploads the bundle"
                for label, step, _ in uploads:
                    assert condition(step.get("if"), context(row, os_name, workspace, "failure"), label), \
                        f"{label}: the bundle must be uploaded even when the job failed (if: always())"
                assert (job.get("strategy") or {}).get("fail-fast") is False, \
                    f"jobs.{job_id}.strategy.fail-fast: one failing runner must not cancel the others"
            else:
                for sub in ("merge", "report", "gate"):
                    assert any(calls_crossdev(r, sub) for r in runs), f"{where}: no step runs `crossdev {sub}`"
                assert any(str(step.get("uses", "")).startswith("actions/download-artifact@")
                           for _, step, _ in steps), f"{where}: downloads no bundles"
                needs = job["needs"] if isinstance(job["needs"], list) else [job["needs"]]
                assert set(runners) <= set(needs), f"{where}: needs {needs}, not every runner job {runners}"
                assert condition(job.get("if"), context(row, os_name, workspace, "failure"), f"{where}.if"), \
                    f"{where}: must run when a runner failed (if: always()), or the report is lost"
    assert saw_macos, "no macOS row in the runner table: the apt-get check would check nothing"
    names = [row_label(r) for j in runners for r in matrix_rows(j, jobs[j])]
    for row in ROWS:
        assert row in names, f"the runner table has no row {row!r}, which this test runs on this host"


# ---------------------------------------------------------------------------------------------------
# Running the template on this host
# ---------------------------------------------------------------------------------------------------
_FAKE_TOOL = """#!/bin/sh
echo "test_ci_template: '$(basename "$0") $*' was called on this host; the template's step should have found
what it needs already installed (run ci/setup.sh). This test never installs system packages." >&2
exit 97
"""


def _cmake_cache(build_dir):
    if not (build_dir / "CMakeCache.txt").exists():
        pytest.fail(f"{build_dir / 'CMakeCache.txt'} is missing: build first (make build)")
    return ci_template_tree.cmake_cache(build_dir)


def _skbuild_defines(repo_root, build_dir):
    _cmake_cache(build_dir)
    return ci_template_tree.skbuild_defines(repo_root, build_dir)


def _prepare_own_build(repo_root, build_dir):
    """This test's own tree, built (make build-tests builds it first: then this compiles nothing)."""
    own, failure = ci_template_tree.prepare(repo_root, build_dir)
    assert not failure, failure
    return own


def _skbuild_env(repo_root, build_dir, own):
    """pip's wheel build reuses this test's configured build tree `own`: its folder, and the cmake defines
    it was configured with (so the tree is neither reconfigured nor rebuilt), and no Python hints (the tree
    keeps the interpreter it was configured with, not this test's temporary venv). PIP_CONFIG_SETTINGS
    cannot carry this: pip reads only one KEY=VALUE from it."""
    return {"SKBUILD_BUILD_DIR": str(own), "SKBUILD_CMAKE_DEFINE": ";".join(_skbuild_defines(repo_root, build_dir)),
            "SKBUILD_CMAKE_PYTHON_HINTS": "false"}


def _host_env():
    """This host's environment as a fresh runner's: nothing of this test session's crossdev, pip or
    Python settings, and no PATH entry that already holds a `crossdev` command."""
    session_only = re.compile(r"^(CROSSDEV_|PIP_|SKBUILD_|GITHUB_|RUNNER_|PYTEST_|PYTHON(PATH|HOME)$|VIRTUAL_ENV$)")
    env = {k: v for k, v in os.environ.items() if not session_only.match(k)}
    dirs = [d for d in env.get("PATH", "").split(os.pathsep) if d and not (pathlib.Path(d) / "crossdev").exists()]
    env["PATH"] = os.pathsep.join(dirs)
    return env


class StepRun:
    def __init__(self, label, step, kind):
        self.label, self.step, self.kind = label, step, kind
        self.rc, self.seconds, self.output, self.outcome = None, 0.0, "", "skipped"

    @property
    def run(self):
        return self.step.get("run") or ""

    def line(self):
        rc = "skip" if self.rc is None else f"rc={self.rc}"
        return f"  [{rc:>7} {self.seconds:6.1f}s] {self.label}"


class Emulator:
    """Runs jobs of the template on this host, one workspace per job run, with a local artifact store."""

    def __init__(self, workflow, repo_root, tmp_path, env):
        self.workflow, self.repo_root, self.tmp, self.env = workflow, repo_root, tmp_path, env
        self.store = tmp_path / "artifacts"
        self.store.mkdir()
        self.uploaded = []

    def run_job(self, job_id, row, path_prefix):
        job = self.workflow["jobs"][job_id]
        tag = row_label(row) if row else job_id
        workspace = self.tmp / f"ws-{job_id}-{tag}" / "crossdev"
        temp = workspace.parent / "_temp"
        workspace.mkdir(parents=True)
        temp.mkdir()
        where = f"jobs.{job_id}[{tag}]"
        ctx = context(row, "Linux", workspace)
        os_name = runner_os(interpolate(job.get("runs-on"), ctx, f"{where}.runs-on"), f"{where}.runs-on")
        assert os_name == "Linux", f"{where}: runs on {os_name}; this test runs Linux rows on this host"
        summary = temp / "step_summary.md"
        summary.touch()
        defaults = {"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
                    "GITHUB_REF": GITHUB_CONTEXT["ref"], "GITHUB_SHA": GITHUB_CONTEXT["sha"],
                    "GITHUB_REPOSITORY": GITHUB_CONTEXT["repository"], "GITHUB_EVENT_NAME": "push",
                    "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_JOB": job_id, "RUNNER_OS": "Linux",
                    "RUNNER_ARCH": "X64", "RUNNER_NAME": "Hosted Agent", "RUNNER_TEMP": str(temp)}
        job_env = {**interpolate(self.workflow.get("env") or {}, ctx, "env"),
                   **interpolate(job.get("env") or {}, ctx, f"{where}.env")}
        added_env, added_path = {}, []
        status, steps_ctx, runs = "success", {}, []
        for index, step in enumerate(job.get("steps") or []):
            label = step_label(job_id, row, index, step)
            result = StepRun(label, step, "run" if "run" in step else step["uses"])
            runs.append(result)
            ctx = context(row, "Linux", workspace, status, steps_ctx)
            if not condition(step.get("if"), ctx, f"{label}.if"):
                continue
            coe = truthy(interpolate(step.get("continue-on-error", False), ctx, f"{label}.continue-on-error"))
            env = dict(self.env)
            env["PATH"] = os.pathsep.join([*reversed(added_path), *map(str, path_prefix), env["PATH"]])
            env.update(job_env)
            env.update(added_env)
            env.update(interpolate(step.get("env") or {}, ctx, f"{label}.env"))
            env.update(defaults)
            env = {k: v if isinstance(v, str) else _as_text(v, f"{label}.env.{k}", k) for k, v in env.items()}
            start = time.monotonic()
            if "run" in step:
                files = {name: temp / f"{name.lower()}_{index}" for name in ("GITHUB_ENV", "GITHUB_PATH",
                                                                              "GITHUB_OUTPUT")}
                for name, path in files.items():
                    path.touch()
                    env[name] = str(path)
                result.rc, result.output = self.shell(step, job, env, workspace, temp, index, label)
                added_env.update(_read_env_file(files["GITHUB_ENV"]))
                added_path += [p for p in files["GITHUB_PATH"].read_text().splitlines() if p.strip()]
                outputs = _read_env_file(files["GITHUB_OUTPUT"])
            else:
                with_ = interpolate(step.get("with") or {}, ctx, f"{label}.with")
                result.rc, result.output = self.uses(step["uses"], with_, workspace, label)
                outputs = {}
            result.seconds = time.monotonic() - start
            result.outcome = "success" if result.rc == 0 else "failure"
            if step.get("id"):
                steps_ctx[step["id"]] = {"outcome": result.outcome, "outputs": outputs,
                                         "conclusion": "success" if coe else result.outcome}
            if result.rc != 0 and not coe:
                status = "failure"
        return workspace, summary, runs

    def shell(self, step, job, env, workspace, temp, index, label):
        shell = step.get("shell") or ((job.get("defaults") or {}).get("run") or {}).get("shell") or \
            ((self.workflow.get("defaults") or {}).get("run") or {}).get("shell")
        script = temp / f"step_{index}.sh"
        script.write_text(step["run"])
        # GitHub's commands: no shell given -> `bash -e {0}`; `shell: bash` -> the stricter form.
        argv = ["bash", "-e", str(script)] if shell is None else \
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
        cwd = workspace / str(step.get("working-directory", "."))
        log = temp / f"step_{index}.log"
        timeout = min(STEP_TIMEOUT_S, 60 * float(step.get("timeout-minutes", 360)))
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                rc = 124
        text = log.read_text(errors="replace")
        if rc == 124:
            text += f"\n(test_ci_template: killed after {timeout:.0f}s)"
        return rc, text

    def uses(self, uses, with_, workspace, label):
        action = uses.split("@", 1)[0]
        if action == "actions/checkout":
            unknown = set(with_) - {"repository", "path", "fetch-depth", "ref", "submodules", "persist-credentials"}
            if unknown:
                raise TemplateError(f"{label}: checkout inputs this test cannot follow: {sorted(unknown)}")
            path = str(with_.get("path") or ".").strip("/")
            if path in ("", "."):
                raise TemplateError(f"{label}: a checkout into the workspace itself is not emulated; use with.path")
            dest = workspace / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(self.repo_root, target_is_directory=True)
            return 0, f"checkout: {dest} -> {self.repo_root}"
        if action == "actions/upload-artifact":
            unknown = set(with_) - {"name", "path", "if-no-files-found", "retention-days", "compression-level",
                                    "overwrite", "include-hidden-files"}
            if unknown:
                raise TemplateError(f"{label}: upload-artifact inputs this test cannot follow: {sorted(unknown)}")
            name = str(with_.get("name") or "artifact")
            if name in self.uploaded:
                return 1, f"upload-artifact: an artifact named {name!r} was already uploaded in this run"
            files = _artifact_files(workspace, str(with_["path"]), label)
            if not files:
                mode = str(with_.get("if-no-files-found", "warn"))
                return (1 if mode == "error" else 0), f"upload-artifact: no files at {with_['path']!r} ({mode})"
            for src, rel in files:
                dest = self.store / name / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
            self.uploaded.append(name)
            return 0, f"upload-artifact: {name}: {sorted(str(r) for _, r in files)}"
        if action == "actions/download-artifact":
            unknown = set(with_) - {"name", "pattern", "path", "merge-multiple"}
            if unknown:
                raise TemplateError(f"{label}: download-artifact inputs this test cannot follow: {sorted(unknown)}")
            dest = workspace / str(with_.get("path") or ".")
            merge = str(with_.get("merge-multiple", False)).lower() == "true"
            if with_.get("name"):
                if with_["name"] not in self.uploaded:
                    return 1, f"download-artifact: no artifact {with_['name']!r} (uploaded: {self.uploaded})"
                chosen = {with_["name"]: dest}
            else:
                pattern = str(with_.get("pattern") or "*")
                chosen = {n: dest if merge else dest / n for n in self.uploaded if fnmatch.fnmatchcase(n, pattern)}
            for name, to in chosen.items():
                shutil.copytree(self.store / name, to, dirs_exist_ok=True)
            return 0, f"download-artifact: {sorted(chosen)} -> {dest}"
        if action == "actions/setup-python":
            unknown = set(with_) - {"python-version", "cache"}
            if unknown:
                raise TemplateError(f"{label}: setup-python inputs this test cannot follow: {sorted(unknown)}")
            # The test's fresh venv, first on PATH in every step, stands for the job's own Python.
            return 0, f"setup-python {with_.get('python-version')!r}: the test's venv stands for it"
        raise TemplateError(f"{label}: the action {uses!r} is not emulated by this test")


def _artifact_files(workspace, spec, label):
    paths = [line.strip() for line in spec.splitlines() if line.strip()]
    for p in paths:
        if p.startswith("!") or any(c in p for c in "*?["):
            raise TemplateError(f"{label}: upload path {p!r}: globs and exclusions are not emulated")
    found = [workspace / p for p in paths if (workspace / p).exists()]
    if not found:
        return []
    roots = [p if p.is_dir() else p.parent for p in found]
    common = pathlib.Path(os.path.commonpath([str(r) for r in roots]))
    files = []
    for p in found:
        for f in ([x for x in sorted(p.rglob("*")) if x.is_file()] if p.is_dir() else [p]):
            files.append((f, f.relative_to(common)))
    return files


def _read_env_file(path):
    out, lines = {}, path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            out[key] = "\n".join(lines[i + 1:j])
            i = j
        elif "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        i += 1
    return out


def _is_gate(run):
    return bool(run) and calls_crossdev(run, "gate")


def _is_install(run):
    return bool(run) and pip_installs_crossdev(run)


def _transcript(runs):
    return "\n".join(r.line() for r in runs)


def _check_steps(job_tag, runs):
    """Every step that ran exited 0, but for continue-on-error ones; a gate's exit code is its verdict."""
    problems = []
    for r in runs:
        if r.rc is None:
            continue
        if _is_gate(r.run):
            want = GATE_VERDICT[job_tag]
            if r.rc != want:
                problems.append(f"{r.label}: gate exit {r.rc}, expected {want}\n{r.output[-3000:]}")
        elif r.rc != 0 and not truthy(r.step.get("continue-on-error", False)):
            problems.append(f"{r.label}: exit {r.rc}\n{r.output[-3000:]}")
    gates = [r for r in runs if _is_gate(r.run)]
    if not gates or any(g.rc is None for g in gates):
        problems.append(f"{job_tag}: its gate step did not run")
    return problems


def test_template_runs_on_this_host(workflow, repo_root, build_dir, tmp_path):
    started = time.monotonic()
    runners, merges = runner_and_merge_jobs(workflow)
    runner_job = next((j for j in runners if {row_label(r) for r in matrix_rows(j, workflow["jobs"][j])} >= set(ROWS)),
                      None)
    assert runner_job, f"no runner job has the rows {ROWS}"
    rows = {row_label(r): r for r in matrix_rows(runner_job, workflow["jobs"][runner_job])}

    # The runner's Python: a fresh venv that sees this machine's torch, as a runner's own torch.
    venv = tmp_path / "runner-venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    if subprocess.run([str(venv / "bin" / "python3"), "-m", "pip", "--version"], capture_output=True).returncode:
        subprocess.run([str(venv / "bin" / "python3"), "-m", "ensurepip", "-q"], check=True)
    fake = tmp_path / "no-system-installs"
    fake.mkdir()
    for tool in ("sudo", "apt-get", "apt", "brew"):
        (fake / tool).write_text(_FAKE_TOOL)
        (fake / tool).chmod(0o755)
    # The merge job's runner has no crossdev installed: the base interpreter, behind no venv.
    plain = tmp_path / "plain-python"
    plain.mkdir()
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    (plain / "python3").symlink_to(base)

    env = _host_env()
    own = _prepare_own_build(repo_root, build_dir)
    env.update(_skbuild_env(repo_root, build_dir, own))
    env.update({"PIP_NO_DEPS": "1", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
                "CROSSDEV_RUN_ARGS": RUN_ARGS})
    emulator = Emulator(workflow, repo_root, tmp_path, env)

    error, results = None, {}
    try:
        for name in ROWS:
            results[name] = emulator.run_job(runner_job, rows[name], [fake, venv / "bin"])
        merge_ws, summary, merge_runs = emulator.run_job(merges[0], {}, [fake, plain])
    except TemplateError as e:
        error = str(e)
    if error:
        pytest.fail(error, pytrace=False)
    elapsed = time.monotonic() - started
    transcript = "\n".join([*(f"{runner_job}[{n}]:\n{_transcript(results[n][2])}" for n in ROWS),
                            f"{merges[0]}:\n{_transcript(merge_runs)}", f"total {elapsed:.1f}s"])
    print(transcript)

    problems = []
    for name in ROWS:
        problems += _check_steps(name, results[name][2])
    problems += _check_steps("merge", merge_runs)
    assert not problems, "\n\n".join(problems) + "\n\n" + transcript

    # The install ran the template's pip install into the fresh venv, reusing the build tree.
    for name in ROWS:
        installs = [r for r in results[name][2] if _is_install(r.run)]
        assert installs and all(r.rc == 0 for r in installs), transcript
        for r in installs:
            assert r.seconds < INSTALL_LIMIT_S, \
                f"{r.label} took {r.seconds:.0f}s: the wheel build should reuse {own} and compile nothing\n" \
                f"{r.output[-3000:]}"
    assert (venv / "bin" / "crossdev").exists(), "the install put no `crossdev` command into the runner's venv"

    # Each row's bundle: written by the freshly installed crossdev (its built-in catalog), the slice
    # asked for, with the row's simulation, and uploaded.
    for name in ROWS:
        workspace, _, _ = results[name]
        bundles = sorted((workspace / "out").glob("bundle-*.json"))
        assert len(bundles) == 1, f"{name}: expected one bundle in out/, found {bundles}\n{transcript}"
        bundle = json.loads(bundles[0].read_text())
        assert bundle["schema"] == "crossdev.bundle"
        cases = bundle["cases"]
        assert cases and all(fnmatch.fnmatchcase(c["row_id"], "presets.*") for c in cases), \
            f"{name}: the run ignored CROSSDEV_RUN_ARGS={RUN_ARGS!r}"
        assert all(str(c["file"]).startswith(str(venv)) for c in cases), \
            f"{name}: the cases were not read from the freshly installed package's matrices: {cases[0]['file']}"
        # Beside a real accelerator a run does not simulate and records no spec (conformance/runner/run_context.cpp).
        simulated = "" if REAL_ACCELERATOR else rows[name]["simulate"]
        assert bundle["execution_target"]["simulate_spec"] == simulated, bundle["execution_target"]
        assert bundles[0].name == f"bundle-{name}.json", f"{name}: the bundle is named {bundles[0].name}"

    # The merge job merged both rows' bundles, rendered the report and wrote the step summary.
    merged = json.loads((merge_ws / "merged.json").read_text())
    sources = sorted(pathlib.Path(b["source"]).name for b in merged["bundles"])
    assert sources == sorted(f"bundle-{n}.json" for n in ROWS), sources
    assert (merge_ws / "site" / "index.html").exists(), transcript
    assert "crossdev" in summary.read_text(), "the report step wrote nothing to $GITHUB_STEP_SUMMARY"
    assert "crossdev-report" in emulator.uploaded
