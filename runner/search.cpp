// electsim search (runner/search.hpp): the nemesis, the two phases, the properties, the parallel
// runs in a deterministic order, and the shrinker.
#include "runner/search.hpp"
#include "servers/world.hpp"
#include "sim/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "analysis/expect.hpp"
#include "runner/run.hpp"
#include "runner/threads.hpp"
#include "sim/rng.hpp"
#include "sim/store_types.hpp"

namespace electsim::runner {
namespace {

using nlohmann::json;
using sim::Duration;
using sim::FaultKind;

struct PropertyInfo {
  Property property;
  const char* name;
  const char* meaning;
};

constexpr std::array<PropertyInfo, kPropertyCount> kProperties = {{
    {Property::stale_write, "stale_write",
     "split-brain with a stale write accepted: a deposed leader wrote after a newer epoch was "
     "granted"},
    {Property::overwrite, "overwrite",
     "a stale write accepted over newer data (the sink took an old token after a newer one)"},
    {Property::same_epoch, "same_epoch", "two leaders announced the same epoch"},
    {Property::no_recovery, "no_recovery",
     "after every fault healed, no single leader was writing within the healing bound"},
    {Property::failover, "failover", "a failover took longer than the bound"},
    {Property::expect, "expect", "the scenario's own expect block broke"},
    {Property::store_safety, "store_safety",
     "the replicated store broke its own safety (a bug in the simulated store)"},
    {Property::stale_action, "stale_action",
     "a leader acted on a belief it should have known was stale: it committed a write after its "
     "own renew deadline had passed on its clock"},
    {Property::invariant, "invariant",
     "the simulation broke one of its own invariants, an always-on assertion: a bug in one of "
     "electsim's models"},
}};

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

// A run's faults: the nemesis's, in time order, then the end of the safety phase.
json schedule_of(const std::vector<json>& nemesis, const SearchConfig& config) {
  json all = json::array();
  for (const json& f : nemesis) all.push_back(f);
  for (json& f : phase_end_faults(nemesis, config)) all.push_back(std::move(f));
  return all;
}

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

// ---- One run ------------------------------------------------------------------------------------

struct Probe {
  bool loaded = false;
  std::string problem;  // why the document did not load (a nemesis bug: never expected)
  std::uint32_t violated = 0;
  std::string invariant;  // the invariant the run broke, if it broke one
  Coverage coverage;
  sim::Duration threat{0};   // the longest a fault of this run could silence a leader
  bool healed = false;       // the run had faults, healed at the end of its safety phase
  bool incomplete = false;   // the limit on events cut it short
  sim::Duration outage{0};   // the run's longest service outage
  bool never_again = false;  // its service never wrote again
};

// How long a fault can keep a leader from being heard: a pause's, partition's, isolation's or
// cut's duration (a disk stall's, a store pause's), or a clock jump's size.
sim::Duration silencing(const sim::FaultSpec& f) {
  switch (sim::fault_info(f.kind).effect) {
    case sim::FaultEffect::process:
      return f.kind == FaultKind::pause ? f.duration : sim::Duration(0);
    case sim::FaultEffect::links:
      return f.duration;
    case sim::FaultEffect::clock:
      return f.clock_amount < sim::Duration(0) ? -f.clock_amount : f.clock_amount;
    case sim::FaultEffect::window:
    case sim::FaultEffect::command:
    case sim::FaultEffect::server:
      return f.kind == FaultKind::disk_stall || f.kind == FaultKind::store_pause ? f.duration
                                                                                 : sim::Duration(0);
  }
  return sim::Duration(0);
}

std::uint32_t violations(const RunResult& r, const SearchConfig& c) {
  const analysis::Report& rep = r.report;
  std::uint32_t v = 0;
  auto mark = [&](Property p, bool broken) {
    if (broken && c.wants(p)) v |= 1u << static_cast<unsigned>(p);
  };
  mark(Property::stale_write, rep.stale_writes_accepted > 0 && rep.split_brain_time.count() > 0);
  mark(Property::overwrite, rep.stale_writes_overwriting > 0);
  mark(Property::same_epoch, rep.same_epoch_leaders_total > 0);
  // Recovery is judged from the heal that ends the safety phase; a run with nothing to heal (the
  // nemesis drew no fault that applies) has nothing to recover from.
  mark(Property::no_recovery,
       rep.last_heal_at && (!rep.heal_recovery || *rep.heal_recovery > c.heal_bound));
  if (c.failover_bound) {
    bool slow = false;
    for (const auto& f : rep.failovers) {
      if (f.failover && *f.failover > *c.failover_bound) slow = true;
    }
    mark(Property::failover, slow);
  }
  mark(Property::expect, !r.verdict.ok());
  mark(Property::stale_action, rep.writes_after_deadline > 0);
  const auto store = analysis::metric_value(rep, "store_safety_violations");
  mark(Property::store_safety, store && *store > 0);
  return v;
}

Probe probe(const json& document, const std::string& source, const LoadOptions& load,
            const SearchConfig& config, const std::atomic<bool>* cancel) {
  Probe p;
  LoadOptions o = load;
  o.variant.reset();  // the base document has the variant, the overrides and the protocol
  o.overrides.clear();
  o.seed.reset();
  o.protocol.reset();
  LoadResult loaded = load_scenario_json(document, source, o);
  if (!loaded.scenario) {
    const auto messages = loaded.messages();
    p.problem = messages.empty() ? std::string("the run's scenario did not load") : messages[0];
    return p;
  }
  p.loaded = true;
  for (const sim::FaultSpec& f : loaded.scenario->world.faults) {
    p.threat = std::max(p.threat, silencing(f));
  }
  RunOptions run;
  run.cancel = cancel;
  std::optional<RunResult> result;
  try {
    // A broken invariant ends this run only: it is a finding, not the end of the search.
    const sim::ThrowOnBrokenInvariant throw_instead;
    result = run_scenario(*loaded.scenario, run);
  } catch (const sim::InvariantBroken& e) {
    p.invariant = e.what();
    if (config.wants(Property::invariant))
      p.violated = 1u << static_cast<unsigned>(Property::invariant);
    return p;
  }
  const RunResult& r = *result;
  p.violated = violations(r, config);
  // A run cut short by the limit on events never reached its healing phase's end: what it saw
  // of safety stands, but nothing it did not get to can be judged.
  if (r.stats.hit_event_limit) {
    p.incomplete = true;
    for (const Property q : {Property::no_recovery, Property::failover, Property::expect}) {
      p.violated &= ~(1u << static_cast<unsigned>(q));
    }
  }
  p.healed = r.report.last_heal_at.has_value();
  p.outage = r.report.outage_max.value_or(sim::Duration(0));
  p.never_again = r.report.outages_unresolved > 0;
  p.coverage.roles = r.report.roles_seen;
  const protocols::ProtocolInfo* info = protocols::find_protocol(loaded.scenario->protocol);
  if (info != nullptr) {
    for (std::size_t t = 0; t < info->message_types.size() && t < 64; ++t) {
      if (r.report.messages_by_type.count(info->message_types[t]) != 0) {
        p.coverage.message_types |= std::uint64_t{1} << t;
      }
    }
  }
  for (int op = 0; op < sim::kStoreOpCount; ++op) {
    if (r.report.store_requests[static_cast<std::size_t>(op)] > 0) {
      p.coverage.store_ops |= 1u << static_cast<unsigned>(op);
    }
  }
  return p;
}

// ---- Shrinking ----------------------------------------------------------------------------------

// The end of the safety phase, not the nemesis's: the heal there and the clock resets with it.
bool phase_end(const json& f, const SearchConfig& config) {
  const std::string kind = f.value("kind", "");
  return f.value("at", "") == ms_text(config.safety) && (kind == "heal" || kind == "clock_drift");
}

// The faults the nemesis drew in a run's document (what findings and shrinking count).
std::size_t nemesis_faults(const json& d, const SearchConfig& config) {
  std::size_t n = 0;
  for (const json& f : d["faults"]) n += phase_end(f, config) ? 0 : 1;
  return n;
}

class Shrinker {
 public:
  Shrinker(const std::string& source, const LoadOptions& load, const SearchConfig& config,
           Property property, const std::atomic<bool>* cancel)
      : source_(source), load_(load), config_(config), property_(property), cancel_(cancel) {}

