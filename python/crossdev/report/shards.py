"""The shards of one run (`crossdev run --shard I/N`, recorded as `execution_target.shard`) folded back
into one runner, so that a report of the N merged shard bundles is the report of one unsharded run
(docs/opinfo.md, "Sharding"): one column per device kind, not one per shard.

Bundles fold when they are the same run split N ways: the same runner label, git commit, simulate spec
and N, each shard index once. A second bundle of a shard index already seen (a rerun) starts a new
runner, which the report labels `<label>#2` as any runner seen twice.

Stale expectation entries: a shard lists the entries that match none of its cases
(`shard_unmatched_expectations`, under the engine's rule, conformance/suites/suite_expectations.h); an
entry is stale when every one of the N shards lists it (no shard matched it), and the folded runner then
holds it in `stale_expectations`, as the unsharded run would. Fewer than N shards judge nothing."""
from typing import Dict, List, Tuple

from crossdev.report.bundle import Bundle


def _shard(bundle: Bundle) -> Tuple[str, str] | None:
    spec = bundle.target.get("shard")
    if not isinstance(spec, str) or spec.count("/") != 1:
        return None
    index, count = spec.split("/")
    return index, count


def fold_shards(bundles: List[Bundle], label_of) -> List[Bundle]:
    """`bundles` with the shards of each run folded into its first shard's place (cases concatenated
    in input order; the per-bundle summaries, which no longer hold, dropped)."""
    out: List[Bundle] = []
    open_runs: Dict[tuple, Tuple[Bundle, set, dict]] = {}
    folded: List[Tuple[Bundle, set, dict, str]] = []
    for bundle in bundles:
        shard = _shard(bundle)
        if shard is None:
            out.append(bundle)
            continue
        index, count = shard
        key = (label_of(bundle), bundle.target.get("git_commit"), bundle.target.get("simulate_spec"), count)
        run = open_runs.get(key)
        if run is None or index in run[1]:
            doc = {k: v for k, v in bundle.doc.items()
                   if k not in ("summary", "summary_by_suite", "shard_unmatched_expectations")}
            doc["cases"] = list(bundle.cases)
            doc["execution_target"] = dict(bundle.target, shard=f"{index}/{count}")
            head = Bundle(path=bundle.path, doc=doc, file=bundle.file, source=bundle.source)
            open_runs[key] = (head, {index}, _unmatched(bundle))
            folded.append((*open_runs[key], count))
            out.append(head)
            continue
        head, seen, unmatched = run
        seen.add(index)
        in_this_shard = _unmatched(bundle)
        for where in [w for w in unmatched if w not in in_this_shard]:
            del unmatched[where]  # this shard matched it
        head.cases.extend(bundle.cases)
        head.source = f"{head.source} + {bundle.source}"
        head.target["shard"] = ",".join(sorted(seen, key=int)) + f"/{count}"
    for head, seen, unmatched, count in folded:
        if len(seen) == int(count) and unmatched:  # every shard of the run, none matched these
            head.doc["stale_expectations"] = list(unmatched.values())
    return out


def _unmatched(bundle: Bundle) -> Dict[str, dict]:
    """The bundle's `shard_unmatched_expectations` by `where` (in the bundle's order)."""
    return {e["where"]: e for e in bundle.doc.get("shard_unmatched_expectations") or []}
