#!/usr/bin/env bash
# Runs every scenario (and each variant) with two electsim binaries built by different compilers
# and requires byte-identical traces: the determinism promise holds across standard libraries.
# Usage: tests/compare_compilers.sh BINARY_A BINARY_B
set -euo pipefail
a=$1
b=$2
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/a" "$work/b"
compared=0
failed=0
for scenario in scenarios/*.json; do
  name=$(basename "$scenario" .json)
  # Exit code 1 (a broken expectation) is fine here: only the traces are compared.
  "$a" run "$scenario" --all-variants --trace "$work/a/$name.jsonl" >/dev/null || [[ $? -eq 1 ]]
  "$b" run "$scenario" --all-variants --trace "$work/b/$name.jsonl" >/dev/null || [[ $? -eq 1 ]]
done
for ta in "$work"/a/*.jsonl; do
  tb="$work/b/$(basename "$ta")"
  if cmp -s "$ta" "$tb"; then
    compared=$((compared + 1))
  else
    echo "traces differ between compilers: $(basename "$ta")"
    failed=$((failed + 1))
  fi
done
echo "compare_compilers: $compared passed, $failed failed"
[[ $failed -eq 0 && $compared -gt 0 ]]
