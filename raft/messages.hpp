// Raft's messages (Ongaro and Ousterhout 2014, Figure 2; the dissertation §9.6 for PreVote) as
// typed structs in a std::variant, and their encoding into the kernel's fixed-size sim::Message.
// The election protocol and the store's members speak the same messages. An AppendEntries header
// travels in a sim::Message; the store's entries travel beside it (sim::ReplicaMessage), and the
// election protocol sends none: its leader's last position stands in for replication.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sim/ids.hpp"
#include "sim/message.hpp"
#include "sim/message_codec.hpp"

namespace electsim::raft {

// The position of a log entry; {0, 0} is the empty log.
struct LogPosition {
  std::int64_t index = 0;
  sim::Epoch term = 0;
  bool operator==(const LogPosition&) const = default;
};

struct RequestVote {
  sim::Epoch term = 0;
  std::int64_t last_log_index = 0;
  sim::Epoch last_log_term = 0;
  bool operator==(const RequestVote&) const = default;
};

struct RequestVoteResponse {
  sim::Epoch term = 0;
  bool granted = false;
  bool operator==(const RequestVoteResponse&) const = default;
};

// Raft Figure 2's AppendEntries RPC. `prev_index`/`prev_term` name the entry the carried entries
// follow (with no entries: the leader's last entry); `commit` is the leader's commit index.
struct AppendEntries {
  sim::Epoch term = 0;
  std::int64_t prev_index = 0;
  sim::Epoch prev_term = 0;
  std::int64_t commit = 0;
  bool operator==(const AppendEntries&) const = default;
};

// `index`: on success the last index the follower now holds from the leader (its match index);
// on a log mismatch, the follower's last index, as etcd's RejectHint.
struct AppendEntriesResponse {
  sim::Epoch term = 0;
  bool success = false;
  std::int64_t index = 0;
  bool operator==(const AppendEntriesResponse&) const = default;
};

// etcd raft's MsgPreVote: the term the sender would campaign in, without having moved to it.
struct PreVote {
  sim::Epoch next_term = 0;
  std::int64_t last_log_index = 0;
  sim::Epoch last_log_term = 0;
  bool operator==(const PreVote&) const = default;
};

// Granted: carries the requested term (etcd does the same); refused: the responder's own term.
struct PreVoteResponse {
  sim::Epoch term = 0;
  bool granted = false;
  bool operator==(const PreVoteResponse&) const = default;
};

// The alternative index is the wire type: the names in message_type_names() follow this order.
using RaftMessage = std::variant<RequestVote, RequestVoteResponse, AppendEntries,
                                 AppendEntriesResponse, PreVote, PreVoteResponse>;

inline constexpr std::size_t kMessageTypeCount = std::variant_size_v<RaftMessage>;

template <typename T>
constexpr sim::MessageType type_of() {
  return sim::wire_type<T, RaftMessage>();
}

// Names by sim::MessageType, for traces and cost reports.
inline std::vector<std::string> message_type_names() {
  return {"RequestVote",       "RequestVoteResp", "AppendEntries",
          "AppendEntriesResp", "PreVote",         "PreVoteResp"};
}

inline sim::Message encode(const RaftMessage& message) {
  struct Encoder {
    sim::Message operator()(const RequestVote& m) const {
      return sim::pack<RequestVote, RaftMessage>(m.term, m.last_log_index, m.last_log_term);
    }
    sim::Message operator()(const RequestVoteResponse& m) const {
      return sim::pack<RequestVoteResponse, RaftMessage>(m.term, m.granted ? 1 : 0);
    }
    sim::Message operator()(const AppendEntries& m) const {
      return sim::pack<AppendEntries, RaftMessage>(m.term, m.prev_index, m.prev_term, m.commit);
    }
    sim::Message operator()(const AppendEntriesResponse& m) const {
      return sim::pack<AppendEntriesResponse, RaftMessage>(m.term, m.success ? 1 : 0, m.index);
    }
    sim::Message operator()(const PreVote& m) const {
      return sim::pack<PreVote, RaftMessage>(m.next_term, m.last_log_index, m.last_log_term);
    }
    sim::Message operator()(const PreVoteResponse& m) const {
      return sim::pack<PreVoteResponse, RaftMessage>(m.term, m.granted ? 1 : 0);
    }
  };
  return std::visit(Encoder{}, message);
}

// nullopt for a type that is not Raft's: only a Raft peer sends to a Raft member, so the caller
// treats that as a broken invariant.
inline std::optional<RaftMessage> decode(const sim::Message& m) {
  const auto& f = m.field;
  switch (m.type) {
    case type_of<RequestVote>():
      return RequestVote{f[0], f[1], f[2]};
    case type_of<RequestVoteResponse>():
      return RequestVoteResponse{f[0], f[1] != 0};
    case type_of<AppendEntries>():
      return AppendEntries{f[0], f[1], f[2], f[3]};
    case type_of<AppendEntriesResponse>():
      return AppendEntriesResponse{f[0], f[1] != 0, f[2]};
    case type_of<PreVote>():
      return PreVote{f[0], f[1], f[2]};
    case type_of<PreVoteResponse>():
      return PreVoteResponse{f[0], f[1] != 0};
    default:
      return std::nullopt;
  }
}

}  // namespace electsim::raft
