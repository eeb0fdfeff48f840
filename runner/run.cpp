// One run of a scenario: kernel + analyzer + hasher (+ trace writer when asked). Observers only
// watch; the run is the same whether or not a trace is written, and so is its hash.
#include "runner/run.hpp"

#include <fmt/format.h>

#include "analysis/analyzer.hpp"
#include "analysis/trace.hpp"
#include "protocols/registry.hpp"

namespace electsim::runner {

RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  RunResult result;
  const protocols::ProtocolInfo* info = protocols::find_protocol(scenario.protocol);

  analysis::TraceHeader header;
  header.scenario = scenario.name;
  header.variant = scenario.variant;
  header.protocol = scenario.protocol;
  header.seed = scenario.world.seed;
  header.node_count = scenario.world.node_count;
  header.duration = scenario.world.duration;
  if (info != nullptr) header.message_types = info->message_types;
  header.leader_key = scenario.prepared.leader_key;
  header.uses_store = scenario.prepared.uses_store;

  analysis::Analyzer analyzer(header.analysis_config());
  analysis::TraceHasher hasher;
  std::optional<analysis::TraceWriter> writer;
  if (options.trace_path) {
    writer.emplace(*options.trace_path, header, scenario.limits.max_trace_bytes);
  }

  sim::Kernel kernel(scenario.world, scenario.prepared.factory);
  kernel.add_observer(&analyzer);
  kernel.add_observer(&hasher);
  if (writer) kernel.add_observer(&*writer);
  result.stats = kernel.run();

  result.report = analyzer.finish();
  result.verdict = analysis::check(result.report, scenario.expect);
  result.trace_hash = hasher.hex();
  result.info.scenario = scenario.name;
  result.info.variant = scenario.variant;
  result.info.protocol = scenario.protocol;
  result.info.seed = scenario.world.seed;
  result.info.trace_hash = result.trace_hash;
  result.info.events_processed = result.stats.events;
  result.info.duration = scenario.world.duration;

  if (result.stats.hit_event_limit) {
    result.errors.push_back(fmt::format(
        "the run stopped at {} after {} events (the limit on events per run); the report covers "
        "only that much",
        sim::format_seconds(result.stats.end.since_start()), result.stats.events));
  }
  if (writer && !writer->close()) {
    result.errors.push_back(
        fmt::format("trace {} not written: {}", *options.trace_path, writer->error()));
  }
  return result;
}

}  // namespace electsim::runner
