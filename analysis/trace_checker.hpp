// The rules of an event stream (analysis/trace_reader.cpp checks every trace it reads with
// them). Private to analysis/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/trace.hpp"
#include "sim/event.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"
#include "sim/store_types.hpp"

namespace electsim::analysis {

// The rules an event stream written by the kernel always keeps, checked on a trace read back so
// that a damaged or hand-edited file is refused instead of analysed: one run_start first, naming
// the header's nodes and seed; events only from endpoints that can emit them; no negative epoch,
// token, revision, lease, request id or duration; store requests and revisions that only grow
// (a duplicated line breaks them); crash, restart and resume in an order a process can live;
// servers the header's world has (store members below its store_members; the events of a
// store's own Raft only with a replicated store) and operations the server knows.
class StreamChecker {
 public:
  explicit StreamChecker(const TraceHeader& h)
      : header_(h), nodes_(h.node_count), sharded_(!h.topology.store_shards().empty()) {}

  std::string check(const sim::Event& e) {
    using K = sim::EventKind;
    if (!started_ && e.kind != K::run_start) return "expected run_start as the first event";
    if (e.time > sim::Time(header_.duration)) {
      return fmt::format("an event at {} ns, after the run's duration of {} ns", e.time.ns,
                         header_.duration.count());
    }
    switch (e.kind) {
      case K::run_start:
        if (started_) return "a second run_start (a duplicated or spliced line)";
        started_ = true;
        if (e.a != static_cast<std::int64_t>(header_.node_count)) {
          return fmt::format("run_start names {} nodes, the header {}", e.a, header_.node_count);
        }
        if (static_cast<std::uint64_t>(e.b) != header_.seed) {
          return "run_start names another seed than the header";
        }
        return {};
      case K::belief:
        if (auto p = need_node(e.node, "node")) return *p;
        if (e.b != sim::kNoNode && !is_node(e.b))
          return "field \"leader\": not a node of this trace";
        return non_negative(e.a, "epoch");
      case K::crash:
      case K::restart: {
        if (auto p = need_process(e.node, "node")) return *p;
        Life& life = life_of(e.node);
        if (e.kind == K::crash) {
          if (life.down) return fmt::format("{} crashes while it is down", process_name(e.node));
          life.down = true;
          life.paused = false;
        } else {
          if (!life.down) return fmt::format("{} restarts while it is up", process_name(e.node));
          life.down = false;
        }
        return {};
      }
      case K::pause:
      case K::resume: {
        if (auto p = need_process(e.node, "node")) return *p;
        Life& life = life_of(e.node);
        if (life.down) {
          return fmt::format("{} pauses or resumes while down", process_name(e.node));
        }
        if (is_server(e.node)) return non_negative(e.a, "duration_ns");
        if (e.kind == K::pause) {
          // A pause during a pause extends it; one resume ends both.
          life.paused = true;
          return non_negative(e.a, "duration_ns");
        }
        if (!life.paused) return fmt::format("node {} resumes while not paused", e.node);
        life.paused = false;
        return {};
      }
      case K::clock_change:
        return need_process(e.node, "node").value_or("");
      case K::timer_fire:
      case K::store_reply:
      case K::watch_notify:
      case K::sink_reply:
        if (auto p = need_node(e.node, "node")) return *p;
        return non_negative(e.a, e.kind == K::sink_reply ? "token" : "value");
      case K::msg_send:
      case K::msg_deliver:
      case K::msg_drop:
        if (auto p = need_node(e.node, e.kind == K::msg_deliver ? "to" : "from")) return *p;
        return need_node(e.peer, e.kind == K::msg_deliver ? "from" : "to").value_or("");
      case K::store_request:
        // An election node's, or a proxy's (a lease aggregator asks the store for its clients).
        if (auto p = need_process(e.node, "node")) return *p;
        if (e.a <= last_request_) {
          return fmt::format("store request {} after request {} (ids only grow)", e.a,
                             last_request_);
        }
        last_request_ = e.a;
        return {};
      case K::store_apply:
        if (auto p = need_process(e.node, "node")) return *p;
        if (e.d > last_request_ || e.d < 0) {
          return fmt::format("store request {} applied before it was sent", e.d);
        }
        if (e.a < 0 || e.c < 0) return "a negative revision or lease";
        return {};
      case K::store_change:
        if (e.node != sim::kNoNode && !is_node(e.node)) {
          return "field \"owner\": not a node of this trace";
        }
        if (sharded_) {
          // Each shard counts its own revisions; a key lives in one shard.
          auto it = key_revisions_.find(e.text);
          if (it == key_revisions_.end()) {
            it = key_revisions_.emplace(std::string(e.text), std::int64_t{-1}).first;
          }
          if (e.a <= it->second) {
            return fmt::format(
                "store revision {} of a key after its revision {} (revisions only "
                "grow)",
                e.a, it->second);
          }
          it->second = e.a;
          return non_negative(e.b, "lease");
        }
        // One revision may change several keys (a transaction's puts, a lease's expiry deleting
        // every key on it, as etcd's do); it never goes back.
        if (e.a < last_revision_) {
          return fmt::format("store revision {} after revision {} (revisions never go back)", e.a,
                             last_revision_);
        }
        last_revision_ = e.a;
        return non_negative(e.b, "lease");
      case K::lease_expire:
        return non_negative(e.a, "lease");
      case K::sink_write:
        if (auto p = need_node(e.node, "writer")) return *p;
        if (e.a < 0 || e.d < 0) return "a negative fencing token";
        return {};
      case K::sink_send:
        if (auto p = need_node(e.node, "writer")) return *p;
        if (e.a < 0) return "a negative fencing token";
        if (e.d < 0) return "field \"late_ns\": expected a duration from 0";
        return non_negative(e.c, "send_delay_ns");
      case K::store_pause:
        return non_negative(e.a, "duration_ns");
      case K::fault:
        if (e.a < 0 || e.b < 0) return "a negative fault index or duration";
        return {};
      case K::server_role:
        if (auto p = need_member(e.node, "member", e.kind)) return *p;
        if (e.b != sim::kNoNode) {
          if (auto p = need_member(e.b, "leader", e.kind)) return *p + " or null";
        }
        return non_negative(e.a, "term");
      case K::raft_commit:
        if (auto p = need_member(e.node, "leader", e.kind)) return *p;
        if (e.a < 1) return "field \"index\": expected a log index from 1";
        return non_negative(e.b, "term");
      case K::lease_refresh:
        if (auto p = need_member(e.node, "leader", e.kind)) return *p;
        if (e.a < 0) return "field \"leases\": expected a count from 0";
        return non_negative(e.b, "term");
      case K::client_failover:
        if (auto p = need_node(e.node, "node")) return *p;
        if (auto p = need_member(e.peer, "member", e.kind)) return *p;
        return non_negative(e.a, "request");
      case K::server_request:
        if (auto p = need_node(e.node, "node")) return *p;
        if (auto p = need_server_op(e.peer, e.text)) return *p;
        return non_negative(e.a, "request");
      case K::conn_break: {
        const auto end = [&](sim::NodeId n) { return is_node(n) || is_server(n); };
        if (!end(e.node) || !end(e.peer) || e.node == e.peer) {
          return "fields \"node\" and \"peer\": expected the two ends of a connection";
        }
        return {};
      }
      case K::run_end:
      case K::store_resume:
      case K::network_change:
        return {};
    }
    return "an unknown event kind";
  }

