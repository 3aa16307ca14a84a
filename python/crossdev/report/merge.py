"""Merging bundles from several runners into one report model.

This is the in-memory model that report, gate and the views read; `crossdev merge` (crossdev/merge.py)
is the command that writes several bundles into one file. A bad bundle never stops the merge: it
becomes an InputError that every output shows, and the good bundles are merged as usual.
"""
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from crossdev.report.bundle import Bundle, BundleError, load_bundles
from crossdev.report.cross_machine import CrossMachine, compare_runners
from crossdev.report.schema import GATING_STATUSES
from crossdev.report.shards import fold_shards


@dataclass
class InputError:
    path: str
    message: str  # the full BundleError text, every line prefixed with the path


@dataclass
class RunnerCounts:
    """Status counts for one runner, with passes split by where they ran.

    A simulated pass is never a real-device pass: `real_pass` counts only execution == real.
    """

    by_status: Counter = field(default_factory=Counter)
    real_pass: int = 0
    simulated_pass: int = 0
    total: int = 0

    def add(self, case: Dict) -> None:
        self.total += 1
        self.by_status[case["status"]] += 1
        if case["status"] == "pass":
            if case["execution"] == "real":
                self.real_pass += 1
            else:
                self.simulated_pass += 1

    @property
    def gating(self) -> int:
        return sum(self.by_status[s] for s in GATING_STATUSES)


@dataclass
class Report:
    runners: List[Bundle]
    errors: List[InputError]
    history: List[Bundle] = field(default_factory=list)  # earlier bundles, for trends
    # Runners compared pairwise on the same serialised samples (cross_machine opinfo rows)
    cross_machine: CrossMachine = field(default_factory=CrossMachine)
    # bench/python/gate_power_bench.py's JSON (`crossdev report --gate-power FILE`): what the gate catches
    gate_power: Optional[Dict] = None
    # A --gate-power file that could not be read: exit 2 and shown in its section, never in the conformance verdict
    gate_power_error: Optional[InputError] = None
    # `crossdev report --baseline FILE`: bench-gate's comparison of every runner's benchmarks with FILE's
    baseline: Optional["BaselineComparison"] = None  # noqa: F821 (crossdev.report.bench_baseline)
    # A --baseline file that could not be read or compared: exit 2, shown in the baseline section
    baseline_error: Optional[InputError] = None

    def cases(self) -> Iterable:
        """(runner, case) for every case of every runner, in input order."""
        for runner in self.runners:
            for case in runner.cases:
                yield runner, case

    def counts(self, runner: Bundle) -> RunnerCounts:
        counts = RunnerCounts()
        for case in runner.cases:
            counts.add(case)
        return counts

    def totals(self) -> RunnerCounts:
        counts = RunnerCounts()
        for _, case in self.cases():
            counts.add(case)
        return counts

    def suites(self) -> List[str]:
        return sorted({case["suite"] for _, case in self.cases()})

    def gating_cases(self) -> List:
        return [(r, c) for r, c in self.cases() if c["status"] in GATING_STATUSES]


def runner_label(bundle: Bundle) -> str:
    """"cuda@gpu-box-3", with "+sim" when the run simulated device kinds."""
    target = bundle.target
    label = f"{target.get('device_kind') or 'unknown'}@{target.get('host') or 'unknown-host'}"
    return label + "+sim" if bundle.simulated else label


def _assign_labels(bundles: List[Bundle]) -> None:
    seen: Counter = Counter()
    for bundle in bundles:
        base = runner_label(bundle)
        seen[base] += 1
        bundle.label = base if seen[base] == 1 else f"{base}#{seen[base]}"


def load_all(paths: Iterable[str]):
    """Loads every path; returns (good bundles, input errors) in input order. A bundle set (from
    `crossdev merge`) contributes each of its bundles, as if each had been named."""
    good, bad = [], []
    for path in paths:
        try:
            good.extend(load_bundles(path))
        except BundleError as e:
            bad.append(InputError(path=e.path, message=str(e)))
    return good, bad


GATE_POWER_MAX_BYTES = 64 << 20


def load_gate_power(path: str):
    """(the gate-power document, None) or (None, InputError): a JSON object with a `mutants` list of objects
    (bench/python/gate_power_bench.py); the views read the rest of it defensively."""
    try:
        with open(path, "rb") as f:
            raw = f.read(GATE_POWER_MAX_BYTES + 1)
        if len(raw) > GATE_POWER_MAX_BYTES:
            raise ValueError(f"larger than {GATE_POWER_MAX_BYTES >> 20} MiB")
        doc = json.loads(raw.decode("utf-8"))
    except OSError as e:
        return None, InputError(path=path, message=f"{path}: gate-power file: cannot read it: {e.strerror or e}")
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None, InputError(path=path, message=f"{path}: gate-power file: not JSON: {e}")
    if not isinstance(doc, dict) or not isinstance(doc.get("mutants"), list) or \
            not all(isinstance(m, dict) for m in doc["mutants"]):
        return None, InputError(path=path, message=f"{path}: gate-power file: expected an object with a `mutants` "
                                                   "list of objects (bench/python/gate_power_bench.py's --out)")
    return doc, None


def merge(paths: Iterable[str], history_paths: Iterable[str] = (), gate_power_path: Optional[str] = None,
          baseline_path: Optional[str] = None) -> Report:
    runners, errors = load_all(paths)
    runners = fold_shards(runners, runner_label)  # a sharded run is one runner (crossdev run --shard)
    history, history_errors = load_all(history_paths)
    _assign_labels(runners)
    _assign_labels(history)
    pairs, pair_errors = compare_runners(runners)
    errors += [InputError(path=path, message=message if message.startswith(path) else f"{path}: {message}")
               for path, message in pair_errors]
    gate_power, gate_power_error = load_gate_power(str(Path(gate_power_path))) if gate_power_path else (None, None)
    baseline, baseline_error = None, None
    if baseline_path:
        from crossdev.report.bench_baseline import compare_with_baseline  # imports bench_gate only when asked
        baseline, message = compare_with_baseline(runners, str(baseline_path))
        baseline_error = InputError(path=str(baseline_path), message=message) if message else None
    return Report(runners=runners, errors=errors + history_errors, history=history, cross_machine=pairs,
                  gate_power=gate_power, gate_power_error=gate_power_error, baseline=baseline,
                  baseline_error=baseline_error)

