#!/usr/bin/env bash
# A sweep split into shards run by GNU parallel, as on a batch cluster, must merge into exactly
# the single-machine result, its plot included (docs/sweeps.md shows the same with a Slurm job
# array). The scenario's own sweep section chooses the plot's metrics in both.
# Usage: tests/sweep_parallel.sh ELECTSIM SCENARIO
set -euo pipefail
electsim=$1
scenario=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sweep=(sweep "$scenario" --grid protocol.ttl=1s..4s:1s --grid protocol.fencing=true,false
       --seeds 1..6 --quiet)

"$electsim" "${sweep[@]}" --jobs 2 -o "$work/whole" --runs --plot "$work/whole.svg" >/dev/null
parallel --halt now,fail=1 "$electsim" "${sweep[@]}" --jobs 1 --shard {}/4 -o "$work/part-{}" \
  ::: 1 2 3 4 >/dev/null
"$electsim" merge "$work"/part-*.part -o "$work/merged" --runs --plot "$work/merged.svg" -q \
  >/dev/null

for ext in csv json runs.csv svg; do
  if ! cmp -s "$work/whole.$ext" "$work/merged.$ext"; then
    echo "sweep_parallel: merged $ext differs from the single-machine $ext" >&2
    diff "$work/whole.$ext" "$work/merged.$ext" | head -20 >&2
    exit 1
  fi
done
rows=$(($(wc -l <"$work/whole.runs.csv") - 1))
if [[ $rows -ne 48 ]]; then
  echo "sweep_parallel: expected 48 runs (4 TTLs x 2 fencing x 6 seeds), found $rows" >&2
  exit 1
fi
echo "sweep_parallel: 4 shards under GNU parallel merged into the single-machine result ($rows runs)"