 private:
  bool is_node(std::int64_t n) const {
    return n >= 0 && static_cast<std::uint64_t>(n) < header_.node_count;
  }
  static std::size_t idx(sim::NodeId n) { return static_cast<std::size_t>(n); }
  // Whether a server of kind "store" listens at `n`: the store's members, or a sharded store's
  // shards' members.
  bool is_store_server(sim::NodeId n) const {
    return header_.topology.kind_of(n) == sim::server_kind::store;
  }
  bool is_server(sim::NodeId n) const { return header_.topology.server(n) != nullptr; }

  // Whether a process is down or paused, to check that crash, restart, pause and resume come in
  // an order it can live: nodes by id, servers by address.
  struct Life {
    bool down = false;
    bool paused = false;
  };
  Life& life_of(sim::NodeId n) { return is_node(n) ? nodes_[idx(n)] : servers_[n]; }
  std::string process_name(sim::NodeId n) const {
    return n >= 0 ? fmt::format("node {}", n) : "server " + header_.topology.name_of(n);
  }
  // A node of the header, or a server its world has: store member K only below the header's
  // store_members (the single store is member 0).
  std::optional<std::string> need_process(sim::NodeId n, const char* field) const {
    if (is_node(n) || is_server(n)) return std::nullopt;
    return need_node(n, field);
  }
  // A member of the replicated store the header names: events of a store's own Raft need one.
  std::optional<std::string> need_member(sim::NodeId n, const char* field,
                                         sim::EventKind kind) const {
    if (header_.store_members <= 1) {
      return fmt::format(
          "a {} event, but the header names no replicated store (its world has no more than "
          "one server of kind \"store\")",
          sim::event_kind_name(kind));
    }
    if (is_store_server(n)) return std::nullopt;
    std::string members;
    for (const sim::NamedEndpoint& s : header_.topology.servers()) {
      if (s.kind == sim::server_kind::store) {
        members += (members.empty() ? "\"" : ", \"") + s.name + "\"";
      }
    }
    return fmt::format(
        "field \"{}\": expected a member of the header's store ({}), found {}", field, members,
        n == sim::kNoNode ? std::string("null") : "\"" + header_.topology.name_of(n) + "\"");
  }
  // A server_request goes to a server that answers requests and names an operation it lists in
  // the header (sim::ServerTraits::requests).
  std::optional<std::string> need_server_op(sim::NodeId server, std::string_view op) const {
    const sim::Topology& topology = header_.topology;
    const sim::NamedEndpoint* s = topology.server(server);
    if (s == nullptr || s->traits.requests.empty()) {
      std::string servers;
      for (const sim::NamedEndpoint& each : topology.servers()) {
        if (each.traits.requests.empty()) continue;
        servers += (servers.empty() ? "\"" : ", \"") + each.name + "\"";
      }
      return "field \"server\": expected a server of the header that answers requests" +
             (servers.empty() ? std::string(" (it has none)") : " (" + servers + ")");
    }
    const std::vector<std::string>& ops = s->traits.requests;
    if (std::find(ops.begin(), ops.end(), op) != ops.end()) return std::nullopt;
    std::string list;
    for (const std::string& name : ops) list += (list.empty() ? "\"" : ", \"") + name + "\"";
    std::string found;
    append_json_string(found, op.substr(0, 64));
    return fmt::format("field \"op\": expected an operation of \"{}\" ({}), found {}", s->name,
                       list, found);
  }
  std::optional<std::string> need_node(sim::NodeId n, const char* field) const {
    if (is_node(n)) return std::nullopt;
    // A server by the name a scenario gives it (the store's first member is "store").
    const sim::Topology& topology = header_.topology;
    std::string found;
    if (n == sim::kNoNode) {
      found = "null";
    } else if (n == topology.store_member(0)) {
      found = "\"store\"";
    } else if (topology.server(n) != nullptr) {
      append_json_string(found, topology.name_of(n).substr(0, 64));
    } else {
      found = std::to_string(n);
    }
    return fmt::format("field \"{}\": expected a node of this trace (0 to {}), found {}", field,
                       header_.node_count == 0 ? 0 : header_.node_count - 1, found);
  }
  static std::string non_negative(std::int64_t v, const char* field) {
    if (v >= 0) return {};
    return fmt::format("field \"{}\": expected a value from 0, found {}", field, v);
  }

  const TraceHeader& header_;
  bool started_ = false;
  std::vector<Life> nodes_;
  std::map<sim::NodeId, Life> servers_;  // by address, for the header's servers only
  std::int64_t last_request_ = -1;
  std::int64_t last_revision_ = -1;
  // A sharded store: the revisions grow key by key (each shard has its own), kept per key.
  bool sharded_ = false;
  std::map<std::string, std::int64_t, std::less<>> key_revisions_;
};

}  // namespace electsim::analysis
