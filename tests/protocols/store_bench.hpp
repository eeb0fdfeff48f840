// A test bench for protocols that elect through the store: n candidates on fake contexts sharing
// one servers::Store, every clock moved together in steps, and the test deciding whose requests
// reach the store. Replies and watch notifications are delivered at once.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "servers/store/store.hpp"
#include "tests/protocols/fake_context.hpp"

namespace electsim::testing {

template <typename Node, typename Config>
struct StoreBench {
  StoreBench(const Config& c, std::size_t n) : config(std::make_shared<Config>(c)) {
    for (std::size_t i = 0; i < n; ++i) {
      ctxs.push_back(std::make_unique<FakeContext>(static_cast<sim::NodeId>(i), n));
      nodes.push_back(std::make_unique<Node>(config));
      answered.push_back(0);
      alive.push_back(true);
    }
  }

  std::shared_ptr<const Config> config;
  std::vector<std::unique_ptr<FakeContext>> ctxs;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::size_t> answered;
  std::vector<bool> alive;
  servers::Store store;
  sim::LocalTime store_now{0};
  std::size_t watch_events = 0;  // notifications delivered to candidates
  std::size_t requests = 0;      // requests applied at the store
  // Called for every request the store applies, with its reply (tests record what they need).
  std::function<void(std::size_t node, const sim::StoreRequest&, const sim::StoreReply&)> on_apply;
  // Requests for which it says yes are lost on the way: the store never sees them.
  std::function<bool(std::size_t node, const sim::StoreRequest&)> lose;

  void deliver_out(const servers::StoreOutput& out) {
    for (const auto& n : out.notifications) {
      const auto to = static_cast<std::size_t>(n.to);
      if (!alive[to]) continue;
      ++watch_events;
      ctxs[to]->deliver(*nodes[to], n.event);
    }
  }
  // Applies every request sent by candidate i so far, delivering replies at once.
  bool answer(std::size_t i) {
    bool any = false;
    while (alive[i] && answered[i] < ctxs[i]->store_calls.size()) {
      const sim::StoreRequest request = ctxs[i]->store_calls[answered[i]++].request;
      if (lose && lose(i, request)) continue;
      servers::StoreOutput out;
      const sim::StoreReply reply =
          store.apply(static_cast<sim::NodeId>(i), request, store_now, out);
      ++requests;
      if (on_apply) on_apply(i, request, reply);
      ctxs[i]->deliver(*nodes[i], reply);
      deliver_out(out);
      any = true;
    }
    return any;
  }
  void answer_all() {
    for (int guard = 0; guard < 100; ++guard) {
      bool any = false;
      for (std::size_t i = 0; i < nodes.size(); ++i) any = answer(i) || any;
      if (!any) return;
    }
    FAIL("requests kept coming");
  }
  // One after another, so that candidate i's requests reach the store before candidate i+1's.
  void start() {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      nodes[i]->on_start(*ctxs[i]);
      answer_all();
    }
  }
  // Candidate i is gone: no more requests, and the store drops its watches.
  void crash(std::size_t i) {
    alive[i] = false;
    store.drop_watches_of(static_cast<sim::NodeId>(i));
  }
  // Every clock moves by d; the store expires what is due.
  void advance(sim::Duration d) {
    store_now += d;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (alive[i]) ctxs[i]->advance(d);
    }
    servers::StoreOutput out;
    store.expire_leases(store_now, out);
    deliver_out(out);
    answer_all();
  }
  // Fires candidate i's due timers, answering or losing what it sends.
  void tick(std::size_t i, bool reach_store = true) {
    for (;;) {
      const auto t = ctxs[i]->next_timer();
      if (!t || t->due > ctxs[i]->now()) break;
      ctxs[i]->fire(*nodes[i], t->id);
      if (reach_store) {
        answer_all();
      } else {
        answered[i] = ctxs[i]->store_calls.size();
      }
    }
  }
  // Runs the world in 10ms steps for d; `cut` candidates reach nothing.
  void run_for(sim::Duration d, std::vector<std::size_t> cut = {}) {
    using namespace std::chrono_literals;
    for (sim::Duration t{0}; t < d; t += 10ms) {
      advance(10ms);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!alive[i]) continue;
        const bool isolated = std::find(cut.begin(), cut.end(), i) != cut.end();
        tick(i, !isolated);
      }
    }
  }
  std::size_t leaders() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) n += alive[i] && nodes[i]->leads();
    return n;
  }
};

}  // namespace electsim::testing
