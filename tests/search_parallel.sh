#!/usr/bin/env bash
# A search split into shards run by GNU parallel, as on a batch cluster, must merge into exactly
# the single-machine search: the same report, the same exit code and the same saved files
# (docs/search.md shows the same with a Slurm job array).
# Usage: tests/search_parallel.sh ELECTSIM SCENARIO
set -euo pipefail
electsim=$1
scenario=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

search=(search "$scenario" --protocol bully --runs 90 -q)

status=0
"$electsim" "${search[@]}" --jobs 2 --save "$work/whole" >"$work/whole.txt" || status=$?
parallel --halt now,fail=1 "$electsim" "${search[@]}" --jobs 1 --shard {}/4 -o "$work/part-{}" \
  ::: 1 2 3 4 >/dev/null
merged_status=0
"$electsim" merge "$work"/part-*.part --save "$work/merged" >"$work/merged.txt" || merged_status=$?

if [[ $status -ne 1 || $merged_status -ne $status ]]; then
  echo "search_parallel: the search exits $status and the merge $merged_status (expected 1, a property broke)" >&2
  exit 1
fi
if ! diff <(grep -v '^wrote ' "$work/whole.txt") <(grep -v '^wrote ' "$work/merged.txt") >&2; then
  echo "search_parallel: the merged report differs from the single-machine report" >&2
  exit 1
fi
if ! diff -r "$work/whole" "$work/merged" >&2; then
  echo "search_parallel: the merged files differ from the single-machine files" >&2
  exit 1
fi
files=$(ls "$work/merged" | wc -l)
if [[ $files -lt 2 ]]; then
  echo "search_parallel: expected at least two findings saved, found $files" >&2
  exit 1
fi
echo "search_parallel: 4 shards under GNU parallel merged into the single-machine search ($files files)"
