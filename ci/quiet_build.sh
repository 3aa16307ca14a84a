#!/usr/bin/env bash
# `cmake --build DIR ARGS...` as make build runs it. On a terminal, as it is (ninja keeps its progress on one
# line). Elsewhere (a CI log, a pipe) ninja's "[n/N] ..." progress lines are counted, not printed, and every
# other line is kept: the compiler's warnings and errors, a failed command and its output. A closing line says
# how many steps ran and how long they took. Exit: cmake's own.
set -uo pipefail
dir="$1"; shift
if [[ -t 1 ]]; then
  exec cmake --build "$dir" "$@"
fi
SECONDS=0
count="$(mktemp)"
trap 'rm -f "$count"' EXIT
cmake --build "$dir" "$@" 2>&1 | {
  steps=0
  while IFS= read -r line; do
    if [[ "$line" =~ ^\[[0-9]+/[0-9]+\]\  ]]; then
      steps=$((steps + 1))
    else
      printf '%s\n' "$line"
    fi
  done
  echo "$steps" > "$count"
}
rc=${PIPESTATUS[0]}
echo "build: $dir $*: $(cat "$count") step(s) in ${SECONDS} s$( ((rc)) && echo ", FAILED (exit $rc)")"
exit "$rc"
