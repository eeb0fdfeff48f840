// The built-in flagship scenario (runner/loader.hpp): a lease holder frozen by a GC pause longer
// than its TTL writes with a stale token after a new holder was elected (Kleppmann, "How to do
// distributed locking", 2016). The text is identical to scenarios/lease-gc-pause-fence.json, which
// runs in CTest like every scenario file; a loader test checks that the two agree.
#include "runner/loader.hpp"

namespace electsim::runner {

const char* flagship_scenario_text() {
  return R"json({
  "name": "lease-gc-pause-fence",
  "description": "Why a lease alone cannot stop a deposed leader from writing, and how a fencing token does. At 5s the lease holder is frozen by a 6s stop-the-world GC pause, three times its 2s TTL. Its keepalives stop, so the store expires its lease about 2s later and deletes the leader key; the followers' watches fire and one of them wins the key with a new, higher revision, which becomes its fencing token. The frozen node notices nothing: when it wakes at 11s it still believes it leads, and the write it had decided on before the pause goes out with its old token (this client does not re-check before writing, and one that did could still be paused between the check and the write). For the rest of the pause two nodes believe they lead: split-brain that no lease can prevent, because a frozen process cannot learn that its time is up. The sink saves the data: it has already accepted the new holder's higher token, so it rejects the stale write. The variant no-fencing turns fencing off, and the very same write is accepted: silent corruption.",
  "seed": 1,
  "duration": "30s",
  "nodes": 5,
  "protocol": {"name": "lease", "expiry": "store", "ttl": "2s", "fencing": true,
               "recheck_before_write": false},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "workload": {"interval": "100ms", "work": "50ms"},
  "faults": [
    {"at": "5s", "kind": "pause", "target": "leader", "duration": "6s"}
  ],
  "expect": {
    "stale_writes_accepted": {"max": 0},
    "stale_writes_rejected": {"min": 1},
    "split_brain_time": {"min": "1s", "max": "6s"},
    "same_epoch_leaders": {"max": 0},
    "failover_max": {"max": "4s", "observed": true}
  },
  "variants": {
    "no-fencing": {
      "description": "The same pause with fencing off: the sink accepts every token, so the frozen holder's stale write lands on top of the new holder's writes.",
      "set": {"protocol.fencing": false},
      "expect": {
        "stale_writes_accepted": {"min": 1},
        "stale_writes_rejected": {"max": 0},
        "split_brain_time": {"min": "1s", "max": "6s"},
        "same_epoch_leaders": {"max": 0}
      }
    }
  }
}
)json";
}

}  // namespace electsim::runner