  // Still violates the property? Counts against the budget; over budget, says no.
  bool fails(const json& document) {
    if (runs_ >= config_.shrink_budget) {
      exhausted_ = true;
      return false;
    }
    ++runs_;
    const Probe p = probe(document, source_, load_, config_, cancel_);
    const bool failed = p.loaded && ((p.violated >> static_cast<unsigned>(property_)) & 1u);
    if (failed) invariant_ = p.invariant;
    return failed;
  }

  // The invariant the last failing run broke ("" if none): what the written file shows.
  const std::string& invariant() const { return invariant_; }

  bool structural(const json& f) const { return phase_end(f, config_); }

  json shrink(json document, std::vector<std::string>& steps) {
    const std::size_t before = nemesis_count(document);
    document = remove_faults(std::move(document));
    if (nemesis_count(document) < before) {
      steps.push_back(
          fmt::format("removed {} of {} faults", before - nemesis_count(document), before));
    }
    document = shorten(std::move(document), steps);
    document = earlier(std::move(document), steps);
    document = drop_nodes(std::move(document), steps);
    document = fix_draws(std::move(document), steps);
    // The later steps may have made a fault unneeded: remove one at a time to a fixpoint, so
    // that removing any one of those left makes the run pass (1-minimal).
    const std::size_t mid = nemesis_count(document);
    document = remove_one_by_one(std::move(document));
    if (nemesis_count(document) < mid) {
      steps.push_back(fmt::format("then {} more", mid - nemesis_count(document)));
    }
    return document;
  }

  std::uint64_t runs() const { return runs_; }
  bool exhausted() const { return exhausted_; }

  std::size_t nemesis_count(const json& d) const { return nemesis_faults(d, config_); }

 private:
  // Delta debugging (Zeller's ddmin) over the nemesis's faults: remove chunks, halving their
  // size when no chunk can go.
  json remove_faults(json d) {
    std::vector<json> faults = nemesis_of(d);
    std::size_t chunks = 2;
    while (faults.size() >= 2 && !exhausted_) {
      const std::size_t size = (faults.size() + chunks - 1) / chunks;
      bool removed = false;
      for (std::size_t start = 0; start < faults.size(); start += size) {
        std::vector<json> rest;
        for (std::size_t i = 0; i < faults.size(); ++i) {
          if (i < start || i >= start + size) rest.push_back(faults[i]);
        }
        if (fails(with_faults(d, rest))) {
          faults = std::move(rest);
          chunks = std::max<std::size_t>(chunks - 1, 2);
          removed = true;
          break;
        }
      }
      if (removed) continue;
      if (size == 1) break;
      chunks = std::min(chunks * 2, faults.size());
    }
    if (faults.size() == 1 && fails(with_faults(d, {}))) faults.clear();
    return with_faults(d, faults);
  }

  json remove_one_by_one(json d) {
    for (bool again = true; again && !exhausted_;) {
      again = false;
      const std::vector<json> faults = nemesis_of(d);
      for (std::size_t i = 0; i < faults.size(); ++i) {
        std::vector<json> rest = faults;
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
        json candidate = with_faults(d, rest);
        if (fails(candidate)) {
          d = std::move(candidate);
          again = true;
          break;
        }
      }
    }
    return d;
  }

  // Halve each fault's duration while the violation stays.
  json shorten(json d, std::vector<std::string>& steps) {
    std::size_t shortened = 0;
    for (std::size_t i = 0; i < d["faults"].size() && !exhausted_; ++i) {
      if (structural(d["faults"][i]) || !d["faults"][i].contains("duration")) continue;
      bool any = false;
      for (int tries = 0; tries < 8 && !exhausted_; ++tries) {
        const auto current = sim::parse_duration(d["faults"][i]["duration"].get<std::string>());
        if (!current) break;
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*current).count();
        if (ms <= 1) break;
        json candidate = d;
        candidate["faults"][i]["duration"] = fmt::format("{}ms", ms / 2);
        if (!fails(candidate)) break;
        d = std::move(candidate);
        any = true;
      }
      if (any) ++shortened;
    }
    if (shortened > 0) steps.push_back(fmt::format("shortened {} durations", shortened));
    return d;
  }

