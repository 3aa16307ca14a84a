"""The cases one bundle did not pass, and what another bundle of the same sweep says about each (docs/opinfo.md,
"The shared H200 bundle, case by case"): a markdown table naming the rule that decided each case now.

    python bench/python/verdict_table.py OLD_BUNDLE[.gz] NEW_BUNDLE[.gz] [--kind cuda]
"""
import argparse
import gzip
import json
import sys

# (what decided, does it apply to the new case): the first that applies names the rule
RULES = (
    ("declared gap (op_db: unsupported on the kind)", lambda c, d, m: bool(d.get("declared_gap"))),
    ("op_db skip for test_compare_cpu", lambda c, d, m: c["status"] == "skip" and "op_db skips" in c.get("message", "")),
    ("op_db xfail for test_compare_cpu", lambda c, d, m: c["status"] == "xfail" and "op_db expects" in c.get("message", "")),
    ("op_db xfail not taken (a rule of crossdev's explains it)", lambda c, d, m: bool(d.get("op_db_xfail_not_taken"))),
    ("random op, by its law (random_laws.py)", lambda c, d, m: bool(d.get("random_ops"))),
    ("open outputs (open_contract.OPEN_OUTPUTS)", lambda c, d, m: bool(d.get("open_outputs"))),
    ("output_process_fn_grad", lambda c, d, m: bool(d.get("output_process_fn_grad")) and not m.get("failing_samples")),
    ("float64 rule", lambda c, d, m: bool(m.get("float64_rule_passes"))),
    ("TF32 off (parity mode)", lambda c, d, m: "TF32 off for the case" in str(d.get("numerics", ""))
     and any(w in c["id"] for w in ("conv", "matmul", "linear"))),
    ("samples made on the device", lambda c, d, m: True),
)


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return {c["id"]: c for c in json.load(f)["cases"]}


def decided_by(case) -> str:
    details, metrics = case.get("details") or {}, case.get("metrics") or {}
    return next(name for name, applies in RULES if applies(case, details, metrics))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--kind", default="cuda")
    args = parser.parse_args(argv)
    old, new = load(args.old), load(args.new)
    rows = []
    for cid, case in old.items():
        if case["status"] in ("pass", "skip", "xfail") or f"/{args.kind}/" not in cid:
            continue
        now = new.get(cid)
        if now is None:
            rows.append((cid, case["status"], "not in the new bundle", ""))
            continue
        rule = decided_by(now) if now["status"] in ("pass", "skip", "xfail") else "still " + now["status"]
        rows.append((cid, case["status"], now["status"], rule if now["status"] != "fail" else
                     f"{rule}: {now.get('message', '')[:160]}"))
    print("| case | was | now | decided by |\n|---|---|---|---|")
    for cid, was, now, rule in rows:
        print(f"| `{cid.split('/', 1)[1]}` | {was} | {now} | {rule.replace('|', '/')} |")
    print(f"\n{len(rows)} cases; now: " + ", ".join(f"{s} {sum(r[2] == s for r in rows)}"
                                                  for s in dict.fromkeys(r[2] for r in rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
