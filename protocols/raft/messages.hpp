// Messages of Raft leader election: the messages of the one Raft (raft/messages.hpp), which the
// store's members speak too. The election protocol's AppendEntries carries no entries: it is the
// heartbeat, with the leader's last log position standing in for replication.
#pragma once

#include "raft/messages.hpp"

namespace electsim::protocols::raft {

using electsim::raft::AppendEntries;
using electsim::raft::AppendEntriesResponse;
using electsim::raft::decode;
using electsim::raft::encode;
using electsim::raft::kMessageTypeCount;
using electsim::raft::message_type_names;
using electsim::raft::PreVote;
using electsim::raft::PreVoteResponse;
using electsim::raft::RaftMessage;
using electsim::raft::RequestVote;
using electsim::raft::RequestVoteResponse;
using electsim::raft::type_of;

}  // namespace electsim::protocols::raft
