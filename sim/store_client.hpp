// The store client inside every election node, for a replicated store (clientv3's balancer,
// retry and watch-resume behaviour, simplified). A node talks to one member at a time (its home
// member first). A request unanswered after `request_timeout` fails with `unavailable`, and the
// client moves to the next member; after a `no_leader` refusal the request is sent
// once more on the next member (clientv3 retries requests that failed with Unavailable before
// reaching a leader), without moving the client; a member's crash (a reset connection) fails what
// was sent to it and moves the client. On every move its watches are re-created on the new member
// from the revision after the last event seen, so no event is lost or doubled. With a single store
// the client keeps the same books, never times a request out, and after a reset or a broken
// connection reconnects to the store: what was in flight fails, and its watches are re-created
// from the revision after the last event seen, as clientv3's watch stream resumes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/ids.hpp"
#include "sim/process.hpp"
#include "sim/store_types.hpp"
#include "sim/time.hpp"

namespace electsim::sim {

struct StoreClientConfig {
  std::vector<Endpoint> members;  // the store's members; one: the single store
  Duration request_timeout{0};    // 0: wait for ever
  std::vector<std::size_t> home;  // by node id: the member index it talks to first
};

class StoreClient {
 public:
  // The timer tag of request timeouts; a protocol never uses it.
  static constexpr TimerTag kTimeoutTag = 0xffff'ff00u;

  explicit StoreClient(const StoreClientConfig* config) : config_(config) {}

  bool replicated() const { return config_->members.size() > 1; }
  // The member requests go to now (kNoNode in a world without a store).
  Endpoint current() const;
  void start(ProcessContext& ctx);
  // Sends a protocol's request (its id set) to the current member.
  void send(ProcessContext& ctx, StoreRequest request);
  // A reply arrived: the one to give the protocol, if any (a late or internal one is kept).
  std::optional<StoreReply> on_reply(ProcessContext& ctx, StoreReply&& reply);
  // A watch event arrived from `from`: whether to give it to the protocol (rewritten to the
  // watch id the protocol knows).
  bool on_watch(Endpoint from, WatchEvent& event);
  // A timer of the client's fired: appends the failed replies to give the protocol.
  void on_timer(ProcessContext& ctx, TimerId id, std::vector<StoreReply>& failed);
  // A member crashed. Bookkeeping only (the node may be paused): the requests sent to it are
  // dead, and a timer due now reports them and moves the client when the node runs.
  void on_disconnect(ProcessContext& ctx, Endpoint peer);

 private:
  struct Outstanding {
    StoreRequest request;  // kept for the one retry after no_leader
    Endpoint sent_to = kNoNode;
    LocalTime deadline;  // on the node's clock
    bool retried = false;
    // A watch the client re-creates itself: the id the protocol knows it by (0: none).
    std::int64_t watch = 0;
  };
  struct Watch {
    std::int64_t visible_id = 0;  // the id the protocol knows (the client's own)
    Endpoint member = kNoNode;    // the member it lives on now
    std::int64_t member_id = 0;   // its id there (0 while being re-created)
    Key key;
    Revision seen = 0;  // the newest revision delivered (or the store's revision at creation)
  };
  // Sends to `to`, or to the current member.
  void transmit(ProcessContext& ctx, Outstanding&& o, Endpoint to = kNoNode);
  void move_on(ProcessContext& ctx, FailoverReason reason, RequestId id);
  static StoreReply failure(const StoreRequest& request, StoreError error);

  const StoreClientConfig* config_;
  std::size_t current_ = 0;
  std::vector<Outstanding> outstanding_;
  std::vector<Watch> watches_;
  std::int64_t last_watch_id_ = 0;
  std::vector<Outstanding> reset_;                    // died with a crashed member, to report
  std::vector<std::pair<TimerId, Endpoint>> resets_;  // timers of crashed members to act on
  TimerId deadline_timer_ = kNoTimer;  // armed for the earliest deadline, while any is pending
};

}  // namespace electsim::sim
