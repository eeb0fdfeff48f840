#!/usr/bin/env bash
# Runs every scenario (and each variant), the extra runs listed below, the search's
# counterexamples and a few searches with two electsim binaries built by different compilers,
# and requires byte-identical traces, reports and shrunk files: the determinism promise holds
# across standard libraries.
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
# Runs beyond the files as written: a scenario name and its --set overrides. The replicated
# store's members run Raft with a log and client failover; 3 and 5 members, and disks whose
# fsyncs take time (sends held until they finish), exercise all of it. The database server's
# commits wait for its disk too, and its keepalive probes cross a lossy network. Consul's
# lock-delay is judged on the replicated store's leader before it proposes. The kubernetes
# runs read records written on other machines' wall clocks, skewed and drifting, and a
# replicated store.
extra_runs=(
  "lease-leader-crash store.members=3"
  "lease-leader-crash store.members=5"
  "lease-leader-crash store.members=3 disk.fsync=5ms"
  "postgres-row-lock-pause-fencing disk.fsync=5ms"
  "postgres-row-lock-pause-fencing protocol.lock=advisory postgres.tcp_keepalives_idle=1s postgres.tcp_keepalives_interval=1s postgres.tcp_keepalives_count=1 network.loss=0.2"
  "sweeps/raft-figure-16 protocol.election_timeout_max=155ms"
  "sweeps/raft-figure-16 protocol.timer_rule=etcd protocol.tick=5ms"
  "sweeps/etcd-ticks store.ticks=true"
  "sweeps/client-go-failover protocol.keepalive_phase=random"
  "consul-lock-delay store.members=3"
  "consul-lock-delay store.members=3 protocol.behavior=delete protocol.fencing_token=modify_index"
  "leader-crash protocol.name=kubernetes"
  "kubernetes-clock-jump store.members=3 disk.fsync=5ms"
  "kubernetes-mixed-durations protocol.expiry_judged_by=renew_time clocks.nodes.1.offset=5s clocks.default.drift_ppm=200"
)
for run in "${extra_runs[@]}"; do
  read -r name overrides <<<"$run"
  sets=()
  label=${name//\//-}
  for o in $overrides; do
    sets+=(--set "$o")
    label+="+$o"
  done
  "$a" run "scenarios/$name.json" "${sets[@]}" --trace "$work/a/$label.jsonl" >/dev/null || [[ $? -eq 1 ]]
  "$b" run "scenarios/$name.json" "${sets[@]}" --trace "$work/b/$label.jsonl" >/dev/null || [[ $? -eq 1 ]]
done
# The search's counterexamples, and searches themselves: the same report and the same shrunk
# files from both binaries (a Bully search, and one whose nemesis reaches a replicated store's
# members and Redis masters).
for scenario in scenarios/found/*.json; do
  name=found-$(basename "$scenario" .json)
  "$a" run "$scenario" --trace "$work/a/$name.jsonl" >/dev/null || [[ $? -eq 1 ]]
  "$b" run "$scenario" --trace "$work/b/$name.jsonl" >/dev/null || [[ $? -eq 1 ]]
done
searches=(
  "partition-minority-leader --protocol bully --runs 200"
  "store-partition --runs 100"
  "leader-crash --protocol redlock --runs 300"
)
for search in "${searches[@]}"; do
  read -r name options <<<"$search"
  label=search-$name-$(echo "$options" | tr -c 'a-z0-9' '_')
  mkdir -p "$work/a/$label" "$work/b/$label"
  # shellcheck disable=SC2086 # the options are words
  "$a" search "scenarios/$name.json" $options -q --jobs 2 --save "$work/a/$label" \
    >"$work/a/$label.jsonl" || [[ $? -eq 1 ]]
  # shellcheck disable=SC2086
  "$b" search "scenarios/$name.json" $options -q --jobs 2 --save "$work/b/$label" \
    >"$work/b/$label.jsonl" || [[ $? -eq 1 ]]
  sed -i '/^wrote /d' "$work/a/$label.jsonl" "$work/b/$label.jsonl"
  if diff -r "$work/a/$label" "$work/b/$label" >/dev/null 2>&1; then
    compared=$((compared + 1))
  else
    echo "search files differ between compilers: $label"
    failed=$((failed + 1))
  fi
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
