// Messages of Raft leader election (Ongaro and Ousterhout 2014, Figure 2; the dissertation §9.6
// for PreVote), as typed structs in a std::variant, and their encoding into the kernel's
// fixed-size sim::Message. AppendEntries carries no entries: it is the heartbeat, with the
// leader's last log position standing in for replication.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "protocols/wire.hpp"
#include "sim/ids.hpp"
#include "sim/message.hpp"

namespace electsim::protocols::raft {

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

struct AppendEntries {
  sim::Epoch term = 0;
  std::int64_t leader_last_index = 0;
  sim::Epoch leader_last_term = 0;
  bool operator==(const AppendEntries&) const = default;
};

struct AppendEntriesResponse {
  sim::Epoch term = 0;
  bool success = false;
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

// The wire type of each message is its alternative index in RaftMessage.
template <typename T>
constexpr sim::MessageType type_of() {
  return wire_type<T, RaftMessage>();
}

// Names by sim::MessageType, for traces and cost reports.
inline std::vector<std::string> message_type_names() {
  return {"RequestVote",       "RequestVoteResp", "AppendEntries",
          "AppendEntriesResp", "PreVote",         "PreVoteResp"};
}

inline sim::Message encode(const RaftMessage& message) {
  struct Encoder {
    sim::Message operator()(const RequestVote& m) const {
      return pack<RequestVote, RaftMessage>(m.term, m.last_log_index, m.last_log_term);
    }
    sim::Message operator()(const RequestVoteResponse& m) const {
      return pack<RequestVoteResponse, RaftMessage>(m.term, m.granted ? 1 : 0);
    }
    sim::Message operator()(const AppendEntries& m) const {
      return pack<AppendEntries, RaftMessage>(m.term, m.leader_last_index, m.leader_last_term);
    }
    sim::Message operator()(const AppendEntriesResponse& m) const {
      return pack<AppendEntriesResponse, RaftMessage>(m.term, m.success ? 1 : 0);
    }
    sim::Message operator()(const PreVote& m) const {
      return pack<PreVote, RaftMessage>(m.next_term, m.last_log_index, m.last_log_term);
    }
    sim::Message operator()(const PreVoteResponse& m) const {
      return pack<PreVoteResponse, RaftMessage>(m.term, m.granted ? 1 : 0);
    }
  };
  return std::visit(Encoder{}, message);
}

// nullopt for a type that is not Raft's: only a Raft peer sends to a Raft node, so the caller
// treats that as a broken invariant.
inline std::optional<RaftMessage> decode(const sim::Message& m) {
  const auto& f = m.field;
  switch (m.type) {
    case type_of<RequestVote>():
      return RequestVote{f[0], f[1], f[2]};
    case type_of<RequestVoteResponse>():
      return RequestVoteResponse{f[0], f[1] != 0};
    case type_of<AppendEntries>():
      return AppendEntries{f[0], f[1], f[2]};
    case type_of<AppendEntriesResponse>():
      return AppendEntriesResponse{f[0], f[1] != 0};
    case type_of<PreVote>():
      return PreVote{f[0], f[1], f[2]};
    case type_of<PreVoteResponse>():
      return PreVoteResponse{f[0], f[1] != 0};
    default:
      return std::nullopt;
  }
}

}  // namespace electsim::protocols::raft
