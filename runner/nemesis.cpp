// electsim search's nemesis (runner/search.hpp): the world it may aim at, the faults of one run
// drawn from the fault catalogue's rows, and the end of the safety phase that heals them.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "protocols/registry.hpp"
#include "runner/search.hpp"
#include "runner/search_detail.hpp"
#include "servers/world.hpp"
#include "sim/assert.hpp"
#include "sim/rng.hpp"

namespace electsim::runner {

namespace search_detail {

using sim::Duration;
using sim::FaultKind;

std::string ms_text(Duration d) {
  return fmt::format("{}ms", std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

bool store_kind(FaultKind k) {
  return k == FaultKind::store_pause;
}

// ---- The end of the safety phase ----------------------------------------------------------------

// What ends the safety phase, derived from the nemesis's faults: a heal of every partition, cut
// and isolation, then a drift reset for each clock those faults set drifting, in the order of
// their first drift. Offsets and steps stay: a clock that jumped is a fact, not a fault in
// progress.
namespace {

using nlohmann::json;

std::vector<json> phase_end_faults(const std::vector<json>& nemesis, const SearchConfig& config) {
  std::vector<json> end = {{{"at", ms_text(config.safety)}, {"kind", "heal"}}};
  std::vector<json> drifted;
  for (const json& f : nemesis) {
    if (f.value("kind", "") != "clock_drift") continue;
    if (std::find(drifted.begin(), drifted.end(), f["target"]) != drifted.end()) continue;
    drifted.push_back(f["target"]);
    end.push_back({{"at", ms_text(config.safety)},
                   {"kind", "clock_drift"},
                   {"target", f["target"]},
                   {"drift_ppm", 0}});
  }
  return end;
}

}  // namespace

// A run's faults: the nemesis's, in time order, then the end of the safety phase.
nlohmann::json schedule_of(const std::vector<nlohmann::json>& nemesis, const SearchConfig& config) {
  nlohmann::json all = nlohmann::json::array();
  for (const nlohmann::json& f : nemesis) all.push_back(f);
  for (nlohmann::json& f : phase_end_faults(nemesis, config)) all.push_back(std::move(f));
  return all;
}

}  // namespace search_detail

namespace {

using nlohmann::json;
using search_detail::ms_text;
using search_detail::schedule_of;
using search_detail::store_kind;
using sim::Duration;
using sim::FaultKind;

// ---- The nemesis --------------------------------------------------------------------------------

// How often a fault that a server can take is aimed at one of the world's servers instead of a
// node: one time in kServerOdds (and a disk stall, with a replicated store, one time in two).
constexpr std::uint64_t kServerOdds = 4;

class Nemesis {
 public:
  Nemesis(const SearchConfig& config, std::uint64_t seed, const SearchWorld& world)
      : config_(config), rng_(seed, sim::StreamPurpose::nemesis, 0), world_(world) {
    for (int k = 0; k < sim::kFaultKindCount; ++k) {
      const auto kind = static_cast<FaultKind>(k);
      if (config.weights[static_cast<std::size_t>(k)] == 0) continue;
      if (store_kind(kind) && !world_.store) continue;
      kinds_.push_back(kind);
      total_weight_ += config.weights[static_cast<std::size_t>(k)];
    }
  }

  // The faults of one run, in time order, then the end of the safety phase.
  json schedule(Coverage* coverage) {
    if (kinds_.empty()) return json::array();
    const auto count = static_cast<std::uint32_t>(
        rng_.between(config_.faults_min, std::max(config_.faults_min, config_.faults_max)));
    std::vector<std::pair<std::int64_t, json>> drawn;
    for (std::uint32_t i = 0; i < count; ++i) {
      const FaultKind kind = pick_kind();
      const std::int64_t safety_ms = millis(config_.safety);
      const std::int64_t at = rng_.between(0, std::max<std::int64_t>(0, safety_ms - 2));
      json f = fault(kind, at, safety_ms);
      if (f.is_null()) continue;
      if (coverage != nullptr) coverage->fault_kinds |= 1u << static_cast<unsigned>(kind);
      drawn.emplace_back(at, std::move(f));
    }
    std::stable_sort(drawn.begin(), drawn.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<json> nemesis;
    for (auto& [at, f] : drawn) nemesis.push_back(std::move(f));
    return schedule_of(nemesis, config_);
  }

 private:
  static std::int64_t millis(Duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }

  FaultKind pick_kind() {
    std::uint64_t r = rng_.below(total_weight_);
    for (FaultKind k : kinds_) {
      const std::uint32_t w = config_.weights[static_cast<std::size_t>(k)];
      if (r < w) return k;
      r -= w;
    }
    return kinds_.back();
  }

  // A target for a fault on a node: the leader half the time (that is where the bugs are), else
  // a follower or a node by id.
  json node_target() {
    const std::uint64_t r = rng_.below(4);
    if (r < 2) return "leader";
    if (r == 2) return "follower";
    return json(rng_.below(world_.nodes));
  }

  // The world's servers that a fault of `kind` can hit, as groups of one kind of server: the
  // replicated store's members, Redlock's Redis masters, the database server; only those whose
  // kind takes the fault (ServerTraits::faults), as the loader would refuse any other. A process
  // fault (crash, pause, isolate) aims at a store member by the role it holds when the fault
  // fires; a clock fault names a member, so that the healing phase can reset its drift.
  static bool takes(const SearchServers& g, FaultKind kind) {
    return (g.faults & sim::fault_bit(kind)) != 0;
  }
  std::size_t server_groups(FaultKind kind) const {
    std::size_t n = 0;
    for (const SearchServers& g : world_.servers) n += takes(g, kind) ? 1 : 0;
    return n;
  }
  // The group that takes `kind` by role, or null.
  const SearchServers* by_role(FaultKind kind) const {
    for (const SearchServers& g : world_.servers) {
      if (!g.roles.empty() && takes(g, kind)) return &g;
    }
    return nullptr;
  }
  json role_target(const SearchServers& g) {
    return g.roles + (rng_.below(2) == 0 ? "_leader" : "_follower");
  }
  // One of the group's servers: a lone server by its name, else one drawn by index.
  json one_of(const SearchServers& g) {
    if (g.names.size() == 1 && g.names.front().find(':') == std::string::npos) {
      return g.names.front();
    }
    return g.names[rng_.below(g.names.size())];
  }
  json server_target(FaultKind kind) {
    std::uint64_t group = rng_.below(server_groups(kind));
    for (const SearchServers& g : world_.servers) {
      if (!takes(g, kind)) continue;
      if (group-- != 0) continue;
      if (!g.roles.empty() && sim::fault_info(kind).effect != sim::FaultEffect::clock) {
        return role_target(g);
      }
      return one_of(g);
    }
    return nullptr;
  }
  // A node target, or one time in kServerOdds a server's that obeys `kind`.
  json process_target(FaultKind kind) {
    if (server_groups(kind) > 0 && rng_.below(kServerOdds) == 0) return server_target(kind);
    return node_target();
  }

  // Every endpoint a link fault can name: the nodes, then the servers.
  std::vector<json> endpoints() const {
    std::vector<json> all;
    for (std::size_t n = 0; n < world_.nodes; ++n) all.emplace_back(n);
    for (const SearchServers& g : world_.servers) {
      for (const std::string& name : g.names) all.emplace_back(name);
    }
    return all;
  }

  // A duration that ends inside the safety phase, or 0 when none fits.
  std::int64_t duration_ms(std::int64_t at, std::int64_t safety_ms) {
    const std::int64_t room = std::min(millis(config_.max_fault_duration), safety_ms - at - 1);
    if (room < 1) return 0;
    return rng_.between(1, room);
  }

  // The leader with 0 to (n-1)/2 - 1 followers against the others, as Jepsen's partitions aimed
  // at the leader. One time in three (with three nodes or more) the partition is partial: some of
  // the others are in neither group and keep their links to both sides, as Jepsen's bridge, so
  // a node can hear two leaders. Each server goes to a side at even odds; Redis masters each on
  // their own, a replicated store whole, but one time in three with one member on the other side.
  json partition_groups() {
    json minority = json::array({"leader"});
    const std::uint64_t extra = world_.nodes > 2 ? rng_.below((world_.nodes - 1) / 2) : 0;
    for (std::uint64_t i = 0; i < extra; ++i) minority.push_back("follower");
    json majority = json::array();
    const std::uint64_t others = world_.nodes - 1 - extra;
    if (others >= 2 && rng_.below(3) == 0) {
      const std::uint64_t bridges = rng_.between(1, others - 1);
      for (std::uint64_t i = 0; i < others - bridges; ++i) majority.push_back("follower");
    } else {
      majority.push_back("rest");
    }
    auto side = [&](json endpoint) {
      (rng_.below(2) == 0 ? majority : minority).push_back(std::move(endpoint));
    };
    for (const SearchServers& g : world_.servers) {
      if (g.roles.empty()) {
        for (const std::string& name : g.names) side(name);
        continue;
      }
      const bool on_majority = rng_.below(2) == 0;
      const std::uint64_t odd_one =
          rng_.below(3) == 0 ? rng_.below(g.names.size()) : g.names.size();
      for (std::size_t k = 0; k < g.names.size(); ++k) {
        ((k == odd_one) != on_majority ? majority : minority).push_back(g.names[k]);
      }
    }
    return json::array({minority, majority});
  }

  // The target of a fault of `kind`, aimed as its catalogue row says; null for none to aim at.
  json aim(FaultKind kind, sim::NemesisAim how) {
    switch (how) {
      case sim::NemesisAim::none:
        return nullptr;
      case sim::NemesisAim::process:
        return process_target(kind);
      case sim::NemesisAim::leader:
        return "leader";
      case sim::NemesisAim::node:
        return node_target();
      case sim::NemesisAim::node_id:
        return json(rng_.below(world_.nodes));
      case sim::NemesisAim::clock:
        if (server_groups(kind) > 0 && rng_.below(kServerOdds) == 0) return server_target(kind);
        return json(rng_.below(world_.nodes));
      case sim::NemesisAim::member_or_node: {
        const SearchServers* members = by_role(kind);
        return members != nullptr && rng_.below(2) == 0 ? role_target(*members) : node_target();
      }
      case sim::NemesisAim::record:
        // A person clears the record a coordinator keeps: the database's row and locks before
        // the single store's leader key (a replicated store cannot be cleared that way).
        for (auto g = world_.servers.rbegin(); g != world_.servers.rend(); ++g) {
          if (takes(*g, kind) && g->record && g->roles.empty() && g->names.size() == 1) {
            return g->names.front();
          }
        }
        return nullptr;
    }
    return nullptr;
  }

  // A value for `key` of a fault of `kind`, into `f`, drawn within the search's intensity; false
  // when the world leaves nothing to draw (a cut needs two endpoints).
  bool draw_key(FaultKind kind, std::string_view key, json& f) {
    if (key == "groups") {
      f["groups"] = partition_groups();
    } else if (key == "from") {
      const std::vector<json> all = endpoints();
      if (all.size() < 2) return false;
      const std::uint64_t a = rng_.below(all.size());
      std::uint64_t b = rng_.below(all.size() - 1);
      if (b >= a) ++b;
      f["from"] = all[a];
      f["to"] = all[b];
    } else if (key == "to") {
      // Drawn with "from".
    } else if (key == "probability") {
      const std::uint32_t most =
          kind == FaultKind::loss ? config_.max_loss_percent : config_.max_duplicate_percent;
      f["probability"] =
          static_cast<double>(rng_.between(std::min<std::uint32_t>(5, most), most)) / 100.0;
    } else if (key == "extra") {
      const std::int64_t most = millis(config_.max_latency_spike);
      f["extra"] = {
          {"dist", "uniform"},
          {"min", "0ms"},
          {"max", fmt::format("{}ms", rng_.between(std::min<std::int64_t>(10, most), most))}};
    } else if (key == "offset" || key == "by") {
      const std::int64_t jump = millis(config_.max_clock_jump);
      f[std::string(key)] = fmt::format("{}ms", rng_.between(-jump, jump));
    } else if (key == "drift_ppm") {
      f["drift_ppm"] = rng_.between(-config_.max_drift_ppm, config_.max_drift_ppm);
    } else {
      ELECTSIM_ASSERT(false, "the nemesis draws every key of the fault catalogue");
    }
    return true;
  }

  // One fault of `kind` at `at`, from its catalogue row: its target, then its keys, then a
  // duration that ends inside the safety phase; null when none fits.
  json fault(FaultKind kind, std::int64_t at, std::int64_t safety_ms) {
    const sim::FaultKindInfo& info = sim::fault_info(kind);
    json f = {{"at", fmt::format("{}ms", at)}, {"kind", info.name}};
    if (info.target != sim::FaultNeed::no) {
      json target = aim(kind, info.aim);
      if (target.is_null()) return nullptr;
      f["target"] = std::move(target);
    }
    for (const char* key : info.keys) {
      if (key != nullptr && !draw_key(kind, key, f)) return nullptr;
    }
    if (info.duration != sim::FaultNeed::no) {
      const std::int64_t d = duration_ms(at, safety_ms);
      if (d == 0) return nullptr;
      f["duration"] = fmt::format("{}ms", d);
    }
    return f;
  }

  const SearchConfig& config_;
  sim::Rng rng_;
  SearchWorld world_;
  std::vector<FaultKind> kinds_;
  std::uint64_t total_weight_ = 0;
};

}  // namespace

SearchWorld search_world(const Scenario& scenario) {
  SearchWorld w;
  w.nodes = scenario.world.node_count;
  w.store = scenario.prepared.uses_store;
  sim::WorldConfig world;
  world.node_count = scenario.world.node_count;
  servers::add_services(world, scenario.services);
  // The servers the protocol depends on: the store when leadership depends on a coordinator, a
  // kind some protocol needs (ProtocolInfo::servers) when the one running needs it. A server of
  // any other kind is in the world only because the scenario put it there.
  const protocols::ProtocolInfo* running = protocols::find_protocol(scenario.protocol);
  const auto needs = [](const protocols::ProtocolInfo& p, std::string_view kind) {
    return std::find(p.servers.begin(), p.servers.end(), kind) != p.servers.end();
  };
  const auto depends = [&](std::string_view kind) {
    if (kind == sim::server_kind::store) return scenario.prepared.uses_store;
    const auto all = protocols::all_protocols();
    if (std::none_of(all.begin(), all.end(), [&](const auto& p) { return needs(p, kind); })) {
      return true;
    }
    return running != nullptr && needs(*running, kind);
  };
  std::string last_group;
  for (const sim::ServerSpec& s : world.servers) {
    if (!s.traits.nemesis || s.traits.faults == 0 || !depends(s.kind)) continue;
    if (s.group.empty() || s.group != last_group || w.servers.empty()) {
      w.servers.push_back(SearchServers{{}, s.traits.faults, {}, true});
    }
    last_group = s.group;
    SearchServers& g = w.servers.back();
    g.names.push_back(s.name);
    if (g.names.size() > 1 && s.kind == sim::server_kind::store) g.roles = s.group;
    if (s.kind == sim::server_kind::store) {
      g.record = g.names.size() == 1 && !scenario.services.store.leader_key.empty();
    }
  }
  return w;
}

json search_run_document(const json& base, const SearchConfig& config, std::uint64_t seed,
                         const SearchWorld& world, Coverage* coverage) {
  json d = base;
  for (const char* key : {"faults", "random_faults", "variants", "sweep", "search", "found",
                          "expect_by_protocol", "expect_by_class"}) {
    d.erase(key);
  }
  d["seed"] = seed;
  d["duration"] = ms_text(config.safety + config.heal_bound);
  Nemesis nemesis(config, seed, world);
  d["faults"] = nemesis.schedule(coverage);
  return d;
}

}  // namespace electsim::runner
