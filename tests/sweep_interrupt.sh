#!/usr/bin/env bash
# Ctrl-C (SIGINT) or SIGTERM (what Slurm sends at a job's time limit) during a sweep stops it
# cleanly: exit code 130, the runs that finished are written whole (the JSON says the sweep is not
# complete), and no temporary file is left behind.
# Usage: tests/sweep_interrupt.sh ELECTSIM SCENARIO [INT|TERM]
set -euo pipefail
electsim=$1
scenario=$2
signal=${3:-INT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Far more runs than can finish before the signal; the sweep runs in its own process group so the
# signal reaches it as a terminal's Ctrl-C would.
set +e
setsid "$electsim" sweep "$scenario" --grid protocol.ttl=1s..8s:1s --seeds 1000000 --jobs 2 \
  --quiet -o "$work/out" >"$work/stdout" 2>"$work/stderr" &
pid=$!
sleep 2
kill -"$signal" "$pid"
wait "$pid"
code=$?
set -e

fail() { echo "sweep_interrupt: $*" >&2; cat "$work/stderr" >&2; exit 1; }
[[ $code -eq 130 ]] || fail "expected exit code 130 after SIG$signal, found $code"
[[ -s "$work/out.csv" && -s "$work/out.json" ]] || fail "the finished runs were not written"
grep -q '"complete": false' "$work/out.json" || fail "the JSON does not say the sweep is incomplete"
grep -q 'interrupted' "$work/stderr" || fail "stderr does not say the sweep was interrupted"
if ls "$work"/*.tmp >/dev/null 2>&1; then fail "a temporary file was left behind"; fi
done_runs=$(grep -o '"runs_done": [0-9]*' "$work/out.json" | grep -o '[0-9]*$')
[[ $done_runs -gt 0 && $done_runs -lt 8000000 ]] || fail "expected some runs done, found $done_runs"
echo "sweep_interrupt: SIG$signal stopped it with 130 after $done_runs runs, outputs whole"
