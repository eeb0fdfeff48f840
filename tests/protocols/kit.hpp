// The scaffolding every protocol unit test shares: a config read from parameters the test means to
// be valid, and one protocol node on a FakeContext that the test drives by hand. A test file keeps
// only what is particular to its protocol, in a Bench derived from NodeBench (or DbBench, for the
// protocols that elect through the database). Benches of many nodes sharing one store are
// StoreBench (store_bench.hpp); clusters on the real kernel are Cluster (cluster.hpp).
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "params/params.hpp"
#include "servers/postgres/database.hpp"
#include "sim/protocol.hpp"
#include "tests/protocols/fake_context.hpp"

namespace electsim::testing {

// Reads a protocol's config with `read`, a read_config call with everything but the problems list
// bound, and fails the test with the first problem found if the parameters are not valid. The
// leader's write workload is off unless the test asks for it: most cases are about the election
// alone, and the workload's timers would interleave with the ones a case fires.
template <typename Read>
auto valid_config(Read read, bool workload = false) {
  params::Problems problems;
  auto config = read(problems);
  INFO((problems.empty() ? std::string() : problems.front().format()));
  REQUIRE(config.has_value());
  config->workload.enabled = workload;
  return *std::move(config);
}

// One protocol node on a fake context; the test plays every peer, server and clock by hand.
// `Decode` is the protocol's message decoder (bully::decode), for the protocols whose nodes talk to
// each other: it lets a test read what the node sent as typed messages. Messages handed to the node
// are encoded by the protocol's encode(), found next to the message types as the protocol's own
// code finds it.
template <typename Node, typename Config, auto Decode = nullptr>
struct NodeBench {
  static constexpr bool kDecodes = !std::is_null_pointer_v<decltype(Decode)>;

  explicit NodeBench(const Config& c, sim::NodeId self = 0, std::size_t cluster_size = 3,
                     std::uint64_t seed = 1)
      : config(std::make_shared<const Config>(c)),
        ctx(self, cluster_size, seed),
        node(std::make_unique<Node>(config)) {}

  std::shared_ptr<const Config> config;
  FakeContext ctx;
  std::unique_ptr<Node> node;
  std::size_t seen = 0;  // sends already taken by take_sent()

  void start() { node->on_start(ctx); }
  // A crash and restart: timers die with the process, and a new instance starts on the same
  // context, so what the node made durable is kept.
  void restart() {
    for (auto& t : ctx.timers) t.armed = false;
    node = std::make_unique<Node>(config);
    start();
  }
  // A message from peer `from`, typed as the protocol declares its messages.
  template <typename Message>
  void deliver(sim::NodeId from, const Message& m) {
    node->on_message(ctx, from, encode(m));
  }
  // Fires every timer that comes due within `d`, in due order; the clock then stands at its end.
  void run_for(sim::Duration d) { ctx.run_for(*node, d); }
  // The number of armed timers with this tag.
  std::size_t armed(sim::TimerTag tag) const { return ctx.armed(tag).size(); }

  // A place in the sends, for sent() to look from.
  std::size_t mark() const { return ctx.sent.size(); }
  // (recipient, message) of every message of type T sent from `since` on, in the order sent.
  template <typename T>
  std::vector<std::pair<sim::NodeId, T>> sent(std::size_t since = 0) const requires kDecodes {
    std::vector<std::pair<sim::NodeId, T>> out;
    for (std::size_t i = since; i < ctx.sent.size(); ++i) {
      const auto decoded = decoded_at(i);
      if (const T* m = std::get_if<T>(&decoded)) out.emplace_back(ctx.sent[i].to, *m);
    }
    return out;
  }
  // (recipient, message) of every message sent since the last take, in the order sent.
  auto take_sent() requires kDecodes {
    std::vector<std::pair<sim::NodeId, decltype(decoded_at(0))>> out;
    for (; seen < ctx.sent.size(); ++seen) out.emplace_back(ctx.sent[seen].to, decoded_at(seen));
    return out;
  }

 private:
  // The send at `i`, which must be one of the protocol's messages.
  auto decoded_at(std::size_t i) const requires kDecodes {
    auto decoded = Decode(ctx.sent[i].message);
    REQUIRE(decoded.has_value());
    return *std::move(decoded);
  }
};

// A node that elects through the database (servers::Database), which answers its statements when
// the test says so. `life` is the node's incarnation: a new life of the same client opens a new
// session, which holds nothing the old one held.
template <typename Node, typename Config>
struct DbBench : NodeBench<Node, Config> {
  explicit DbBench(const Config& c, sim::NodeId self = 0, std::uint32_t life = 0)
      : NodeBench<Node, Config>(c, self), life(life) {}

  std::uint32_t life;
  std::size_t answered = 0;

  // Runs every statement not yet answered on `db`, in order, and hands back the replies.
  void answer(servers::Database& db) {
    auto& ctx = this->ctx;
    for (; answered < ctx.db_calls.size(); ++answered) {
      servers::Session& s = db.session_of(ctx.self(), life, ctx.now());
      const servers::DbOutcome out = db.execute(s, ctx.db_calls[answered].request, ctx.now());
      if (out.reply) this->node->on_db_reply(ctx, *out.reply);
    }
  }
};

}  // namespace electsim::testing
