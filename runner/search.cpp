// electsim search (runner/search.hpp): the two phases of a run, the properties checked on it, the
// parallel runs in a deterministic order, and the shrinker. The nemesis is runner/nemesis.cpp, the
// configuration runner/search_config.cpp, the report runner/search_report.cpp.
#include "runner/search.hpp"
#include "runner/search_detail.hpp"
#include "servers/world.hpp"
#include "sim/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <variant>

#include "analysis/expect.hpp"
#include "runner/run.hpp"
#include "runner/threads.hpp"
#include "sim/rng.hpp"
#include "sim/store_types.hpp"

namespace electsim::runner {
namespace {

using nlohmann::json;
using search_detail::ms_text;
using search_detail::schedule_of;
using search_detail::store_kind;
using sim::Duration;
using sim::FaultKind;

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

}  // namespace

SearchOutcome run_search(const json& document, const std::string& source, const LoadOptions& load,
                         const SearchConfig& asked, const SearchOptions& options) {
  SearchOutcome outcome;
  // The base: the file with its variant and overrides applied, checked once.
  LoadResult base = load_scenario_json(document, source, load);
  if (!base.scenario) {
    outcome.problems = base.messages();
    return outcome;
  }
  if (base.scenario->fleet.services > 0) {
    // The nemesis aims at the world's roles, which name no one node in a fleet.
    outcome.problems.push_back(fmt::format(
        "{}: a fleet (services) is not searched: the nemesis aims at the world's leader and "
        "followers, and in a fleet each service has its own (docs/fleets.md)",
        source));
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
  // A shard runs every n-th run of the search (its j-th is run shard.run_at(j)); the whole
  // search is the shard 1/1.
  const Shard shard = options.shard.value_or(Shard{});
  const std::uint64_t planned = shard.runs_of(config.runs);

  SearchResult result;
  result.searched = base_doc;
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
  const WorkerCount count = worker_count(options.jobs, std::max<std::uint64_t>(planned, 1));
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
      const std::uint64_t i = shard.run_at(batch_start + k);
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
      worker_poll();
    }
  };

  std::uint32_t seen = 0;
  result.runs_done = 0;
  while (batch_start < planned) {
    batch_size = std::min(kBatch, planned - batch_start);
    slots.assign(batch_size, Slot{});
    next = 0;
    const unsigned batch_jobs = static_cast<unsigned>(std::min<std::uint64_t>(jobs, batch_size));
    // Progress as the batch starts, then every 200 ms of wall time (runner/threads.hpp).
    std::function<void()> tick;
    if (options.progress) {
      tick = [&] { options.progress(SearchProgress{done.load(), planned, findings.load()}); };
    }
    const unsigned ran = run_workers(
        batch_jobs, [&](unsigned /*t*/) { worker(); }, tick,
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
      const std::uint64_t i = shard.run_at(batch_start + k);
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
  if (options.progress) options.progress(SearchProgress{done.load(), planned, findings.load()});
  result.stopped = result.runs_done < planned;
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

}  // namespace electsim::runner
