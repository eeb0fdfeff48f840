// The sink: fencing tokens decide which writes are accepted, every decision is recorded with the
// highest token accepted before it, and fencing off accepts everything while still tracking it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "servers/sink/sink.hpp"

using namespace electsim::sim;
using namespace electsim::servers;

namespace {

struct Write {
  NodeId writer;
  Token token;
};

std::vector<bool> accepted_of(const Sink& sink) {
  std::vector<bool> out;
  for (const SinkDecision& d : sink.decisions()) out.push_back(d.accepted);
  return out;
}

}  // namespace

TEST_CASE("sink: fencing on refuses lower tokens, fencing off accepts everything") {
  auto [name, fencing, writes, accepted,
        highest] = GENERATE(table<std::string, bool, std::vector<Write>, std::vector<bool>, Token>({
      {"rising tokens", true, {{0, 1}, {1, 2}, {2, 3}}, {true, true, true}, 3},
      {"a deposed leader after its successor",
       true,
       {{0, 1}, {1, 2}, {0, 1}},
       {true, true, false},
       2},
      {"equal tokens: one leader writing again",
       true,
       {{0, 5}, {0, 5}, {0, 5}},
       {true, true, true},
       5},
      {"a stale write before the new leader writes passes",
       true,
       {{0, 1}, {0, 1}, {1, 2}},
       {true, true, true},
       2},
      {"much lower token", true, {{1, 7}, {0, 3}, {2, 6}, {1, 7}}, {true, false, false, true}, 7},
      {"fencing off: stale writes pass", false, {{0, 1}, {1, 2}, {0, 1}}, {true, true, true}, 2},
      {"fencing off: highest is the max accepted", false, {{1, 7}, {0, 3}}, {true, true}, 7},
  }));
  INFO(name);
  SinkConfig config;
  config.fencing = fencing;
  Sink sink(config);
  RequestId id = 0;
  for (const Write& w : writes) {
    ++id;
    sink.write(Time(static_cast<std::int64_t>(id)), w.writer, id, w.token, 0);
  }
  CHECK(accepted_of(sink) == accepted);
  CHECK(sink.highest_accepted() == highest);
}

TEST_CASE("sink: every decision is recorded with the highest token accepted before it") {
  Sink sink;
  const SinkReply first = sink.write(Time(10), 0, 1, 4, 100);
  const SinkReply stale = sink.write(Time(20), 1, 2, 3, 200);
  const SinkReply equal = sink.write(Time(30), 2, 3, 4, 300);
  const SinkReply newer = sink.write(Time(40), 1, 4, 9, 400);

  CHECK(first.accepted);
  CHECK(first.id == 1);
  CHECK(first.highest_accepted == 4);
  CHECK_FALSE(stale.accepted);
  CHECK(stale.id == 2);
  CHECK(stale.token == 3);
  CHECK(stale.payload == 200);
  CHECK(stale.highest_accepted == 4);
  CHECK(equal.accepted);
  CHECK(newer.highest_accepted == 9);

  const std::vector<SinkDecision>& d = sink.decisions();
  REQUIRE(d.size() == 4);
  CHECK(d[0].at == Time(10));
  CHECK(d[0].writer == 0);
  CHECK(d[0].token == 4);
  CHECK(d[0].payload == 100);
  CHECK(d[0].highest_before == 0);
  CHECK(d[1].at == Time(20));
  CHECK(d[1].writer == 1);
  CHECK_FALSE(d[1].accepted);
  CHECK(d[1].highest_before == 4);
  CHECK(d[2].writer == 2);
  CHECK(d[2].accepted);
  CHECK(d[2].highest_before == 4);
  CHECK(d[3].payload == 400);
  CHECK(d[3].highest_before == 4);
}

TEST_CASE("sink: a long run's decisions are counted but only the first ones are kept") {
  Sink sink(SinkConfig{});
  const std::size_t writes = Sink::kDecisionsKept + 25;
  for (std::size_t i = 0; i < writes; ++i) {
    sink.write(Time(static_cast<std::int64_t>(i)), 1, static_cast<RequestId>(i), 3, 0);
  }
  CHECK(sink.decision_count() == writes);
  REQUIRE(sink.decisions().size() == Sink::kDecisionsKept);
  CHECK(sink.decisions().back().at == Time(static_cast<std::int64_t>(Sink::kDecisionsKept - 1)));
  CHECK(sink.highest_accepted() == 3);
}

TEST_CASE("sink: a resource that does not fence accepts what the others would reject") {
  // Resource 1 (a fleet's class without fencing) accepts lower tokens; 0 and 2 fence.
  SinkConfig config;
  config.fencing_by_resource = {true, false, true};
  Sink sink(config);
  for (std::uint32_t resource : {0u, 1u, 2u}) {
    CHECK(sink.write(Time(1), 1, 1, 5, 10, resource).accepted);
    CHECK(sink.write(Time(2), 2, 2, 4, 20, resource).accepted == (resource == 1));
  }
  CHECK(sink.highest_accepted(1) == 5);
}
