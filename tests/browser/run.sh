#!/usr/bin/env bash
# The replay report end to end: electsim writes the flagship run's page and trace, and headless
# Chromium (driven by playwright-core, with every network request refused) must show the run as
# the trace has it. Needs node, npm and /usr/bin/chromium (scripts/setup installs them): without
# them the test fails, it never skips.
# Usage: tests/browser/run.sh ELECTSIM OUTDIR    (OUTDIR gets the page, trace and a screenshot)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
electsim=$1
out=$2

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "browser test: $tool is missing; scripts/setup installs it" >&2
    exit 1
  fi
done
if [[ ! -x /usr/bin/chromium ]]; then
  echo "browser test: /usr/bin/chromium is missing; scripts/setup installs it" >&2
  exit 1
fi
if [[ ! -d "$here/node_modules/playwright-core" ]]; then
  # The version pinned in package-lock.json; from npm's cache when it is there.
  npm ci --prefix "$here" --prefer-offline --no-audit --no-fund >&2
fi

mkdir -p "$out"
scenario="$source_dir/scenarios/lease-gc-pause-fence.json"
"$electsim" run "$scenario" --html "$out/flagship.html" --trace "$out/flagship.jsonl" \
  >"$out/flagship.txt"
node "$here/replay.test.mjs" "$out/flagship.html" "$out/flagship.jsonl" "$out/screenshot.png" \
  "$scenario"