  // Move each fault to a round time: whole seconds, earlier while it still fails, else one
  // whole second later.
  json earlier(json d, std::vector<std::string>& steps) {
    std::size_t moved = 0;
    for (std::size_t i = 0; i < d["faults"].size() && !exhausted_; ++i) {
      if (structural(d["faults"][i])) continue;
      const auto at = sim::parse_duration(d["faults"][i]["at"].get<std::string>());
      if (!at) continue;
      std::int64_t s = std::chrono::duration_cast<std::chrono::seconds>(*at).count();
      if (std::chrono::seconds(s) == *at) continue;
      bool any = false;
      const std::int64_t down = s;
      for (; s >= 0 && !exhausted_; --s) {
        json candidate = d;
        candidate["faults"][i]["at"] = fmt::format("{}s", s);
        if (!fails(sorted(candidate))) break;
        d = sorted(std::move(candidate));
        any = true;
      }
      // Not earlier: later, to the next whole second, if it still falls in the safety phase
      // and the fault still ends in it.
      const json& f = d["faults"][i];
      const Duration span =
          f.contains("duration")
              ? sim::parse_duration(f["duration"].get<std::string>()).value_or(Duration(0))
              : Duration(0);
      if (!any && !exhausted_ && std::chrono::seconds(down + 1) + span < config_.safety) {
        json candidate = d;
        candidate["faults"][i]["at"] = fmt::format("{}s", down + 1);
        if (fails(sorted(candidate))) {
          d = sorted(std::move(candidate));
          any = true;
        }
      }
      if (any) ++moved;
    }
    if (moved > 0) steps.push_back(fmt::format("moved {} faults to whole seconds", moved));
    return d;
  }

  // Fewer nodes while no fault names the last one by id.
  json drop_nodes(json d, std::vector<std::string>& steps) {
    const std::size_t start = d.value("nodes", 0);
    while (!exhausted_) {
      const std::size_t n = d.value("nodes", 0);
      if (n <= 2 || names_node(d, n - 1)) break;
      json candidate = d;
      candidate["nodes"] = n - 1;
      if (!fails(candidate)) break;
      d = std::move(candidate);
    }
    const std::size_t end = d.value("nodes", 0);
    if (end < start) steps.push_back(fmt::format("{} nodes instead of {}", end, start));
    return d;
  }

  // A distribution's typical value as a constant: the least a uniform draw gives, else its mean,
  // median, scale or value; null when it names none of them.
  static json typical(const json& dist) {
    for (const char* key : {"min", "mean", "median", "scale", "value"}) {
      if (dist.contains(key) && dist[key].is_string()) return dist[key];
    }
    return nullptr;
  }

  // Network noise off and random draws fixed: no background loss or duplication, and every
  // distribution the file gives (latencies, the disks' fsync, the workload's work and send delay)
  // a constant, each where the run still breaks the property without it.
  json fix_draws(json d, std::vector<std::string>& steps) {
    std::vector<std::string> done;
    if (d.contains("network") && d["network"].is_object()) {
      for (const char* key : {"loss", "duplicate"}) {
        if (exhausted_ || !d["network"].contains(key)) continue;
        json candidate = d;
        candidate["network"].erase(key);
        if (fails(candidate)) {
          d = std::move(candidate);
          done.push_back(fmt::format("no background {}", key));
        }
      }
    }
    std::vector<std::pair<std::string, std::string>> draws = {
        {"/network/latency", "latency"},
        {"/disk/fsync", "disk fsync"},
        {"/workload/work", "work"},
        {"/workload/send_delay", "send delay"}};
    const json::json_pointer links("/network/links");
    if (d.contains(links) && d[links].is_array()) {
      for (std::size_t i = 0; i < d[links].size(); ++i) {
        draws.emplace_back(fmt::format("/network/links/{}/latency", i),
                           fmt::format("link {} latency", i));
      }
    }
    for (const auto& [where, label] : draws) {
      const json::json_pointer pointer(where);
      if (exhausted_ || !d.contains(pointer) || !d[pointer].is_object()) continue;
      const json fixed = typical(d[pointer]);
      if (!fixed.is_string()) continue;
      json candidate = d;
      candidate[pointer] = fixed;
      if (fails(candidate)) {
        d = std::move(candidate);
        done.push_back(fmt::format("{} fixed at {}", label, fixed.get<std::string>()));
      }
    }
    // A latency spike's random extra delay becomes its largest value, fixed.
    std::size_t fixed_spikes = 0;
    for (std::size_t i = 0; i < d["faults"].size() && !exhausted_; ++i) {
      const json& f = d["faults"][i];
      if (f.value("kind", "") != "latency_spike" || !f["extra"].is_object()) continue;
      json candidate = d;
      candidate["faults"][i]["extra"] = f["extra"].value("max", "0ms");
      if (fails(candidate)) {
        d = std::move(candidate);
        ++fixed_spikes;
      }
    }
    if (fixed_spikes > 0) {
      done.push_back(fmt::format("{} latency spikes fixed at their largest delay", fixed_spikes));
    }
    for (std::string& s : done) steps.push_back(std::move(s));
    return d;
  }

  bool names_node(const json& d, std::size_t node) const {
    const json id(node);
    for (const json& f : d["faults"]) {
      for (const char* key : {"target", "from", "to"}) {
        if (f.contains(key) && f[key] == id) return true;
      }
      if (f.contains("groups")) {
        for (const json& g : f["groups"]) {
          for (const json& e : g) {
            if (e == id) return true;
          }
        }
      }
    }
    // Per-node clocks and protocol settings name nodes too: keep them.
    return d.contains("clocks") || d.contains("per_node");
  }

  // The nemesis's faults of a document: all but the end of the safety phase.
  std::vector<json> nemesis_of(const json& d) const {
    std::vector<json> faults;
    for (const json& f : d["faults"]) {
      if (!structural(f)) faults.push_back(f);
    }
    return faults;
  }

  // `d` with its nemesis's faults put back in time order (equal times keep their order).
  json sorted(const json& d) const {
    std::vector<json> faults = nemesis_of(d);
    std::stable_sort(faults.begin(), faults.end(), [](const json& a, const json& b) {
      return sim::parse_duration(a["at"].get<std::string>()).value_or(Duration(0)) <
             sim::parse_duration(b["at"].get<std::string>()).value_or(Duration(0));
    });
    return with_faults(d, faults);
  }

  // `d` with these nemesis faults, and the end of the safety phase derived from them: a drift
  // fault that goes takes its reset with it.
  json with_faults(json d, const std::vector<json>& faults) const {
    d["faults"] = schedule_of(faults, config_);
    return d;
  }

  const std::string& source_;
  const LoadOptions& load_;
  const SearchConfig& config_;
  Property property_;
  const std::atomic<bool>* cancel_;
  std::uint64_t runs_ = 0;
  bool exhausted_ = false;
  std::string invariant_;
};

// The expect block a found scenario carries: the bound the violation breaks.
json expect_for(Property p, const SearchConfig& c, const json& original) {
  switch (p) {
    case Property::stale_write:
      return {{"stale_writes_accepted", {{"max", 0}}}};
    case Property::overwrite:
      return {{"stale_writes_overwriting", {{"max", 0}}}};
    case Property::same_epoch:
      return {{"same_epoch_leaders", {{"max", 0}}}};
    case Property::no_recovery:
      return {{"heal_recovery", {{"max", ms_text(c.heal_bound)}, {"observed", true}}}};
    case Property::failover:
      return {{"failover_max", {{"max", ms_text(c.failover_bound.value_or(Duration(0)))}}}};
    case Property::expect:
      return original.is_null() ? json::object() : original;
    case Property::store_safety:
      return {{"store_safety_violations", {{"max", 0}}}};
    case Property::stale_action:
      return {{"writes_after_deadline", {{"max", 0}}}};
    case Property::invariant:
      // No bound can state it: `electsim run` stops at the broken invariant.
      return json::object();
  }
  return json::object();
}

// The items of a comma-separated list, empty ones included: the readers refuse those, since
// "crash,,pause" is a slip of the hand rather than a list of two.
std::vector<std::string_view> comma_items(std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      items.push_back(text.substr(start));
      return items;
    }
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
}

