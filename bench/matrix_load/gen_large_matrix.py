#!/usr/bin/env python3
"""Writes a large, valid matrix for loader measurements (issue 11: 280k rows, ~50 MB).

    python3 bench/matrix_load/gen_large_matrix.py OUT.yaml [--rows 280000]

Rows are matrices/context.yaml's rows repeated with unique ids and a longer intent, in the
project's flow style, so every row passes the context suite's validation.
"""
import argparse
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=280_000)
    args = ap.parse_args()
    template = [line for line in (ROOT / "matrices/context.yaml").read_text().splitlines() if line.lstrip().startswith("- {id: ")]
    pad = ""
    with open(args.out, "w") as f:
        f.write("suite: context\ndescription: generated for loader measurements\ncases:\n")
        for i in range(args.rows):
            line = template[i % len(template)]
            line = re.sub(r"\{id: ([^,]+),", lambda m: "{id: %s.%d," % (m.group(1), i), line, count=1)
            line = line.replace('intent: "', f'intent: "{pad}', 1)
            f.write(line + "\n")


if __name__ == "__main__":
    main()
