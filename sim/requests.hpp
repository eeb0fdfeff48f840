// The requests each kind of server answers, as `server_request` events name them: the
// database's statements (sim::DbOp) and a Redis master's commands (sim::RedisOp). Their request
// types live in sim/wire.hpp, so their names are listed here, beside them, and the trace checker
// reads this table instead of naming kinds.
#pragma once

#include <string_view>
#include <vector>

namespace electsim::sim {

struct RequestVocabulary {
  std::string_view kind;    // the server kind that answers them ("postgres")
  std::string_view target;  // how a message names such a server ("\"postgres\"", "a Redis master")
  std::string_view noun;    // how a message names the one it went to ("the database")
  std::vector<std::string_view> ops;  // every operation, in its enum's order
};

// Every kind of server that answers requests, in the order messages list them.
const std::vector<RequestVocabulary>& request_vocabularies();
// The vocabulary of `kind`, or null for a kind that answers no requests.
const RequestVocabulary* request_vocabulary(std::string_view kind);

}  // namespace electsim::sim
