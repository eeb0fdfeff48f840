// The built-in flagship scenario (runner/loader.hpp): a lease holder frozen by a GC pause longer
// than its TTL, between its lease check and its write leaving the process, writes with a stale
// token after a new holder was elected (Kleppmann, "How to do
// distributed locking", 2016). The text is identical to scenarios/lease-gc-pause-fence.json, which
// runs in CTest like every scenario file; a loader test checks that the two agree.
#include "runner/loader.hpp"

namespace electsim::runner {

const char* flagship_scenario_text() {
  return R"json({
  "name": "lease-gc-pause-fence",
  "description": "Why a lease alone cannot stop a deposed leader from writing, and how a fencing token does. The lease holder is a careful client: just before each write it checks that its lease is still good. At 4.9633s, 0.3ms after such a check passed and while the write is still inside the process (serialised, in the send syscall, not yet on the wire), a 6s stop-the-world GC pause freezes it, three times its 2s TTL. Its keepalives stop, so the store expires its lease about 2s later and deletes the leader key; the followers' watches fire and one of them wins the key with a new, higher revision, which becomes its fencing token. The frozen node notices nothing: when it wakes at 10.963s the first thing it does is finish the send it was in the middle of, so the write goes out with its old token; only then do its overdue timers tell it it lost the lease. For the rest of the pause two nodes believe they lead: split-brain that no lease can prevent, because a frozen process cannot learn that its time is up, and no check, however late, closes the gap between the check and the write. The sink saves the data: it has already accepted the new holder's higher token, so it rejects the stale write. The variant no-fencing turns fencing off, and the very same write is accepted over the new holder's data: an overwrite, which is corruption. The variant careless drops the check: that client also writes after it has learnt of the new leader.",
  "seed": 1,
  "duration": "30s",
  "nodes": 5,
  "protocol": {"name": "lease", "expiry": "store", "ttl": "2s", "fencing": true,
               "recheck_before_write": true},
  "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
  "workload": {"interval": "100ms", "work": "50ms"},
  "faults": [
    {"at": "4.9633s", "kind": "pause", "target": "leader", "duration": "6s"}
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
        "same_epoch_leaders": {"max": 0},
        "stale_writes_overwriting": {"min": 1}
      }
    },
    "careless": {
      "description": "The same pause with a client that does not check its lease before writing. The write in the socket is rejected as before; then, at wake, the write timer that fell due during the pause starts another write, and although the node steps down the same instant and learns of the new leader, 50ms later it sends that write too with its old token. Fencing rejects both.",
      "set": {"protocol.recheck_before_write": false},
      "expect": {
        "stale_writes_accepted": {"max": 0},
        "stale_writes_rejected": {"min": 2},
        "split_brain_time": {"min": "1s", "max": "6s"},
        "same_epoch_leaders": {"max": 0}
      }
    }
  }
}
)json";
}

}  // namespace electsim::runner
