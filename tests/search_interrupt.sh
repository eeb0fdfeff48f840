#!/usr/bin/env bash
# Ctrl-C (SIGINT) during a search stops it cleanly: exit code 130, the report covers the runs that
# finished before it (a prefix of the seeds), and it says it was interrupted. --time stops the
# same way but shrinks what it found and exits 0 or 1.
# Usage: tests/search_interrupt.sh ELECTSIM SCENARIO
set -euo pipefail
electsim=$1
scenario=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

set +e
setsid "$electsim" search "$scenario" --protocol bully --runs 100000000 --jobs 2 --quiet \
  >"$work/stdout" 2>"$work/stderr" &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
code=$?
set -e
fail() { echo "search_interrupt: $*" >&2; cat "$work/stdout" "$work/stderr" >&2; exit 1; }
[[ $code -eq 130 ]] || fail "expected exit code 130 after SIGINT, found $code"
grep -q 'interrupted' "$work/stderr" || fail "stderr does not say the search was interrupted"
grep -qE '^search .*: [0-9]+ runs of 100000000 \(interrupted\)' "$work/stdout" ||
  fail "the report does not give the runs that finished"
grep -q 'stale_write   broken in' "$work/stdout" || fail "the findings so far are not reported"

set +e
"$electsim" search "$scenario" --protocol bully --time 1s --jobs 2 --quiet >"$work/timed" 2>&1
code=$?
set -e
[[ $code -eq 1 ]] || fail "expected exit code 1 from a timed search that found violations, found $code"
grep -q 'the time budget ran out' "$work/timed" || fail "the timed search does not say why it stopped"
grep -q '^shrunk' "$work/timed" || fail "the timed search did not shrink its findings"
echo "search_interrupt: Ctrl-C gives 130 and the prefix; --time shrinks and exits 1"
