#!/usr/bin/env bash
# Hostile and careless input, table-driven: every case runs the real electsim binary and must end
# with the expected exit code and a message naming what was wrong; none may crash, hang (each
# case has a time limit), leave a temporary file behind or print success with its output cut.
# Classes: overflow, nesting, size, paths, numbers on the command line, outputs, signals.
# Usage: tests/hostile_cli.sh ELECTSIM SOURCE_DIR
set -uo pipefail
electsim=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flagship="$source_dir/scenarios/lease-gc-pause-fence.json"
sweep_file="$source_dir/scenarios/sweeps/ttl-vs-drift.json"
passed=0
failed=0
# An AddressSanitizer build runs several times slower and reserves terabytes of address space for
# its shadow memory: time limits are scaled, and address-space limits (ulimit -v) cannot apply.
# The binary names ASan's entry point whether the runtime is linked in (clang++) or shared (g++).
sanitized=false
if grep -qa __asan_init "$electsim"; then sanitized=true; fi
slow=1
if $sanitized; then slow=8; fi

# A copy of the flagship with one change made by a Python expression on `d` (the document).
variant_of() {  # NAME EXPRESSION
  /usr/bin/python3 - "$flagship" "$work/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}

# expect CODE 'MESSAGE' -- COMMAND...: the command exits CODE within 60 s and what it prints (stderr,
# or stdout for a success) contains MESSAGE (a fixed string).
expect() {
  local code=$1 message=$2
  shift 3
  local out="$work/out" err="$work/err"
  timeout $((60 * slow)) "$@" >"$out" 2>"$err" </dev/null
  local got=$?
  # grep reads the files itself: `cat | grep -q` would fail under pipefail whenever grep's early
  # exit cut cat off with SIGPIPE.
  if [[ $got -eq $code ]] && grep -qF -- "$message" "$err" "$out"; then
    passed=$((passed + 1))
    echo "ok - exit $code, \"$message\": ${*:2}"
  else
    failed=$((failed + 1))
    echo "not ok - expected exit $code and \"$message\", found exit $got: $*"
    sed 's/^/    /' "$err" | head -5
  fi
}

cd "$work" || exit 1

# ---- Overflow: numbers near the limits of 64-bit nanoseconds are refused with the limit.
variant_of ttl-huge 'd["protocol"]["ttl"] = "2562047h"'
expect 2 'at /protocol/ttl: expected a duration from 0 to "87600h"' -- "$electsim" run ttl-huge.json
variant_of ttl-max 'd["protocol"]["ttl"] = "9223372036854775807ns"'
expect 2 'the longest electsim accepts' -- "$electsim" validate ttl-max.json
variant_of ttl-overflow 'd["protocol"]["ttl"] = "99999999999999999999h"'
expect 2 'the longest duration electsim accepts is "87600h"' -- "$electsim" validate ttl-overflow.json
variant_of ttl-tiny 'd["protocol"]["ttl"] = "3ns"'
expect 2 'at /protocol/ttl: expected a duration of at least "1ms"' -- "$electsim" run ttl-tiny.json
variant_of step-huge 'd["clocks"] = {"default": {"steps": [{"at": "1s", "by": "-2562047h"}]}}'
expect 2 'at /clocks/default/steps/0/by' -- "$electsim" run step-huge.json
variant_of pause-huge 'd["faults"][0]["duration"] = "2562047h"'
expect 2 'at /faults/0/duration' -- "$electsim" run pause-huge.json
variant_of nodes-huge 'd["nodes"] = 18446744073709551616'
expect 2 'at /nodes' -- "$electsim" run nodes-huge.json
variant_of negative-unit 'd["protocol"]["ttl"] = -5'
expect 2 'at /protocol/ttl: expected a non-negative duration' -- "$electsim" run negative-unit.json
expect 2 'range 1s..87601h:1h: expected at most 10000 values' -- \
  "$electsim" sweep "$sweep_file" --grid protocol.ttl=1s..87601h:1h --seeds 1 -q
expect 2 'the limit on runs per sweep' -- \
  "$electsim" sweep "$sweep_file" --seeds 1..100000001 -q

# ---- Grids and fault lists: work in proportion to the input. A range is counted before any value
# is made, and stepped by index (a step added to the last value near the largest duration would
# overflow and never pass the end); a large fault list validates in linear time.
expect 2 'at /protocol/ttl' -- \
  "$electsim" sweep "$sweep_file" --grid protocol.ttl=0s..2562047h:1500000h --seeds 1 -q
expect 2 'range 1s..2562047h:1ns: expected at most 10000 values on an axis (the limit on grid values)' -- \
  "$electsim" sweep "$sweep_file" --grid protocol.ttl=1s..2562047h:1ns --seeds 1 -q
expect 2 'range 0..999999999999999:0.00000000000001: expected numbers that, written with the step'"'"'s 14 decimals, fit 64 bits' -- \
  "$electsim" sweep "$sweep_file" --grid protocol.ttl=0..999999999999999:0.00000000000001 --seeds 1 -q
expect 2 'the limit on runs per sweep' -- "$electsim" sweep "$sweep_file" --seeds 1 -q \
  --grid protocol.ttl=1s..10000s:1s --grid nodes=1..9999 --grid seed=1..9999 \
  --grid duration=1s..10000s:1s --grid network.latency=1ms..10000ms:1ms
variant_of many-faults '
d["faults"] = [{"at": f"{1 + i % 25}s", "kind": "pause", "target": i % 5, "duration": "1ms"}
               for i in range(100000)]
d["variants"] = {f"v{k}": {"set": {"seed": k}} for k in range(10)}'
# A bound on time: it holds the Release build to linear validation; a sanitized build, several
# times slower everywhere, would only measure the sanitizer.
if ! $sanitized; then
  expect 0 'many-faults.json: ok (lease, 5 nodes, 100000 faults, 10 variants)' -- \
    timeout 20 "$electsim" validate many-faults.json
fi

# ---- Nesting: deep JSON is an error with a position, not a stack overflow.
/usr/bin/python3 -c 'print("[" * 300000 + "]" * 300000)' >deep.json
expect 2 'nest deeper than 100 levels' -- "$electsim" run deep.json
expect 2 'nest deeper than 100 levels' -- "$electsim" validate deep.json
expect 2 'nest deeper than 100 levels' -- "$electsim" sweep deep.json --seeds 1 -q
{ echo '{"electsim_trace":1,"seed":1,"nodes":2,"duration_ns":10,"message_types":[]}'
  /usr/bin/python3 -c 'print("[" * 1000)'; } >deep.jsonl
expect 2 'line 2: not a trace line' -- "$electsim" check deep.jsonl

# ---- Size: endless or huge inputs are refused at the limit, before they are read whole.
expect 2 'larger than 64 MiB (the limit on a scenario file)' -- "$electsim" validate /dev/zero
expect 2 'line 1: a line longer than 65536 bytes' -- "$electsim" check /dev/zero
expect 2 'a line longer than 16 MiB (the limit on a line of a part)' -- \
  "$electsim" merge /dev/zero -o merged
# A search's part cut short, or with a count beyond its runs, is refused at its line.
"$electsim" search "$source_dir/scenarios/partition-minority-leader.json" --protocol bully \
  --runs 4 -q --shard 1/1 -o search-whole >/dev/null
head -n 1 search-whole.part >search-cut.part
expect 2 'search-cut.part: expected a search part'"'"'s header and counts' -- \
  "$electsim" merge search-cut.part
sed 's/"runs_done":4/"runs_done":99999999999999999999/' search-whole.part >search-huge.part
expect 2 'search-huge.part:2: expected "runs_done" to be a whole number from 0 to 4' -- \
  "$electsim" merge search-huge.part
variant_of many-variants 'd["variants"] = {f"v{i}": {"set": {}} for i in range(65)}'
expect 2 'at most 64 variants' -- "$electsim" validate many-variants.json

# ---- Paths: what cannot be read, and outputs that would destroy inputs or each other.
expect 2 'cannot open the scenario file: No such file or directory' -- "$electsim" run missing.json
expect 2 'it is a directory' -- "$electsim" validate "$work"
expect 2 'cannot read the trace: it is a directory' -- "$electsim" check "$work"
cp "$flagship" input.json
expect 2 'the output input.json is also an input' -- "$electsim" run input.json --trace input.json
expect 2 'two outputs name the same file' -- "$electsim" run input.json --svg x.svg --html ./x.svg
expect 2 'is also an input' -- "$electsim" sweep input.json --seeds 1 --plot input.json -q
expect 2 'electsim run: --trace no-such-dir/t.jsonl: cannot write no-such-dir/t.jsonl: No such file or directory; nothing was run' -- \
  "$electsim" run input.json --trace no-such-dir/t.jsonl
# Every output is checked before the run and written only when the whole run succeeds: a run
# that refuses one output at its end (--history needs a replicated store) writes none of them.
absent() {  # DESCRIPTION FILE...: none of the files exists
  local what=$1 left=()
  shift
  for f in "$@"; do [[ -e $f ]] && left+=("$f"); done
  if [[ ${#left[@]} -eq 0 ]]; then
    passed=$((passed + 1))
    echo "ok - $what"
  else
    failed=$((failed + 1))
    echo "not ok - $what: left ${left[*]}"
  fi
}
expect 2 'a history of operations needs a replicated store' -- "$electsim" run input.json \
  --trace all.jsonl --svg all.svg --html all.html --perfetto all.json --history all.hist
expect 2 'no output written (the run ended in an error)' -- "$electsim" run input.json \
  --trace all.jsonl --svg all.svg --html all.html --perfetto all.json --history all.hist
absent "a run refusing --history at its end writes no other output" \
  all.jsonl all.svg all.html all.json all.hist
mkdir -p a-folder
expect 2 'electsim run: --svg a-folder: cannot write a-folder: it is a directory; nothing was run' -- \
  "$electsim" run input.json --trace before.jsonl --svg a-folder
touch not-a-folder
expect 2 'electsim run: --perfetto not-a-folder/p.json: cannot write not-a-folder/p.json: Not a directory' -- \
  "$electsim" run input.json --perfetto not-a-folder/p.json
mkdir -p read-only && chmod a-w read-only
if [[ -w read-only ]]; then  # root writes anywhere: nothing to test
  passed=$((passed + 1))
  echo "ok - (skipped: a read-only folder is writable to this user)"
else
  expect 2 'electsim run: --trace read-only/t.jsonl: cannot write read-only/t.jsonl: Permission denied; nothing was run' -- \
    "$electsim" run input.json --trace read-only/t.jsonl
fi
chmod u+w read-only
# With --all-variants each variant's files get its name; those names must not clash either.
expect 2 'two outputs name the same file x-no-fencing.jsonl' -- "$electsim" run input.json \
  --all-variants --trace x.jsonl --svg x-no-fencing.jsonl
absent "a refused run writes nothing before it starts" before.jsonl x.jsonl x-no-fencing.jsonl
expect 0 'wrote ok-careless.jsonl' -- "$electsim" run input.json --all-variants --trace ok.jsonl
expect 1 'trace hash' -- "$electsim" check ok-careless.jsonl  # 1: the careless variant's split-brain

# Whatever electsim writes, `check` reads back: names and keys are bounded where they are read,
# so no trace line can pass the reader's limit.
variant_of long-key 'd["protocol"]["key"] = "k" * 70000'
expect 2 'long-key.json: at /protocol/key: expected a name or key of at most 1024 bytes (the limit on names and keys, which keeps every trace line within what `electsim check` reads), found a text of 70000 bytes' -- \
  "$electsim" validate long-key.json
expect 2 'at /protocol/key: expected a name or key of at most 1024 bytes' -- \
  "$electsim" run long-key.json --trace long-key.jsonl
variant_of long-name 'd["name"] = "n" * 70000'
expect 2 'long-name.json: at /name: expected a name or key of at most 1024 bytes' -- \
  "$electsim" validate long-name.json
variant_of long-variant 'd["variants"]["v" * 70000] = {"set": {}}'
expect 2 'at /variants: expected a name or key of at most 1024 bytes (the limit on names and keys, which keeps every trace line within what `electsim check` reads) as a variant'"'"'s name, found a text of 70000 bytes' -- \
  "$electsim" validate long-variant.json
expect 2 'at /protocol/key: expected a name or key of at most 1024 bytes' -- \
  "$electsim" run input.json --set "protocol.key=$(printf 'k%.0s' $(seq 1025))"
# The longest names allowed, each byte escaped sixfold, still make lines `check` reads.
variant_of longest 'd["name"] = "\x01" * 1024; d["protocol"]["key"] = "\x02" * 1024
d["variants"] = {"\x03" * 1024: {"set": {}}}'
expect 0 'trace hash' -- "$electsim" run longest.json --trace longest.jsonl \
  --variant "$(/usr/bin/python3 -c 'print("\x03" * 1024, end="")')"
expect 1 'trace hash' -- "$electsim" check longest.jsonl  # 1: the flagship's split-brain

mkfifo fifo.json
(cat "$flagship" >fifo.json &)
expect 0 'fifo.json: ok (lease' -- "$electsim" validate fifo.json

# ---- Numbers and lists on the command line, parsed as strictly as the file's.
expect 2 '--seed: expected a whole number from 0 to 18446744073709551615, found -1' -- \
  "$electsim" run --seed -1
expect 2 '--seed: expected a whole number' -- "$electsim" run --seed 0x10
expect 2 '--jobs: expected a whole number from 1 to 1024, found -1' -- \
  "$electsim" sweep "$sweep_file" --jobs -1 --seeds 1 -q
expect 2 '--jobs: expected a whole number from 1 to 1024, found 0' -- \
  "$electsim" sweep "$sweep_file" --jobs 0 --seeds 1 -q
expect 2 '--protocols: expected one or more of' -- "$electsim" compare "$flagship" --protocols ''
expect 2 '--protocols: expected names from' -- "$electsim" compare "$flagship" --protocols raft,,lease
expect 2 '--metrics: expected one or more of' -- "$electsim" sweep "$sweep_file" --metrics '' -q
expect 2 'electsim compare SCENARIO [options]' -- "$electsim" compare
expect 2 'electsim search SCENARIO [options]' -- "$electsim" search
expect 2 '--runs: expected a whole number from 1 to 1000000000, found 0' -- \
  "$electsim" search "$flagship" --runs 0 -q
expect 2 '--kinds: expected a fault kind' -- "$electsim" search "$flagship" --kinds crush=2 -q
expect 2 '--kinds: expected at least one fault kind with a weight above 0' -- \
  "$electsim" search "$flagship" --kinds crash=0 -q
expect 2 '--property: expected a property (stale_write' -- "$electsim" search "$flagship" --property nope -q
expect 2 'failover needs --failover-bound' -- \
  "$electsim" search "$flagship" --property failover -q
expect 2 '--safety: expected a duration from 1s to' -- "$electsim" search "$flagship" --safety 0s -q
expect 2 '--intensity: expected loss: a probability from 0.05 to 1, found "7"' -- \
  "$electsim" search "$flagship" --intensity loss=7 -q
expect 2 '--faults: expected a whole number from 3 to 1000, found 2' -- \
  "$electsim" search "$flagship" --faults 3..2 -q
variant_of bad-search 'd["search"] = {"runs": -1, "kinds": {"crush": 1}}'
expect 2 'at /search/runs: expected a whole number from 1 to 1000000000' -- \
  "$electsim" search bad-search.json -q
expect 2 'at /search/kinds' -- "$electsim" search bad-search.json -q
variant_of bad-found 'd["found"] = {"unsafe_by_design": 1}'
expect 2 'at /found/property' -- "$electsim" run bad-found.json
expect 2 'at /found/unsafe_by_design' -- "$electsim" run bad-found.json
expect 2 'electsim check TRACE [options]' -- "$electsim" check

# ---- Search: its section goes through --set and --variant; what it saves stays in the folder
# asked, never replaces its input, and is never asked for when nothing will be shrunk.
expect 0 'search lease-gc-pause-fence (lease): 3 runs' -- \
  "$electsim" search "$flagship" --set search.runs=3 --no-shrink -q
expect 2 'at /search/runs: expected a whole number' -- \
  "$electsim" search "$flagship" --set search.runs=0 -q
expect 2 '--save writes the shrunk findings, and --no-shrink shrinks none' -- \
  "$electsim" search "$flagship" --runs 3 --no-shrink --save saved -q
variant_of escape 'd["name"] = "../../escaped"; d["protocol"]["fencing"] = False; d["protocol"]["recheck_before_write"] = False'
mkdir -p inside/deeper
expect 1 'wrote inside/deeper/_._.._escaped-lease-overwrite.json' -- \
  "$electsim" search escape.json --runs 300 --property overwrite --save inside/deeper -q
if [[ -e escaped-lease-overwrite.json || -e inside/escaped-lease-overwrite.json ]]; then
  failed=$((failed + 1))
  echo "not ok - a scenario name with ../ saved a finding outside the --save folder"
else
  passed=$((passed + 1))
  echo "ok - a scenario name with ../ saves inside the --save folder"
fi
cp escape.json inside/deeper/_._.._escaped-lease-overwrite.json
expect 2 'the scenario file this search reads' -- \
  "$electsim" search inside/deeper/_._.._escaped-lease-overwrite.json --runs 3 --property overwrite \
  --save inside/deeper -q

# ---- Threads: --jobs far above what the system can start never aborts. At most 4 threads per
# core are started; and when the system refuses a thread (1 GiB stacks in a 3 GB address space
# hold two), the runs go on on the threads that did start, with the same results.
limited='ulimit -v 3000000 && exec "$0" "$@"'
huge_stacks='ulimit -s 1000000 && ulimit -v 3000000 && exec "$0" "$@"'
if $sanitized; then
  echo "# the address-space cases run in the Release build only (ASan reserves its shadow first)"
else
  expect 0 'protocol.ttl' -- bash -c "$limited" "$electsim" \
    sweep "$sweep_file" --grid protocol.ttl=15s,20s --seeds 1..10 --jobs 1024 -q
  expect 0 'the system refused thread' -- bash -c "$huge_stacks" "$electsim" \
    sweep "$sweep_file" --grid protocol.ttl=15s,20s --seeds 1..10 --jobs 1024 -q
  expect 0 '20 runs, seeds 1 to 20' -- bash -c "$limited" "$electsim" \
    search "$flagship" --runs 20 --jobs 1024 --no-shrink -q
  expect 0 'the system refused thread' -- bash -c "$huge_stacks" "$electsim" \
    search "$flagship" --runs 20 --jobs 1024 --no-shrink -q
fi

# ---- Names and indexes, read exactly: no space, sign or leading zero, and no item twice.
variant_of member-space 'd["store"] = {"members": 3}; d["faults"][0]["target"] = "store: 1"'
expect 2 'member-space.json: at /faults/0/target: expected a node id' -- \
  "$electsim" validate member-space.json
expect 2 'the index after "store:" is written in plain digits' -- \
  "$electsim" validate member-space.json
variant_of member-zero 'd["store"] = {"members": 3}; d["faults"][0]["target"] = "store:01"'
expect 2 'the index after "store:" is written in plain digits' -- \
  "$electsim" validate member-zero.json
variant_of member-minus 'd["store"] = {"members": 3}; d["faults"][0]["target"] = "store:-0"'
expect 2 'at /faults/0/target: expected a node id from 0 to 4 (the scenario has 5 nodes) or one of' -- \
  "$electsim" validate member-minus.json
variant_of member-group 'd["store"] = {"members": 3}
d["faults"].append({"at": "1s", "kind": "partition", "groups": [["store:+1"], [0]]})'
expect 2 'at /faults/1/groups/0/0: expected a node id from 0 to 4 (the scenario has 5 nodes), "store", "store:0" to "store:2" or "sink", found "store:+1"' -- \
  "$electsim" validate member-group.json
variant_of master-minus 'd["redis"] = {"masters": 3}; d["faults"][0]["target"] = "redis:-0"'
expect 2 'the index after "redis:" is written in plain digits' -- \
  "$electsim" validate master-minus.json
variant_of clock-minus 'd["redis"] = {"masters": 3}
d["clocks"] = {"redis": {"0": {"offset": "1s"}, "-0": {"offset": "2s"}}}'
expect 2 'clock-minus.json: at /clocks/redis/-0: expected a master index from 0 to 2 (redis.masters) as the key, found "-0"' -- \
  "$electsim" validate clock-minus.json
variant_of node-clock-minus 'd["clocks"] = {"nodes": {"0": {"offset": "1s"}, "-0": {"offset": "2s"}}}'
expect 2 'at /clocks/nodes/-0: expected a node id from 0 to 4 (the scenario has 5 nodes) as the key' -- \
  "$electsim" validate node-clock-minus.json
expect 2 '--kinds: expected each fault kind once, found "crash" a second time' -- \
  "$electsim" search "$flagship" --kinds crash,pause,crash=2 -q
expect 2 '--kinds: expected a fault kind in every item, found an empty item in "crash,,pause"' -- \
  "$electsim" search "$flagship" --kinds crash,,pause -q
expect 2 '--kinds: expected a fault kind in every item' -- "$electsim" search "$flagship" --kinds crash, -q
expect 2 'a weight from 0 to 1000 after "crash=", in plain digits' -- \
  "$electsim" search "$flagship" --kinds crash=-0 -q
expect 2 'a weight from 0 to 1000 after "crash=", in plain digits' -- \
  "$electsim" search "$flagship" --kinds 'crash= 2' -q
expect 2 '--intensity: expected each intensity once, found "loss" a second time' -- \
  "$electsim" search "$flagship" --intensity loss=0.2,loss=0.5 -q
expect 2 '--intensity: expected key=value in every item, found an empty item' -- \
  "$electsim" search "$flagship" --intensity loss=0.2,,latency=5ms -q
expect 2 'loss: a probability from 0.05 to 1 written as a plain decimal' -- \
  "$electsim" search "$flagship" --intensity 'loss= 0.5' -q
expect 2 'loss: a probability from 0.05 to 1 written as a plain decimal' -- \
  "$electsim" search "$flagship" --intensity loss=5e-1 -q
expect 2 'drift_ppm: a whole number from 1 to 500000 in plain digits' -- \
  "$electsim" search "$flagship" --intensity drift_ppm=+50 -q
expect 2 '--property: expected a property in every item' -- \
  "$electsim" search "$flagship" --property stale_write,,overwrite -q
variant_of loose-search 'd["search"] = {"intensity": {"loss": "+0.5"}}'
expect 2 'loose-search.json: at /search/intensity: expected loss: a probability from 0.05 to 1 written as a plain decimal' -- \
  "$electsim" search loose-search.json -q

# ---- A fault kind acts only on the targets that obey it; any other target is exit 2 naming the
# kind and the target, never a fault that silently does nothing.
variant_of step-down-member 'd["store"] = {"members": 3}
d["faults"].append({"at": "1s", "kind": "step_down", "target": "store:1"})'
expect 2 'step-down-member.json: at /faults/1/target: expected a target that a "step_down" fault acts on: an election node, found "store:1", a store member, on which step_down does nothing' -- \
  "$electsim" validate step-down-member.json
variant_of campaign-redis 'd["redis"] = {"masters": 3}
d["faults"].append({"at": "1s", "kind": "campaign", "target": "redis:1"})'
expect 2 'at /faults/1/target: expected a target that a "campaign" fault acts on: an election node or a store member, found "redis:1", a Redis master, on which campaign does nothing' -- \
  "$electsim" validate campaign-redis.json
variant_of stall-database 'd["postgres"] = {}
d["faults"].append({"at": "1s", "kind": "disk_stall", "target": "postgres", "duration": "1s"})'
expect 2 'at /faults/1/target: expected a target that a "disk_stall" fault acts on: an election node or a store member, found "postgres", the database, on which disk_stall does nothing' -- \
  "$electsim" validate stall-database.json
variant_of clear-raft 'd["protocol"] = {"name": "raft"}
d["faults"] = [{"at": "1s", "kind": "operator_clear", "target": "store"}]'
expect 2 'at /faults/0/target: expected a server that keeps a leadership record to clear: "store" with a protocol that keeps a leader key in it, found "store", where this scenario'"'"'s protocol keeps no key' -- \
  "$electsim" validate clear-raft.json
variant_of random-step-down 'd["store"] = {"members": 3}
d["random_faults"] = [{"every": "5s", "kind": "step_down", "target": "store_leader"}]'
expect 2 'at /random_faults/0/target: expected a target that a "step_down" fault acts on: an election node' -- \
  "$electsim" validate random-step-down.json

# ---- Server timers have the protocols' lower bound; a derived default is checked as a given
# value would be; a key that would change nothing is refused.
for key in expiry_scan_interval election_timeout heartbeat_interval request_timeout min_ttl; do
  variant_of "store-$key" "d['store'] = {'members': 3, '$key': '3ns'}"
  expect 2 "at /store/$key: expected " -- "$electsim" validate "store-$key.json"
  expect 2 'a duration of at least "1ms" (the shortest server timer), found "3ns"' -- \
    "$electsim" validate "store-$key.json"
done
# The run a nanosecond scan interval used to spin in for ever now ends before it starts.
expect 2 'at /store/expiry_scan_interval' -- "$electsim" run store-expiry_scan_interval.json
variant_of single-scan 'd["store"] = {"expiry_scan_interval": "500us"}'
expect 2 'at /store/expiry_scan_interval: expected "0s" (a lease expires exactly at its deadline) or a duration of at least "1ms" (the shortest server timer), found "500us"' -- \
  "$electsim" validate single-scan.json
variant_of drift-default 'd["protocol"] = {"name": "redlock", "drift_factor": 0.9}; d["faults"] = []'
expect 2 'at /protocol/drift_factor: expected a validity time (expiry - expiry*drift_factor - 2ms) longer than renew_interval'"'"'s default, expiry/3 ("2.666666666s"), found 0.9, which leaves "798ms"' -- \
  "$electsim" validate drift-default.json
variant_of drift-given 'd["protocol"] = {"name": "redlock", "drift_factor": 0.9, "renew_interval": "2.666666666s"}; d["faults"] = []'
expect 2 'at /protocol/renew_interval: expected a duration below the validity time (expiry - expiry*drift_factor - 2ms, here "798ms"), found "2.666666666s"' -- \
  "$electsim" validate drift-given.json
variant_of timeout-tiny 'd["protocol"] = {"name": "redlock", "timeout_factor": 0.000001}; d["faults"] = []'
expect 2 'at /protocol/timeout_factor: expected a request timeout (expiry*timeout_factor) of at least "1ms"' -- \
  "$electsim" validate timeout-tiny.json
variant_of store-lease 'd["store"] = {"members": 3, "check_quorum": False, "check_quorum_lease": "2s"}'
expect 2 'at /store/check_quorum_lease: expected one of the keys of the store section' -- \
  "$electsim" validate store-lease.json
variant_of lease-without-cq 'd["protocol"] = {"name": "raft", "check_quorum_lease": "400ms"}; d["faults"] = []'
expect 2 'at /protocol/check_quorum_lease: expected no check_quorum_lease without "check_quorum": true' -- \
  "$electsim" validate lease-without-cq.json

# ---- Traces: server, member and client events are checked against the header's world as
# strictly as node events; each refusal names the line and what was expected.
regressions="$source_dir/fuzz/regressions/trace"
expect 2 'line 3: field "member": expected a node id, a server of the header'"'"'s world ("store", "sink", "postgres", "redis:0"' -- \
  "$electsim" check "$regressions/member-event-without-store-members.jsonl"
expect 2 'or null, found "store:2"' -- \
  "$electsim" check "$regressions/member-crash-without-store-members.jsonl"
expect 2 'line 3: field "member": expected a node id, a server of the header'"'"'s world ("store", "store:1", "store:2", "sink", "postgres", "redis:0", "redis:1", "redis:2", "redis:3", "redis:4", "redis:5", "redis:6", "redis:7", "redis:8") or null, found "store:5"' -- \
  "$electsim" check "$regressions/client-failover-to-missing-member.jsonl"
expect 2 'line 3: field "op": expected an operation of "postgres" ("try_advisory_lock",' -- \
  "$electsim" check "$regressions/server-request-unknown-op.jsonl"
expect 2 'line 4: server store:2 crashes while it is down' -- \
  "$electsim" check "$regressions/server-crashes-while-down.jsonl"
# The same damage done to real traces: each real trace is read whole first.
damage() {  # TRACE OUT PYTHON: rewrites the lines of TRACE (a list of dicts `lines`) into OUT
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
exec(sys.argv[3])
with open(sys.argv[2], "w") as out:
    for l in lines:
        out.write(json.dumps(l, separators=(",", ":")) + "\n")
PY
}
"$electsim" run "$source_dir/scenarios/store-quorum-loss.json" --trace members.jsonl >/dev/null 2>&1
"$electsim" run "$source_dir/scenarios/redlock-gc-pause.json" --trace redlock.jsonl >/dev/null 2>&1
expect 0 'trace hash' -- "$electsim" check members.jsonl
expect 1 'trace hash' -- "$electsim" check redlock.jsonl  # 1: its split-brain and overwrite
damage members.jsonl no-members.jsonl '
lines[0]["endpoints"] = [e for e in lines[0]["endpoints"] if e["name"] in ("store:0", "sink")]'
expect 2 'but the header names no replicated store' -- "$electsim" check no-members.jsonl
damage members.jsonl far-member.jsonl '
i = next(i for i, l in enumerate(lines) if l.get("ev") == "client_failover")
lines[i]["member"] = "store:6"'
expect 2 'field "member": expected a node id, a server of the header'"'"'s world ("store:0", "store:1", "store:2", "sink") or null, found "store:6"' -- \
  "$electsim" check far-member.jsonl
damage redlock.jsonl bad-op.jsonl '
i = next(i for i, l in enumerate(lines) if l.get("ev") == "server_request")
lines[i]["op"] = "flushall"'
expect 2 'field "op": expected an operation of "redis:0" ("set_nx_px", "release", "extend", "incr"), found "flushall"' -- \
  "$electsim" check bad-op.jsonl
# The operations a server answers come from the header: none listed, none taken.
damage redlock.jsonl no-ops.jsonl '
for e in lines[0]["endpoints"]:
    if e["kind"] == "redis": e["requests"] = []'
expect 2 'field "server": expected a server of the header that answers requests (it has none)' -- \
  "$electsim" check no-ops.jsonl
damage redlock.jsonl ops-not-list.jsonl '
lines[0]["endpoints"][-1]["requests"] = "incr"'
expect 2 ': "requests" must be a list of at most 256 operation names' -- \
  "$electsim" check ops-not-list.jsonl
damage members.jsonl twice-down.jsonl '
i = next(i for i, l in enumerate(lines) if l.get("ev") == "crash" and isinstance(l["node"], str))
lines.insert(i + 1, dict(lines[i]))'
expect 2 'crashes while it is down' -- "$electsim" check twice-down.jsonl

# ---- Outputs: a full disk is an error, never success with the output cut short.
expect 2 'cannot write to standard output' -- sh -c "\"$electsim\" run --json >/dev/full"
expect 2 'cannot write to standard output' -- sh -c "\"$electsim\" list >/dev/full"
if ls "$work"/*.tmp >/dev/null 2>&1; then
  failed=$((failed + 1))
  echo "not ok - a temporary file was left behind: $(ls "$work"/*.tmp)"
else
  passed=$((passed + 1))
  echo "ok - no temporary file left behind by any case"
fi

# ---- Signals: SIGTERM during a long run with a trace removes the temporary and ends the process
# by the signal (exit 143).
variant_of long 'd["duration"] = "720h"; d["limits"] = {"events": 100000000000}'
"$electsim" run long.json --trace long.jsonl >/dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do ls long.jsonl.*.tmp >/dev/null 2>&1 && break; sleep 0.1; done
sleep 0.5
kill -TERM "$pid"
wait "$pid"
code=$?
if [[ $code -eq 143 ]] && ! ls long.jsonl* >/dev/null 2>&1; then
  passed=$((passed + 1))
  echo "ok - SIGTERM during a run ends it with 143 and removes the trace's temporary"
else
  failed=$((failed + 1))
  echo "not ok - SIGTERM during a run: exit $code, left: $(ls long.jsonl* 2>/dev/null)"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
