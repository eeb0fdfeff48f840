#!/usr/bin/env bash
# The replay report end to end: electsim writes the flagship run's page and trace, and headless
# Chromium (driven by python3-selenium through chromedriver, the network out of reach) must show
# the run as the trace has it. Needs /usr/bin/python3 with selenium, /usr/bin/chromium and
# /usr/bin/chromedriver (scripts/setup installs them): without them the test fails, never skips.
# Usage: tests/browser/run.sh ELECTSIM OUTDIR    (OUTDIR gets the page, trace and a screenshot)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
electsim=$1
out=$2

# Debian's selenium is installed for Debian's own python3 only, whatever python3 PATH finds.
python=/usr/bin/python3
if [[ ! -x $python ]] || ! "$python" -c 'import selenium' >/dev/null 2>&1; then
  echo "browser test: $python with selenium is missing; scripts/setup installs python3-selenium" >&2
  exit 1
fi
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
  if [[ ! -x $tool ]]; then
    echo "browser test: $tool is missing; scripts/setup installs it" >&2
    exit 1
  fi
done

mkdir -p "$out"
scenario="$source_dir/scenarios/lease-gc-pause-fence.json"
"$electsim" run "$scenario" --html "$out/flagship.html" --trace "$out/flagship.jsonl" \
  >"$out/flagship.txt"
"$python" "$here/replay_test.py" "$out/flagship.html" "$out/flagship.jsonl" "$out/screenshot.png" \
  "$scenario"

# A server with a lane of its own gets a card on the page: the database, crashed from 10 s to 40 s.
# The scenario's expectations are about its leader's crash, so the run may well break them (exit
# 1); the page must be written all the same.
rm -f "$out/servers.html"
"$electsim" run "$source_dir/scenarios/db-flag-stuck-forever.json" --set faults.0.target=postgres \
  --html "$out/servers.html" >"$out/servers.txt" || [[ $? -eq 1 ]]
"$python" "$here/servers_test.py" "$out/servers.html"
