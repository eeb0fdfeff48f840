// The guided experiments: see playground/experiments.hpp. Their worlds share the lesson's shape:
// a few nodes, latency uniform in whole milliseconds from 1 to 10, a write every 200 ms (100 ms
// where a write must be in flight at the moment that matters).
#include "playground/experiments.hpp"

#include <vector>

namespace electsim::playground {

namespace {

// A world of `nodes` nodes running `protocol` (its JSON object) for `duration`.
std::string world(const char* name, int nodes, const char* duration, const char* protocol,
                  const char* interval = "200ms") {
  return std::string("{\"name\": \"") + name +
         "\", \"description\": \"A guided experiment of the electsim playground.\", \"seed\": 1, "
         "\"duration\": \"" +
         duration + "\", \"nodes\": " + std::to_string(nodes) + ", \"protocol\": " + protocol +
         ", \"network\": {\"latency\": {\"dist\": \"uniform\", \"min\": \"1ms\", \"max\": "
         "\"10ms\", \"step\": \"1ms\"}}, \"workload\": {\"interval\": \"" +
         interval + "\", \"work\": \"5ms\"}}";
}

std::vector<Experiment> make() {
  std::vector<Experiment> all;
  all.push_back(
      {"acquire-and-renew", "Acquire and renew", "lease",
       "Five processes start at once and race to create the leader key in the store with a "
       "transaction that succeeds only if the key is absent. Press play and watch the store's "
       "leader key, the holder's lease draining and refilling, and the requests in flight. Then "
       "crash a follower (click its card, then Crash).",
       "Who gets the lease, and what does each of the others do afterwards? What changes when a "
       "follower crashes?",
       "The store orders the five transactions: the first to reach it creates the key and wins, "
       "and the revision of its transaction becomes its epoch, the fencing token on every write. "
       "The holder renews its lease with a keepalive every renew_interval (ttl/3, 1 s here), "
       "so its lease never drains below two thirds; the others watch the key and send nothing "
       "else. A crashed follower changes nothing at all: no election, no outage. Only the "
       "holder's silence matters.",
       world("acquire-and-renew", 5, "30s", R"({"name": "lease", "ttl": "3s"})")});
  all.push_back(
      {"leader-crash", "Leader crash", "lease",
       "The same five processes, with a 3 s TTL. Let the holder take the lease, then crash it "
       "(click the leader's card, then Crash). Try it just after a renewal, and again just "
       "before one.",
       "How long until another process leads: less than the TTL, about the TTL, or more?",
       "About the TTL, never more than the TTL plus a request: the store deletes the key only "
       "when the lease expires on its own clock, a full TTL after the last keepalive it took, "
       "and that is when the followers' watches fire and one of them wins the key with a new, "
       "higher epoch. Crashing just after a keepalive costs a whole TTL (3 s); just before one, "
       "a renew interval less (about 2 s). The findings panel shows the failover it measured, "
       "and the service outage is a little longer: it lasts from the dead holder's last write "
       "to the new holder's first.",
       world("leader-crash", 5, "30s", R"({"name": "lease", "ttl": "3s"})")});
  all.push_back(
      {"gc-pause-and-fence", "GC pause and fence", "lease",
       "A careless client with a 2 s TTL: it does not check its lease before each write, and "
       "fencing is on. Once a process leads, pause it for 6 s (click its card, set the "
       "duration to 6s, then Pause): a stop-the-world GC, three times its TTL. Watch the store "
       "expire its lease, another process take over, and what the frozen one does when it "
       "wakes. Then turn fencing off in the parameters and play it again.",
       "The frozen process wakes still believing it leads and sends a write with its old "
       "token. Will the sink accept it?",
       "No: the new holder has a higher epoch and has already written with it, so the sink, "
       "which keeps the highest token it has accepted, rejects the late write (stale writes: 1 "
       "rejected by fencing), and the writer steps down. For the rest of the pause two "
       "processes believed they led: split-brain, which no lease can prevent, because a frozen "
       "process cannot learn that its time is up. With fencing off the same write is accepted "
       "over the new holder's data: an overwrite, which is corruption.",
       world("gc-pause-and-fence", 5, "30s",
             R"({"name": "lease", "ttl": "2s", "fencing": true, "recheck_before_write": false})",
             "100ms")});
  all.push_back(
      {"free-play", "Free play", "lease",
       "Everything at once: crash any process at any phase of its TTL, release voluntarily "
       "(Step down), force the lease to expire (Expire lease), pause the store, cut the "
       "network with a partition, and drag the TTL. Find the pause that looks like a crash: "
       "shorten the TTL until a 1 s pause of the holder makes the others take over.",
       "How short must the TTL be for a 1 s pause of the holder to cost it the lease?",
       "A paused holder loses its leadership when its renew deadline (two thirds of the TTL "
       "after its last confirmed renewal, on its own clock) passes during the pause, or when the "
       "store's lease (a TTL after the last keepalive it took) runs out first. Renewals come "
       "every third of the TTL, so whether a 1 s pause costs the lease depends on where in the "
       "renewal cycle it strikes: with the 3 s TTL only at the worst moments, with 1.2 s at any "
       "moment. A short TTL fails over fast from crashes, and mistakes pauses for crashes.",
       world("free-play", 5, "2m", R"({"name": "lease", "ttl": "3s"})")});
  all.push_back(
      {"raft-partition", "Raft: a partitioned leader", "consensus",
       "Five Raft nodes. Once one leads, cut it off with one follower: put the leader and one "
       "follower in group A and the other three in group B, then Cut (the sink stays reachable "
       "from both sides).",
       "Does the majority side elect a new leader? Does the old leader stop leading at once?",
       "The three on the majority side miss heartbeats, time out within an election timeout "
       "(150 to 300 ms) and elect a new leader with a higher term. The old leader, which cannot "
       "reach a majority, learns nothing: it goes on believing it leads (split-brain in belief, "
       "though it can commit nothing) until the sink, which has seen the higher term, rejects "
       "its write, and it steps down. With check_quorum on (in the parameters) it steps down "
       "by itself once it has heard from no majority for an election timeout.",
       world("raft-partition", 5, "30s", R"({"name": "raft"})")});
  all.push_back(
      {"bully-pause", "Bully: a slow coordinator", "classic",
       "Five nodes run the Bully algorithm: the highest id that is up leads. Pause the "
       "coordinator (node 4) for 2 s.",
       "What do the others do, and what happens when node 4 wakes?",
       "After 500 ms without a heartbeat (failure_timeout) the others hold an election, and "
       "node 3, now the highest that answers, becomes coordinator. Node 4 wakes still believing "
       "it leads: for a moment two nodes lead, then node 4 holds an election of its own, bullies "
       "its way back and node 3 steps down. Leadership moved twice for one pause, and a slow "
       "node is indistinguishable from a dead one.",
       world("bully-pause", 5, "30s", R"({"name": "bully"})")});
  all.push_back(
      {"zookeeper-no-herd", "ZooKeeper: who is woken", "ZooKeeper",
       "Six candidates run ZooKeeper's recipe: each creates an ephemeral sequential node and "
       "watches only the one just below its own. Crash the leader.",
       "When the leader's session expires, how many candidates are told?",
       "One: only the leader's successor watches the leader's node, so only its watch fires "
       "(one watch_notify in the log), and it leads next, about a session timeout (4 s) after "
       "the crash, when the ensemble expires the dead session. The others sleep on: no herd of "
       "candidates racing for the store.",
       world("zookeeper-no-herd", 6, "30s", R"({"name": "zookeeper", "session_timeout": "4s"})")});
  all.push_back(
      {"redlock-clock-jump", "Redlock: a clock that jumps", "Redis",
       "Two clients take a Redlock on five independent Redis masters. Once one holds it, step "
       "the clocks of three masters (a majority) 10 s ahead: pick redis:0, redis:1 and redis:2 "
       "in turn and press Clock step with 10s.",
       "The holder still counts its lock as valid on its own clock. Can the other client take "
       "the lock anyway?",
       "Yes. Redis expires keys on its own wall clock, so on the stepped masters the key is gone "
       "at once, and the other client's next attempt takes a majority: two holders of one lock "
       "for as long as the first one's validity time lasts on its own clock. Without fencing "
       "(Redlock's default) the sink accepts both writers: the first one's writes land over "
       "newer data. This is Kleppmann's first attack on Redlock.",
       world("redlock-clock-jump", 2, "30s", R"({"name": "redlock"})")});
  return all;
}

}  // namespace

std::span<const Experiment> experiments() {
  static const std::vector<Experiment> all = make();
  return all;
}

}  // namespace electsim::playground
