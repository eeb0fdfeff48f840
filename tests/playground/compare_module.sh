#!/usr/bin/env bash
# Every shipped scenario (each variant, scenarios/found included) through the native electsim and
# through the playground's WebAssembly module under Node: the summaries, trace hashes included,
# must be byte-identical. Native or WebAssembly, the same scenario and seed are the same run.
# Usage: tests/playground/compare_module.sh ELECTSIM MODULE
set -euo pipefail
electsim=$1
module=$2
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=()
for scenario in scenarios/*.json scenarios/found/*.json; do
  # The native runs: the base, then each variant in name order, as --all-variants runs them.
  "$electsim" run "$scenario" --all-variants >>"$work/native.txt" 2>/dev/null || [[ $? -eq 1 ]]
  echo >>"$work/native.txt"
  runs+=("$scenario")
  while IFS= read -r variant; do
    [[ -n "$variant" ]] && runs+=("$scenario#$variant")
  done < <(node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    for (const v of Object.keys(d.variants || {}).sort()) console.log(v);' "$scenario")
  runs+=("--separator--")
done
# One Node process for every run; a separator where the native side has a blank line between
# files.
args=()
for r in "${runs[@]}"; do
  if [[ "$r" == "--separator--" ]]; then
    node tests/playground/run_module.js "$module" "${args[@]}" >>"$work/module.txt"
    echo >>"$work/module.txt"
    args=()
  else
    args+=("$r")
  fi
done
if ! cmp -s "$work/native.txt" "$work/module.txt"; then
  diff "$work/native.txt" "$work/module.txt" | head -40
  echo "compare_module: the WebAssembly module's summaries differ from the native build's"
  exit 1
fi
echo "compare_module: $(grep -c '^trace hash' "$work/native.txt") runs, byte-identical"
