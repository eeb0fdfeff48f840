#!/usr/bin/env bash
# The playground end to end: electsim writes the page of the shipped scenarios, and headless
# Chromium (python3-selenium through chromedriver, the network out of reach) plays it
# (tests/browser/playground_test.py). Needs what tests/browser/run.sh needs, and an electsim built
# with the playground's module.
# Usage: tests/browser/playground.sh ELECTSIM OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
electsim=$1
out=$2
python=/usr/bin/python3
if [[ ! -x $python ]] || ! "$python" -c 'import selenium' >/dev/null 2>&1; then
  echo "playground test: $python with selenium is missing; scripts/setup installs python3-selenium" >&2
  exit 1
fi
mkdir -p "$out"
"$electsim" play "$source_dir"/scenarios/*.json -o "$out/playground.html" 2>/dev/null
"$python" "$here/playground_test.py" "$out/playground.html" "$electsim" "$source_dir/scenarios" "$out"