// A whole number written the one way: digits only, no sign, space or leading zero ("0", "12";
// never "012", "+1", " 1" or "-0"), so that a list reads as exactly as a scenario file.
std::optional<std::uint64_t> plain_whole(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos ||
      (text.size() > 1 && text[0] == '0')) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// A plain decimal: a whole part written as plain_whole's, then optionally '.' and digits ("0.2",
// "1"; never ".5", "+0.5", " 0.5", "5e-1" or "00.5").
std::optional<double> plain_decimal(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (!plain_whole(text.substr(0, dot))) return std::nullopt;
  if (dot != std::string_view::npos) {
    const std::string_view fraction = text.substr(dot + 1);
    if (fraction.empty() || fraction.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// An object of the search section as the command line's "key=value,..." text.
std::optional<std::string> object_as_list(const json& v) {
  if (!v.is_object() || v.empty()) return std::nullopt;
  std::string text;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const json& value = it.value();
    if (!value.is_string() && !value.is_number()) return std::nullopt;
    text += fmt::format("{}{}={}", text.empty() ? "" : ",", it.key(),
                        value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

void add_problem(protocols::Problems& problems, std::string pointer, std::string expected,
                 std::string found) {
  protocols::Problem p;
  p.pointer = std::move(pointer);
  p.expected = std::move(expected);
  p.found = std::move(found);
  problems.push_back(std::move(p));
}

}  // namespace

const char* property_name(Property p) {
  return kProperties[static_cast<std::size_t>(p)].name;
}
const char* property_meaning(Property p) {
  return kProperties[static_cast<std::size_t>(p)].meaning;
}
std::optional<Property> property_from_name(std::string_view name) {
  for (const PropertyInfo& info : kProperties) {
    if (name == info.name) return info.property;
  }
  return std::nullopt;
}
std::string property_list() {
  std::string out;
  for (const PropertyInfo& info : kProperties) {
    out += out.empty() ? "" : ", ";
    out += info.name;
  }
  return out;
}

namespace {
// One property named on the command line or in the search section, or what was expected instead
// (`failover` needs its bound, given by `bound_option`).
std::variant<Property, std::string> named_property(std::string_view name,
                                                   const SearchConfig& config,
                                                   std::string_view bound_option) {
  const auto p = property_from_name(name);
  if (!p) return fmt::format("a property ({})", property_list());
  if (*p == Property::failover && !config.failover_bound) {
    return fmt::format("a property whose bound is given: failover needs {}", bound_option);
  }
  return *p;
}
}  // namespace

std::optional<std::string> parse_properties(std::string_view text, SearchConfig& config) {
  std::uint32_t mask = 0;
  for (const std::string_view name : comma_items(text)) {
    if (name.empty()) {
      return fmt::format("a property in every item, found an empty item in \"{}\"", text);
    }
    const auto p = named_property(name, config, "--failover-bound");
    if (const auto* expected = std::get_if<std::string>(&p)) {
      return fmt::format("{}, found \"{}\"", *expected, name);
    }
    mask |= 1u << static_cast<unsigned>(std::get<Property>(p));
  }
  if (mask == 0) return "at least one property";
  config.properties = mask;
  return std::nullopt;
}

SearchConfig SearchConfig::defaults() {
  SearchConfig c;
  // The catalogue's weights: a new fault kind is drawn once its row gives it one.
  for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
    c.weights[static_cast<std::size_t>(info.kind)] = info.nemesis_weight;
  }
  for (Property p :
       {Property::stale_write, Property::overwrite, Property::same_epoch, Property::no_recovery,
        Property::store_safety, Property::stale_action, Property::invariant}) {
    c.properties |= 1u << static_cast<unsigned>(p);
  }
  return c;
}

std::optional<std::string> parse_kinds(std::string_view text, SearchConfig& config) {
  std::array<std::uint32_t, sim::kFaultKindCount> weights{};
  std::set<std::string_view> named;
  bool any = false;
  for (const std::string_view item : comma_items(text)) {
    if (item.empty()) {
      return fmt::format("a fault kind in every item, found an empty item in \"{}\"", text);
    }
    const std::size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    std::uint32_t weight = 1;
    if (eq != std::string_view::npos) {
      const std::string_view number = item.substr(eq + 1);
      const auto v = plain_whole(number);
      if (!v) {
        return fmt::format(
            "a weight from 0 to 1000 after \"{}=\", in plain digits (no sign, space or leading "
            "zero), found \"{}\"",
            name, number);
      }
      if (*v > 1000) {
        return fmt::format("a weight from 0 to 1000 after \"{}=\", found \"{}\"", name, number);
      }
      weight = static_cast<std::uint32_t>(*v);
    }
    bool known = false;
    for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
      if (name == info.name) {
        weights[static_cast<std::size_t>(info.kind)] = weight;
        known = true;
      }
    }
    if (!known || name == "heal") {
      return fmt::format(
          "a fault kind (see `electsim list faults`; heal is the nemesis's own), "
          "found \"{}\"",
          name);
    }
    // "crash=1,crash=5" would let the later weight win without a word.
    if (!named.insert(name).second) {
      return fmt::format("each fault kind once, found \"{}\" a second time", name);
    }
    any = any || weight > 0;
  }
  if (!any) return "at least one fault kind with a weight above 0";
  config.weights = weights;
  return std::nullopt;
}

std::optional<std::string> parse_intensity(std::string_view text, SearchConfig& config) {
  SearchConfig c = config;
  std::set<std::string> named;
  bool any = false;
  for (const std::string_view item : comma_items(text)) {
    if (item.empty()) {
      return fmt::format("key=value in every item, found an empty item in \"{}\"", text);
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return fmt::format("key=value, found \"{}\"", item);
    const std::string key(item.substr(0, eq));
    const std::string value(item.substr(eq + 1));
    any = true;
    auto percent = [&](std::uint32_t& out) -> std::optional<std::string> {
      const auto v = plain_decimal(value);
      if (!v) {
        return fmt::format(
            "{}: a probability from 0.05 to 1 written as a plain decimal such as 0.2 (no sign, "
            "space, exponent or leading zero), found \"{}\"",
            key, value);
      }
      if (!(*v >= 0.05 && *v <= 1.0)) {
        return fmt::format("{}: a probability from 0.05 to 1, found \"{}\"", key, value);
      }
      out = static_cast<std::uint32_t>(*v * 100.0 + 0.5);
      return std::nullopt;
    };
    auto duration = [&](Duration lo, Duration hi, Duration& out) -> std::optional<std::string> {
      const auto d = sim::parse_duration(value);
      if (!d || *d < lo || *d > hi) {
        return fmt::format("{}: a duration from {} to {}, found \"{}\"", key,
                           sim::format_duration(lo), sim::format_duration(hi), value);
      }
      out = *d;
      return std::nullopt;
    };
    std::optional<std::string> problem;
    if (key == "duration") {
      problem =
          duration(std::chrono::milliseconds(1), std::chrono::hours(24), c.max_fault_duration);
    } else if (key == "loss") {
      problem = percent(c.max_loss_percent);
    } else if (key == "duplicate") {
      problem = percent(c.max_duplicate_percent);
    } else if (key == "latency") {
      problem = duration(std::chrono::milliseconds(1), std::chrono::hours(1), c.max_latency_spike);
    } else if (key == "clock_jump") {
      problem =
          duration(std::chrono::milliseconds(1), std::chrono::hours(24 * 365), c.max_clock_jump);
    } else if (key == "drift_ppm") {
      const auto v = plain_whole(value);
      if (!v || *v < 1 || *v > 500'000) {
        problem = fmt::format(
            "drift_ppm: a whole number from 1 to 500000 in plain digits (no sign, space or "
            "leading zero), found \"{}\"",
            value);
      } else {
        c.max_drift_ppm = static_cast<std::int64_t>(*v);
      }
    } else {
      problem = fmt::format(
          "an intensity: duration, loss, duplicate, latency, clock_jump or drift_ppm, found \"{}\"",
          key);
    }
    if (problem) return problem;
    // "loss=0.1,loss=0.5" would let the later value win without a word.
    if (!named.insert(key).second) {
      return fmt::format("each intensity once, found \"{}\" a second time", key);
    }
  }
  if (!any) return "at least one key=value";
  config = c;
  return std::nullopt;
}

void read_search_section(const json& section, SearchConfig& config, protocols::Problems& problems) {
  const std::string base = "/search";
  if (!section.is_object()) {
    add_problem(problems, base, "an object (docs/search.md)", protocols::json_excerpt(section));
    return;
  }
  static const std::vector<std::string> kKeys = {"runs",
                                                 "seed",
                                                 "kinds",
                                                 "faults",
                                                 "safety",
                                                 "heal_bound",
                                                 "max_fault_duration",
                                                 "failover_bound",
                                                 "properties",
                                                 "shrink_budget",
                                                 "intensity"};
  protocols::reject_unknown_keys(section, base, kKeys, problems);
  auto count = [&](const char* key, std::uint64_t lo,
                   std::uint64_t hi) -> std::optional<std::uint64_t> {
    if (!section.contains(key)) return std::nullopt;
    const json& v = section[key];
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < lo || v.get<std::uint64_t>() > hi) {
      add_problem(problems, protocols::child_pointer(base, key),
                  fmt::format("a whole number from {} to {}", lo, hi), protocols::json_excerpt(v));
      return std::nullopt;
    }
    return v.get<std::uint64_t>();
  };
  auto duration = [&](const char* key) -> std::optional<Duration> {
    if (!section.contains(key)) return std::nullopt;
    return protocols::read_duration(section[key], protocols::child_pointer(base, key), problems);
  };
  if (auto v = count("runs", 1, 1'000'000'000)) config.runs = *v;
  if (auto v = count("seed", 0, std::uint64_t{1} << 62)) config.first_seed = *v;
  if (auto v = count("shrink_budget", 0, 1'000'000)) config.shrink_budget = *v;
  if (auto d = duration("safety")) config.safety = *d;
  if (auto d = duration("heal_bound")) {
    config.heal_bound = *d;
    config.heal_bound_given = true;
  }
  if (auto d = duration("max_fault_duration")) config.max_fault_duration = *d;
  if (auto d = duration("failover_bound")) {
    config.failover_bound = *d;
    config.properties |= 1u << static_cast<unsigned>(Property::failover);
  }
  if (section.contains("faults")) {
    const json& v = section["faults"];
    const bool ok = v.is_object() && v.contains("min") && v.contains("max") &&
                    v["min"].is_number_unsigned() && v["max"].is_number_unsigned() &&
                    v["min"].get<std::uint64_t>() <= v["max"].get<std::uint64_t>() &&
                    v["max"].get<std::uint64_t>() <= 1000;
    if (!ok) {
      add_problem(problems, base + "/faults",
                  "{\"min\": M, \"max\": N}, whole numbers with M <= N <= 1000",
                  protocols::json_excerpt(v));
    } else {
      config.faults_min = v["min"].get<std::uint32_t>();
      config.faults_max = v["max"].get<std::uint32_t>();
    }
  }
  // kinds and intensity read as their command-line lists do, with the same checks.
  struct Listed {
    const char* key;
    const char* expected;
    std::optional<std::string> (*parse)(std::string_view, SearchConfig&);
  };
  for (const Listed& l :
       {Listed{"intensity", "an object such as {\"loss\": 0.2, \"clock_jump\": \"500ms\"}",
               parse_intensity},
        Listed{"kinds", "an object from fault kind to a weight from 0 to 1000", parse_kinds}}) {
    if (!section.contains(l.key)) continue;
    const json& v = section[l.key];
    const std::string pointer = protocols::child_pointer(base, l.key);
    const std::optional<std::string> text = object_as_list(v);
    const bool whole =
        std::string_view(l.key) != "kinds" ||
        std::all_of(v.begin(), v.end(), [](const json& w) { return w.is_number_unsigned(); });
    if (!text || !whole) {
      add_problem(problems, pointer, l.expected, protocols::json_excerpt(v));
    } else if (auto problem = l.parse(*text, config)) {
      add_problem(problems, pointer, *problem, protocols::json_excerpt(v));
    }
  }
  if (section.contains("properties")) {
    const json& v = section["properties"];
    std::uint32_t mask = 0;
    bool ok = v.is_array() && !v.empty();
    if (!ok) {
      add_problem(problems, base + "/properties", "a non-empty array of property names",
                  protocols::json_excerpt(v));
    }
    for (std::size_t i = 0; ok && i < v.size(); ++i) {
      const auto p = named_property(v[i].is_string() ? v[i].get_ref<const std::string&>() : "",
                                    config, "failover_bound");
      if (const auto* problem = std::get_if<std::string>(&p)) {
        add_problem(problems, protocols::child_pointer(base + "/properties", std::to_string(i)),
                    *problem, protocols::json_excerpt(v[i]));
        ok = false;
      } else {
        mask |= 1u << static_cast<unsigned>(std::get<Property>(p));
      }
    }
    if (ok) config.properties = mask;
  }
  if (config.safety < std::chrono::seconds(1) || config.safety > std::chrono::hours(24)) {
    add_problem(problems, base + "/safety", "a safety phase from 1s to 24h",
                sim::format_duration(config.safety));
  }
  if (config.heal_bound < std::chrono::milliseconds(1) ||
      config.heal_bound > std::chrono::hours(24)) {
    add_problem(problems, base + "/heal_bound", "a healing bound from 1ms to 24h",
                sim::format_duration(config.heal_bound));
  }
}

SearchWorld search_world(const Scenario& scenario) {
  SearchWorld w;
  w.nodes = scenario.world.node_count;
  w.store = scenario.prepared.uses_store;
  sim::WorldConfig world;
  world.node_count = scenario.world.node_count;
  servers::add_services(world, scenario.services);
  // The servers the protocol depends on: the store, the database or the Redis masters as the
  // protocol says; a server of any other kind is in the world only because the scenario put it
  // there.
  const auto depends = [&](std::string_view kind) {
    if (kind == sim::server_kind::store) return scenario.prepared.uses_store;
    if (kind == sim::server_kind::postgres) return scenario.prepared.uses_database;
    if (kind == sim::server_kind::redis) return scenario.prepared.uses_redis;
    return true;
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
  for (const char* key :
       {"faults", "random_faults", "variants", "sweep", "search", "found", "expect_by_protocol"}) {
    d.erase(key);
  }
  d["seed"] = seed;
  d["duration"] = ms_text(config.safety + config.heal_bound);
  Nemesis nemesis(config, seed, world);
  d["faults"] = nemesis.schedule(coverage);
  return d;
}

SearchOutcome run_search(const json& document, const std::string& source, const LoadOptions& load,
                         const SearchConfig& asked, const SearchOptions& options) {
  SearchOutcome outcome;
  // The base: the file with its variant and overrides applied, checked once.
  LoadResult base = load_scenario_json(document, source, load);
  if (!base.scenario) {
    outcome.problems = base.messages();
    return outcome;
  }
  // The healing bound is the protocol's own worst-case recovery unless one was given; a given
  // one below it is said, since no_recovery findings under it are the protocol's design.
  SearchConfig config = asked;
  std::vector<std::string> warnings;
  if (const auto worst = base.scenario->prepared.worst_recovery) {
    // Recovery is judged at the first accepted write: a write interval or two after the leader.
    // Capped at a day, the longest healing bound a search takes.
    const sim::Duration day = std::chrono::hours(24);
    const sim::Duration needed =
        std::min(day, std::min(day, *worst) + std::min(day, 2 * base.scenario->workload.interval));
    if (!config.heal_bound_given) {
      config.heal_bound = std::max(config.heal_bound, needed);
    } else if (config.heal_bound < needed) {
      warnings.push_back(fmt::format(
          "the healing bound {} is below {}'s own worst-case recovery, {} from its parameters: "
          "no_recovery findings under it are the protocol's design, not a bug",
          sim::format_duration(config.heal_bound), base.scenario->protocol,
          sim::format_duration(needed)));
    }
  }
  json base_doc = base.scenario->document;
  base_doc["protocol"] = base.scenario->protocol_params;
  base_doc["protocol"]["name"] = base.scenario->protocol;
  base_doc.erase("protocols");
  if (!base.scenario->expect.empty() && document.contains("expect")) {
    base_doc["expect"] = base.scenario->document.value("expect", json::object());
  }
  const SearchWorld world = search_world(*base.scenario);

  SearchResult result;
  result.scenario_name = base.scenario->name;
  result.protocol = base.scenario->protocol;
  result.runs_planned = config.runs;
  result.uses_store = world.store;
  result.heal_bound = config.heal_bound;
  result.warnings = std::move(warnings);
  result.silent_hold = base.scenario->prepared.silent_hold;
  for (int k = 0; k < sim::kFaultKindCount; ++k) {
    const auto kind = static_cast<FaultKind>(k);
    if (config.weights[static_cast<std::size_t>(k)] != 0 && store_kind(kind) && !world.store) {
      result.kinds_inapplicable.push_back(sim::fault_kind_name(kind));
    }
  }
  if (const auto* info = protocols::find_protocol(result.protocol)) {
    result.message_type_names = info->message_types;
    result.silent_hold_what = info->detection.what;
  }

  // Each run's outcome, by index within its batch; runs finish in any order on threads. Runs go
  // in batches so that memory stays bounded however long a --time search lasts.
  struct Slot {
    bool done = false;
    std::uint32_t violated = 0;
    Coverage coverage;
    std::size_t faults = 0;
    sim::Duration threat{0};
    bool healed = false;
    bool incomplete = false;
    sim::Duration outage{0};
    bool never_again = false;
  };
  constexpr std::uint64_t kBatch = 4096;
  std::vector<Slot> slots;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> findings{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;
  bool error_is_bug = true;  // a schedule that does not load, rather than a failing system
  const WorkerCount count = worker_count(options.jobs, config.runs);
  if (count.capped && options.notice) options.notice(capped_notice(options.jobs, count.threads));
  unsigned jobs = count.threads;
  bool refused = false;  // the system refused a thread: later batches ask for no more
  bool told = false;
  std::uint64_t batch_start = 0;
  std::uint64_t batch_size = 0;

  auto worker = [&] {
    for (;;) {
      if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) return;
      if (options.time_up != nullptr && options.time_up->load(std::memory_order_relaxed)) return;
      if (failed.load(std::memory_order_relaxed)) return;
      const std::uint64_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= batch_size) return;
      const std::uint64_t i = batch_start + k;
      const std::uint64_t seed = config.first_seed + i;
      Slot slot;
      Probe p;
      // An exception must not leave a worker thread (that would be std::terminate): out of
      // memory, say, ends the search with a message.
      try {
        const json run_doc = search_run_document(base_doc, config, seed, world, &slot.coverage);
        slot.faults = nemesis_faults(run_doc, config);
        p = probe(run_doc, source, load, config, options.stop);
      } catch (const std::exception& e) {
        const std::lock_guard lock(error_mutex);
        if (error.empty()) {
          error = fmt::format("run {} (seed {}) could not go on: {}", i, seed, e.what());
          error_is_bug = false;
        }
        failed = true;
        return;
      }
      if (!p.loaded) {
        const std::lock_guard lock(error_mutex);
        if (error.empty()) error = fmt::format("run {} (seed {}): {}", i, seed, p.problem);
        failed = true;
        return;
      }
      if (options.stop != nullptr && options.stop->load()) return;  // cut short: not counted
      slot.violated = p.violated;
      slot.threat = p.threat;
      slot.healed = p.healed;
      slot.incomplete = p.incomplete;
      slot.outage = p.outage;
      slot.never_again = p.never_again;
      slot.coverage.merge(p.coverage);
      slot.done = true;
      if (p.violated != 0) findings.fetch_add(1, std::memory_order_relaxed);
      slots[k] = slot;
      done.fetch_add(1, std::memory_order_relaxed);
    }
  };

  std::uint32_t seen = 0;
  result.runs_done = 0;
  while (batch_start < config.runs) {
    batch_size = std::min(kBatch, config.runs - batch_start);
    slots.assign(batch_size, Slot{});
    next = 0;
    const unsigned batch_jobs = static_cast<unsigned>(std::min<std::uint64_t>(jobs, batch_size));
    // The calling thread reports progress every 200 ms, and looks every 10 ms whether the runs
    // are all taken, so that a short search does not wait out the rest of a report's interval.
    const unsigned ran = run_workers(
        batch_jobs, [&](unsigned /*t*/) { worker(); },
        [&] {
          for (unsigned tick = 0; options.progress && next.load() < batch_size && !failed.load();
               ++tick) {
            if (options.stop != nullptr && options.stop->load()) break;
            if (options.time_up != nullptr && options.time_up->load()) break;
            if (tick % 20 == 0) {
              options.progress(SearchProgress{done.load(), config.runs, findings.load()});
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        },
        [&](const std::string& notice) {
          refused = true;
          if (options.notice && !told) options.notice(notice);
          told = true;
        });
    if (refused) jobs = std::min(jobs, ran);
    refused = false;
    if (!error.empty()) {
      outcome.problems.push_back(
          error_is_bug
              ? fmt::format(
                    "electsim search: the nemesis made a schedule that does not load, a bug: {}",
                    error)
              : fmt::format("electsim search: {}", error));
      return outcome;
    }
    // The finished prefix: the same command reports the same findings whatever --jobs is.
    std::uint64_t prefix = 0;
    while (prefix < batch_size && slots[prefix].done) ++prefix;
    for (std::uint64_t k = 0; k < prefix; ++k) {
      const Slot& s = slots[k];
      const std::uint64_t i = batch_start + k;
      result.coverage.merge(s.coverage);
      result.longest_threat = std::max(result.longest_threat, s.threat);
      result.runs_healed += s.healed ? 1 : 0;
      result.runs_incomplete += s.incomplete ? 1 : 0;
      result.runs_never_wrote_again += s.never_again ? 1 : 0;
      if (s.outage > result.longest_outage) {
        result.longest_outage = s.outage;
        result.longest_outage_seed = config.first_seed + i;
      }
      for (int p = 0; p < kPropertyCount; ++p) {
        if (((s.violated >> p) & 1u) == 0) continue;
        ++result.violations[static_cast<std::size_t>(p)];
        if (((seen >> p) & 1u) == 0) {
          seen |= 1u << p;
          result.first.push_back({static_cast<Property>(p), i, config.first_seed + i, s.faults});
        }
      }
    }
    result.runs_done += prefix;
    if (prefix < batch_size) break;
    batch_start += batch_size;
  }
  if (options.progress) options.progress(SearchProgress{done.load(), config.runs, findings.load()});
  result.stopped = result.runs_done < config.runs;
  result.interrupted = options.stop != nullptr && options.stop->load();

  // Shrink the first finding of each property, one after another (deterministic).
  if (config.shrink && !result.interrupted) {
    for (const Finding& f : result.first) {
      if (options.stop != nullptr && options.stop->load()) break;
      const json start = search_run_document(base_doc, config, f.seed, world);
      Shrinker shrinker(source, load, config, f.property, options.stop);
      Shrunk s;
      s.property = f.property;
      s.seed = f.seed;
      s.faults_before = shrinker.nemesis_count(start);
      json small = shrinker.shrink(start, s.steps);
      // Stopped while shrinking: what it has is half-shrunk, so it is neither reported as shrunk
      // nor saved; the search reports the runs it finished and exits as interrupted.
      if (options.stop != nullptr && options.stop->load()) {
        result.interrupted = true;
        break;
      }
      s.faults_after = shrinker.nemesis_count(small);
      s.runs = shrinker.runs();
      s.budget_exhausted = shrinker.exhausted();
      small["name"] =
          fmt::format("{}-{}-{}", result.scenario_name, result.protocol, property_name(f.property));
      const bool invariant = f.property == Property::invariant;
      small["description"] = fmt::format(
          "Found by electsim search on {} ({}), seed {}: {}{}. The nemesis's schedule was shrunk "
          "from {} faults to {} in {} runs{} ({}). Faults heal at {}; {}.",
          result.scenario_name, result.protocol, f.seed, property_meaning(f.property),
          invariant && !shrinker.invariant().empty() ? ": " + shrinker.invariant() : "",
          s.faults_before, s.faults_after, s.runs,
          s.budget_exhausted ? ", where the shrinking budget ran out" : "",
          s.steps.empty() ? std::string("nothing else shrank")
                          : fmt::format("{}", fmt::join(s.steps, "; ")),
          sim::format_duration(config.safety),
          invariant ? "electsim run stops this run where the invariant breaks"
                    : "the expect block states the property, and this run breaks it");
      small["expect"] = expect_for(f.property, config, base_doc.value("expect", json()));
      small["found"] = {{"property", property_name(f.property)},
                        {"unsafe_by_design", config.unsafe_by_design},
                        {"search_seed", config.first_seed},
                        {"run", f.run},
                        {"faults_before", s.faults_before},
                        {"faults_after", s.faults_after},
                        {"shrink_runs", s.runs}};
      // The saved file must break its own expect block when run as `electsim run` runs it.
      {
        LoadOptions plain;
        plain.plant = load.plant;  // a test's planted bug stays planted
        const LoadResult again = load_scenario_json(small, source, plain);
        bool broke = false;
        if (again.scenario) {
          try {
            const sim::ThrowOnBrokenInvariant throw_instead;
            const RunResult rerun = run_scenario(*again.scenario, RunOptions{});
            broke = !rerun.verdict.ok();
          } catch (const sim::InvariantBroken&) {
            broke = true;
          }
        }
        s.reproduced = broke;
      }
      s.document = std::move(small);
      result.shrunk.push_back(std::move(s));
    }
  }
  outcome.result = std::move(result);
  return outcome;
}

std::string found_file_name(const std::string& scenario, const std::string& protocol,
                            Property property) {
  std::string name = fmt::format("{}-{}-{}", scenario, protocol, property_name(property));
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  if (!name.empty() && name.front() == '.') name.front() = '_';
  if (name.size() > 200) name.resize(200);  // within any file system's name limit
  return name + ".json";
}

std::string format_search_report(const SearchResult& r, const SearchConfig& config) {
  std::string out;
  auto it = std::back_inserter(out);
  const std::string stopped = !r.stopped      ? std::string()
                              : r.interrupted ? fmt::format(" of {} (interrupted)", r.runs_planned)
                                              : std::string(" (the time budget ran out)");
  fmt::format_to(it, "search {} ({}): {} runs{}, seeds {} to {}\n", r.scenario_name, r.protocol,
                 r.runs_done, stopped, config.first_seed,
                 config.first_seed + (r.runs_done == 0 ? 0 : r.runs_done - 1));
  const sim::Duration heal = r.heal_bound.count() > 0 ? r.heal_bound : config.heal_bound;
  fmt::format_to(it, "safety phase {}, then every fault heals; liveness bound {}{}\n",
                 sim::format_duration(config.safety), sim::format_duration(heal),
                 config.heal_bound_given
                     ? ""
                     : " (none given: the protocol's own worst-case recovery, at least 20s)");
  for (const std::string& w : r.warnings) fmt::format_to(it, "warning: {}\n", w);
  out += "\n";
  // Safety properties a silent leader must outlast the protocol's hold to threaten.
  auto threatened_only_by_silence = [](Property p) {
    return p == Property::stale_write || p == Property::overwrite || p == Property::same_epoch ||
           p == Property::stale_action;
  };
  const bool untested_safety = r.silent_hold && r.longest_threat <= *r.silent_hold;
  out += "properties\n";
  for (int p = 0; p < kPropertyCount; ++p) {
    const auto prop = static_cast<Property>(p);
    if (!config.wants(prop)) continue;
    const std::uint64_t n = r.violations[static_cast<std::size_t>(p)];
    std::string first;
    for (const Finding& f : r.first) {
      if (f.property == prop) first = fmt::format("; first: seed {} ({} faults)", f.seed, f.faults);
    }
    std::string verdict = fmt::format("broken in {} of {} runs", n, r.runs_done);
    if (n == 0 && untested_safety && threatened_only_by_silence(prop)) {
      verdict = fmt::format(
          "untested: no fault silenced a leader longer than {} ({}); the longest was {}",
          sim::format_duration(*r.silent_hold), r.silent_hold_what,
          sim::format_duration(r.longest_threat));
    } else if (n == 0 && prop == Property::no_recovery && r.runs_healed == 0) {
      verdict = "untested: no run had a fault to heal";
    } else if (n == 0) {
      verdict = "held in every run";
    }
    fmt::format_to(it, "  {:<13} {}{}\n", property_name(prop), verdict, first);
  }
  if (r.runs_incomplete > 0) {
    fmt::format_to(it,
                   "\n{} of {} runs hit the limit on events (limits.events): their recovery, "
                   "failover and expect block were not judged, only what they saw of safety\n",
                   r.runs_incomplete, r.runs_done);
  }
  if (r.longest_outage.count() > 0) {
    fmt::format_to(it,
                   "\nservice: the longest outage {} (seed {}); {} of {} runs never wrote again\n",
                   sim::format_seconds(r.longest_outage), r.longest_outage_seed,
                   r.runs_never_wrote_again, r.runs_done);
  }
  if (!r.shrunk.empty()) {
    out += "\nshrunk\n";
    for (const Shrunk& s : r.shrunk) {
      fmt::format_to(it, "  {:<13} seed {}: {} faults -> {} in {} runs{}{}\n",
                     property_name(s.property), s.seed, s.faults_before, s.faults_after, s.runs,
                     s.budget_exhausted ? " (budget spent)" : "",
                     s.reproduced ? ""
                                  : "; its file does not break its expect block when run, so "
                                    "it is not saved");
    }
  }
  out += "\ncoverage (what \"no violation\" covers)\n";
  if (!r.kinds_inapplicable.empty()) {
    fmt::format_to(
        it, "  fault kinds that cannot apply to this world (the protocol uses no store): {}\n",
        fmt::join(r.kinds_inapplicable, ", "));
  }
  std::vector<std::string> kinds_missing;
  for (int k = 0; k < sim::kFaultKindCount; ++k) {
    if (config.weights[static_cast<std::size_t>(k)] == 0) continue;
    if (store_kind(static_cast<FaultKind>(k)) && !r.uses_store) continue;
    if (((r.coverage.fault_kinds >> k) & 1u) == 0) {
      kinds_missing.push_back(sim::fault_kind_name(static_cast<FaultKind>(k)));
    }
  }
  fmt::format_to(it, "  fault kinds never drawn: {}\n",
                 kinds_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(kinds_missing, ", ")));
  std::vector<std::string> roles_missing;
  for (int role = 0; role < 3; ++role) {
    if (((r.coverage.roles >> role) & 1u) == 0) {
      roles_missing.push_back(sim::role_name(static_cast<sim::Role>(role)));
    }
  }
  fmt::format_to(it, "  roles never announced: {}\n",
                 roles_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(roles_missing, ", ")));
  std::vector<std::string> types_missing;
  for (std::size_t t = 0; t < r.message_type_names.size() && t < 64; ++t) {
    if (r.message_type_names[t].empty()) continue;
    if (((r.coverage.message_types >> t) & 1u) == 0)
      types_missing.push_back(r.message_type_names[t]);
  }
  fmt::format_to(it, "  message types never sent: {}\n",
                 types_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(types_missing, ", ")));
  if (r.uses_store && r.coverage.store_ops != 0) {
    std::vector<std::string> ops_missing;
    for (int op = 0; op < sim::kStoreOpCount; ++op) {
      if (((r.coverage.store_ops >> op) & 1u) == 0) {
        ops_missing.push_back(sim::store_op_name(static_cast<sim::StoreOp>(op)));
      }
    }
    fmt::format_to(it, "  store requests never sent: {}\n",
                   ops_missing.empty() ? std::string("none")
                                       : fmt::format("{}", fmt::join(ops_missing, ", ")));
  }
  return out;
}

}  // namespace electsim::runner
