// What travels on the simulated network besides the small peer messages of sim/message.hpp: the
// requests and replies that clients exchange with the world's servers (the store's etcd-like
// API of sim/store_types.hpp, the sink's fenced writes). The kernel carries a Payload from one
// process to another and never looks inside; a server that speaks a new request type adds it to
// the variant.
#pragma once

#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "sim/ids.hpp"
#include "sim/message.hpp"
#include "sim/store_types.hpp"

namespace electsim::sim {

// A write to the sink with a fencing token (Kleppmann, "How to do distributed locking", 2016).
struct SinkWrite {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
};

struct SinkReply {
  RequestId id = 0;
  Token token = 0;
  std::int64_t payload = 0;
  bool accepted = false;
  Token highest_accepted = 0;  // after this write
};

// An entry's command in a replicated store's log (etcd's InternalRaftRequest): what to apply,
// and for a client's request, who asked and which member took it, so that member answers once it
// has applied the entry (etcd's wait registry).
struct StoreCommand {
  enum class Kind : std::uint8_t {
    request,       // a client's request
    refused,       // a keepalive the leader refused: the lease had expired on its clock
    lease_expiry,  // the leader's lessor revokes a lease whose TTL ran out (etcd LeaseRevoke)
  };
  Kind kind = Kind::request;
  StoreRequest request;
  Endpoint client = kNoNode;
  std::uint32_t client_incarnation = 0;
  Endpoint member = kNoNode;  // the member that took the request and answers it
};

// The command is shared, never changed once proposed: the leader's log, the messages that carry
// it and the followers' logs hold the same bytes, as a real WAL entry is copied but never edited.
// Null for a new leader's empty entry.
struct LogEntry {
  Epoch term = 0;
  std::shared_ptr<const StoreCommand> command;
};

// Raft traffic between a replicated store's members: a Raft message (raft/messages.hpp) and,
// for an AppendEntries, the entries it carries.
struct ReplicaMessage {
  Message header;
  std::vector<LogEntry> entries;
  // The leader's heartbeat round, echoed by the follower's response: what confirms a read
  // (etcd-io/raft's ReadIndex sends its heartbeat with a context the same way).
  std::int64_t round = 0;
};

// A request a member without the lead passes to its leader (etcd-io/raft's MsgProp).
struct ForwardedProposal {
  StoreCommand command;
};

using Payload = std::variant<std::monostate, StoreRequest, StoreReply, WatchEvent, SinkWrite,
                             SinkReply, ReplicaMessage, ForwardedProposal>;

}  // namespace electsim::sim
