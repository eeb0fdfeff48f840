// One run of a scenario: kernel + analyzer + hasher, plus the outputs asked for
// (drawing/outputs.hpp). Observers only watch; the run is the same whatever is written, and so is
// its hash.
#include "runner/run.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/analyzer.hpp"
#include "analysis/trace.hpp"
#include "drawing/outputs.hpp"
#include "drawing/timeline.hpp"
#include "protocols/registry.hpp"
#include "servers/world.hpp"
#include "sim/assert.hpp"
#include "sim/topology.hpp"

namespace electsim::runner {

namespace {

// The faults generator `index` makes in a run with root seed `seed`: t = from + draw(every), then
// while t < until and fewer than max: a fault at t (its duration drawn right after its time when
// the generator has a distribution for it), t += draw(every). Its own stream, so adding a
// generator never shifts another's draws.
void generate_faults(const RandomFault& generator, std::uint64_t seed, std::size_t index,
                     std::vector<sim::FaultSpec>& out) {
  sim::Rng rng(seed, sim::StreamPurpose::fault_schedule, index);
  sim::Time t = generator.from;
  for (std::size_t count = 0; count < generator.max; ++count) {
    const sim::Duration gap = generator.every.sample(rng);
    if (gap >= generator.until - t) break;  // t + gap would reach until (written not to overflow)
    t += gap;
    sim::FaultSpec fault = generator.fault;
    fault.at = t;
    if (generator.duration) {
      // A fault's duration is above 0 wherever it appears; a drawn 0 is the shortest there is.
      fault.duration = std::max(generator.duration->sample(rng), sim::Duration(1));
    }
    out.push_back(std::move(fault));
  }
}

// A clock's ranges drawn uniformly into `clock`: drift first, then offset, from the stream of
// `index` (the node id, or the node count for the store's clock).
void draw_clock(const ClockRanges& ranges, std::uint64_t seed, std::uint64_t index,
                sim::ClockConfig& clock) {
  if (!ranges.any()) return;
  sim::Rng rng(seed, sim::StreamPurpose::clock_draw, index);
  if (ranges.drift_ppb) clock.drift_ppb = rng.between(ranges.drift_ppb->min, ranges.drift_ppb->max);
  if (ranges.offset_ns) {
    clock.offset = sim::Duration(rng.between(ranges.offset_ns->min, ranges.offset_ns->max));
  }
}

}  // namespace

sim::WorldConfig world_for_seed(const Scenario& scenario, std::uint64_t seed) {
  sim::WorldConfig world = scenario.world;
  world.seed = seed;
  for (std::size_t i = 0; i < scenario.clock_ranges.size() && i < world.clocks.size(); ++i) {
    draw_clock(scenario.clock_ranges[i], seed, i, world.clocks[i]);
  }
  servers::Services services = scenario.services;
  draw_clock(scenario.store_clock_ranges, seed, world.node_count, services.store_clock);
  servers::add_services(world, services);
  if (!scenario.random_faults.empty()) {
    for (std::size_t i = 0; i < scenario.random_faults.size(); ++i) {
      generate_faults(scenario.random_faults[i], seed, i, world.faults);
    }
    // Fixed faults first at equal times, then the generators in file order (each generator's
    // own faults are already in time order). Without generators the file's order stays as it is.
    std::stable_sort(world.faults.begin(), world.faults.end(),
                     [](const sim::FaultSpec& a, const sim::FaultSpec& b) { return a.at < b.at; });
  }
  return world;
}

RunOptions& RunOptions::output(std::string_view flag, std::string path) {
  const drawing::OutputFormat* format = drawing::find_output_format(flag);
  ELECTSIM_ASSERT(format != nullptr, "an output of drawing/outputs.hpp");
  outputs.push_back({format, std::move(path)});
  return *this;
}

analysis::TraceHeader trace_header(const Scenario& scenario, const sim::WorldConfig& world) {
  const protocols::ProtocolInfo* info = protocols::find_protocol(scenario.protocol);
  analysis::TraceHeader header;
  header.scenario = scenario.name;
  header.variant = scenario.variant;
  header.protocol = scenario.protocol;
  header.seed = world.seed;
  header.node_count = scenario.world.node_count;
  header.duration = scenario.world.duration;
  header.topology = sim::topology_of(world);
  if (info != nullptr) {
    header.message_types = info->message_types;
    header.election_message_types = info->election_message_types;
  }
  header.leader_key = scenario.prepared.leader_key;
  header.uses_store = scenario.prepared.uses_store;
  header.store_members = std::max<std::size_t>(1, header.topology.store_members());
  header.coordinator = header.topology.of_kind(scenario.prepared.coordinator);
  if (scenario.workload.enabled) header.write_interval = scenario.workload.interval;
  header.tokens_ordered = scenario.prepared.tokens_ordered;
  // For the pictures of the trace: the clocks that are not perfect, and the lease.
  const auto perfect = [](const sim::ClockConfig& c) {
    return c.offset.count() == 0 && c.drift_ppb == 0 && c.steps.empty();
  };
  for (std::size_t i = 0; i < world.clocks.size() && i < world.node_count; ++i) {
    if (!perfect(world.clocks[i])) {
      header.clocks.push_back({static_cast<sim::Endpoint>(i), world.clocks[i]});
    }
  }
  for (const sim::ServerSpec& server : world.servers) {
    if (!perfect(server.clock)) header.clocks.push_back({server.endpoint, server.clock});
  }
  if (scenario.prepared.lease_ttl) {
    header.lease = analysis::TraceHeader::Lease{*scenario.prepared.lease_ttl,
                                                scenario.prepared.lease_judged_by_store,
                                                scenario.services.store.min_ttl};
  }
  return header;
}

std::optional<std::string> drawing_refused(const Scenario& scenario, std::string_view drawn) {
  if (drawn.empty() || scenario.fleet.services == 0) return std::nullopt;
  return fmt::format(
      "{}: the pictures draw one election, and a fleet's services, each leading at once, would "
      "show as one split brain; nothing was run (write --trace, or run one service as a scenario "
      "of its own)",
      drawn);
}

struct Session::Parts {
  const Scenario& scenario;
  RunOptions options;
  sim::WorldConfig world;
  analysis::TraceHeader header;
  RunResult result;
  bool refused = false;
  bool finished = false;
  bool done = false;
  analysis::Analyzer analyzer;
  analysis::TraceHasher hasher;
  std::optional<drawing::TimelineRecorder> timeline;
  std::vector<std::unique_ptr<drawing::RunOutput>> outputs;
  std::unique_ptr<sim::Kernel> kernel;

  Parts(const Scenario& s, const RunOptions& o, sim::WorldConfig w)
      : scenario(s),
        options(o),
        world(std::move(w)),
        header(trace_header(s, world)),
        analyzer(header.analysis_config()) {}
};

Session::Session(const Scenario& scenario, const RunOptions& options) {
  sim::WorldConfig world = world_for_seed(scenario, options.seed.value_or(scenario.world.seed));
  world.limits.cancel = options.cancel;
  parts_ = std::make_unique<Parts>(scenario, options, std::move(world));
  Parts& p = *parts_;
  std::string drawn = options.timeline ? "--svg" : "";
  for (const OutputRequest& request : options.outputs) {
    if (request.format->one_election) drawn = fmt::format("--{}", request.format->flag);
  }
  if (auto refused = drawing_refused(scenario, drawn)) {
    p.result.errors.push_back(std::move(*refused));
    p.refused = true;
    p.done = true;
    return;
  }
  if (options.timeline) {
    p.timeline.emplace(p.header, p.world, scenario.prepared.lease_ttl,
                       scenario.prepared.lease_ttl
                           ? std::optional<bool>(scenario.prepared.lease_judged_by_store)
                           : std::nullopt);
    p.timeline->set_max_items(options.timeline_items_max);
  }
  const drawing::OutputSetup setup{p.header,
                                   p.world,
                                   scenario.prepared.lease_ttl,
                                   scenario.prepared.lease_judged_by_store,
                                   scenario.services.store.min_ttl,
                                   scenario.limits.max_trace_bytes,
                                   options.replay_events_max,
                                   options.timeline_items_max};
  for (const OutputRequest& request : options.outputs) {
    ELECTSIM_ASSERT(request.format != nullptr, "an output request names its format");
    p.outputs.push_back(request.format->make(request.path, setup));
  }
  p.kernel = std::make_unique<sim::Kernel>(p.world, scenario.prepared.factory);
  p.kernel->add_observer(&p.analyzer);
  p.kernel->add_observer(&p.hasher);
  for (auto& output : p.outputs) p.kernel->add_observer(&output->observer());
  if (p.timeline) p.kernel->add_observer(&*p.timeline);
  p.kernel->start();
}

Session::~Session() = default;

bool Session::advance(sim::Time until, std::uint64_t max_steps) {
  Parts& p = *parts_;
  if (p.done) return true;
  const sim::Time end(p.world.duration);
  const sim::Time to = std::min(until, end);
  const bool reached = p.kernel->run_steps(to, max_steps);
  const sim::RunStats& stats = p.kernel->stats();
  p.done = (reached && to == end) || stats.hit_event_limit || stats.cancelled;
  return p.done;
}

bool Session::done() const {
  return parts_->done;
}

sim::Time Session::now() const {
  return parts_->kernel ? parts_->kernel->now() : sim::Time{};
}

sim::Time Session::end() const {
  return sim::Time(parts_->world.duration);
}

std::uint64_t Session::steps() const {
  return parts_->kernel ? parts_->kernel->stats().events : 0;
}

RunResult Session::finish() {
  Parts& p = *parts_;
  ELECTSIM_ASSERT(!p.finished, "a session finishes once");
  p.finished = true;
  RunResult& result = p.result;
  if (p.refused) return std::move(result);
  const Scenario& scenario = p.scenario;
  const RunOptions& options = p.options;
  while (!advance(end(), std::numeric_limits<std::uint64_t>::max())) {
  }
  p.kernel->finish();
  result.stats = p.kernel->stats();
  result.report = p.analyzer.finish();
  result.verdict = analysis::check(result.report, scenario.expect);
  result.verdict.judged = scenario.judged;
  result.trace_hash = p.hasher.hex();
  result.info.scenario = scenario.name;
  result.info.variant = scenario.variant;
  result.info.protocol = scenario.protocol;
  result.info.seed = p.world.seed;
  result.info.trace_hash = result.trace_hash;
  result.info.events_processed = p.hasher.events();
  result.info.kernel_steps = result.stats.events;
  result.info.duration = scenario.world.duration;

  if (result.stats.hit_event_limit) {
    // Say what grew: a protocol whose messages explode with the cluster (Bully with every node
    // starting at once) is the usual cause, and the user should see which and how.
    std::string grew;
    if (result.report.messages_sent > 0) {
      std::vector<std::pair<std::uint64_t, std::string>> by_count;
      for (const auto& [type, count] : result.report.messages_by_type) {
        by_count.emplace_back(count, type);
      }
      std::sort(by_count.begin(), by_count.end(), std::greater<>());
      std::string top;
      for (std::size_t i = 0; i < by_count.size() && i < 3; ++i) {
        top += fmt::format("{}{} {}", i == 0 ? "" : ", ", by_count[i].first, by_count[i].second);
      }
      grew = fmt::format(
          "; by then protocol {} on {} nodes had sent {} messages ({}), {:.0f} per simulated "
          "second",
          scenario.protocol, scenario.world.node_count, result.report.messages_sent, top,
          static_cast<double>(result.report.messages_sent) /
              std::max(1e-9, static_cast<double>(result.stats.end.since_start().count()) / 1e9));
    }
    result.errors.push_back(fmt::format(
        "the run stopped at {} after {} events (the limit on events per run, limits.events){}; "
        "the report covers only that much",
        sim::format_seconds(result.stats.end.since_start()), result.stats.events, grew));
  }
  if (result.stats.cancelled) {
    result.errors.push_back(fmt::format("the run was cancelled at {}",
                                        sim::format_seconds(result.stats.end.since_start())));
  }
  const drawing::RunOutcome outcome{result.report, result.verdict, result.info};
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    drawing::OutputDone done = p.outputs[k]->finish(outcome);
    if (!done.error.empty()) {
      result.errors.push_back(std::move(done.error));
    } else if (done.content) {
      result.pictures.push_back({options.outputs[k].path, std::move(*done.content)});
    } else if (done.staged) {
      result.streamed.push_back(options.outputs[k].path);
      result.staged.push_back(std::move(done.staged));
    }
  }
  if (p.timeline && p.timeline->overflowed()) {
    result.errors.push_back(drawing::timeline_limit_message(options.timeline_items_max));
  } else if (p.timeline) {
    result.timeline = p.timeline->finish(result.report);
  }
  // A run that ends in an error writes none of its files, streamed or drawn.
  if (!result.errors.empty()) {
    result.staged.clear();
    result.streamed.clear();
    result.pictures.clear();
  } else if (options.commit_streamed) {
    if (auto error = io::commit_all(result.staged)) {
      result.errors.push_back(*error);
      result.streamed.clear();
      result.pictures.clear();
    }
  }
  return std::move(result);
}

RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  Session session(scenario, options);
  return session.finish();
}

}  // namespace electsim::runner
