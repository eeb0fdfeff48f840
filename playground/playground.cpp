// The playground's simulator: see playground/playground.hpp.
#include "playground/playground.hpp"

#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/expect.hpp"
#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "drawing/outputs.hpp"
#include "drawing/replay_html.hpp"
#include "drawing/timeline.hpp"
#include "params/params.hpp"
#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "sim/fault.hpp"
#include "sim/topology.hpp"

namespace electsim::playground {

using nlohmann::json;

namespace {

json problems_json(const std::vector<std::string>& messages) {
  return json{{"ok", false}, {"problems", messages}};
}

std::string dump(const json& j) {
  // Invalid UTF-8 in a user's file is replaced, not thrown at the page.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json fault_names(sim::FaultSet set) {
  json names = json::array();
  for (int k = 0; k < sim::kFaultKindCount; ++k) {
    const auto kind = static_cast<sim::FaultKind>(k);
    if ((set & sim::fault_bit(kind)) != 0) names.push_back(sim::fault_kind_name(kind));
  }
  return names;
}

// The servers as the page names them and offers faults on them.
json servers_json(const sim::Topology& topology) {
  json servers = json::array();
  for (const sim::NamedEndpoint& server : topology.servers()) {
    servers.push_back({{"name", server.name},
                       {"kind", server.kind},
                       {"coordinator", server.traits.coordinator},
                       {"faults", fault_names(server.traits.faults)}});
  }
  return servers;
}

}  // namespace

// The scenario loaded and its run: the session watches the scenario, so both live here.
struct Playground::Open {
  runner::Scenario scenario;
  std::unique_ptr<runner::Session> session;
  std::optional<runner::RunResult> result;
};

Playground::Playground() = default;
Playground::~Playground() = default;

std::string Playground::open(std::string_view document, std::string_view variant,
                             std::string_view source) {
  open_.reset();
  runner::LoadOptions load;
  if (!variant.empty()) load.variant = std::string(variant);
  runner::LoadResult loaded = runner::load_scenario_text(document, std::string(source), load);
  if (!loaded.scenario) return dump(problems_json(loaded.messages()));
  open_ = std::make_unique<Open>();
  open_->scenario = std::move(*loaded.scenario);
  runner::RunOptions options;
  // The page is a picture: it comes back in the result, nothing is written. A fleet runs without
  // it (the replay page draws one election, runner::drawing_refused): its summary and hash only.
  const bool fleet = open_->scenario.fleet.services > 0;
  if (!fleet) options.output("html", "playground.html");
  open_->session = std::make_unique<runner::Session>(open_->scenario, options);

  const runner::Scenario& s = open_->scenario;
  const sim::WorldConfig world = runner::world_for_seed(s, s.world.seed);
  json out = {{"ok", true},
              {"name", s.name},
              {"protocol", s.protocol},
              {"nodes", s.world.node_count},
              {"seed", s.world.seed},
              {"end_ns", s.world.duration.count()},
              {"servers", servers_json(sim::topology_of(world))},
              {"lease_ttl_ns", s.prepared.lease_ttl ? json(s.prepared.lease_ttl->count()) : json()},
              {"fleet", fleet},
              {"warnings", loaded.warnings}};
  return dump(out);
}

std::string Playground::run(std::uint64_t max_steps) {
  if (!open_ || open_->result) return dump(json{{"done", true}});
  runner::Session& session = *open_->session;
  const bool done = session.advance(session.end(), max_steps);
  return dump(json{{"done", done},
                   {"now_ns", session.now().since_start().count()},
                   {"end_ns", session.end().since_start().count()},
                   {"steps", session.steps()}});
}

std::string Playground::result() {
  if (!open_) return dump(json{{"ok", false}, {"problems", {"no scenario is open"}}});
  if (!open_->result) open_->result = open_->session->finish();
  const runner::RunResult& r = *open_->result;
  json out = {{"ok", true},
              {"hash", r.trace_hash},
              {"summary", analysis::format_summary(r.info, r.report, r.verdict)},
              {"verdict", r.verdict.ok() ? "PASS" : "FAIL"},
              {"errors", r.errors},
              {"steps", r.stats.events}};
  for (const io::OutputFile& picture : r.pictures) out["page"] = picture.content;
  return dump(out);
}

std::string Playground::replay_trace(std::string_view trace, std::string_view source) {
  // The page of the trace, made once its header is read: the pictures' world is rebuilt from
  // it (its nodes, its servers, the clocks they were configured with), and read by the
  // recorders as they start. Nothing runs in it; the trace's events are what happened.
  std::unique_ptr<drawing::RunOutput> page;
  const auto watch = [&](const analysis::TraceHeader& h) -> sim::Observer* {
    // A fleet's trace is reported, not drawn, as its run is (OutputFormat::one_election).
    if (h.topology.groups().size() > 1) return nullptr;
    sim::WorldConfig world;
    world.node_count = h.node_count;
    world.duration = h.duration;
    world.clocks.resize(h.node_count);
    for (const sim::NamedEndpoint& server : h.topology.servers()) {
      sim::ServerSpec spec;
      spec.endpoint = server.address;
      spec.name = server.name;
      spec.kind = server.kind;
      spec.group = server.group;
      spec.traits = server.traits;
      world.servers.push_back(std::move(spec));
    }
    for (const analysis::TraceHeader::Clock& c : h.clocks) {
      if (c.endpoint >= 0 && static_cast<std::size_t>(c.endpoint) < h.node_count) {
        world.clocks[static_cast<std::size_t>(c.endpoint)] = c.config;
      }
      for (sim::ServerSpec& spec : world.servers) {
        if (spec.endpoint == c.endpoint) spec.clock = c.config;
      }
    }
    const drawing::OutputSetup setup{
        h,
        world,
        h.lease ? std::optional<sim::Duration>(h.lease->ttl) : std::nullopt,
        h.lease ? h.lease->judged_by_store : false,
        h.lease ? h.lease->store_min_ttl : sim::Duration(0),
        0,
        drawing::ReplayRecorder::kMaxEvents,
        drawing::TimelineRecorder::kMaxItems};
    page = drawing::find_output_format("html")->make("playground.html", setup);
    return &page->observer();
  };
  std::istringstream in{std::string(trace)};
  const analysis::TraceReadResult read = analysis::read_trace(in, watch);
  if (!read.ok()) return dump(problems_json({std::string(source) + ": " + read.error}));
  analysis::Verdict verdict = analysis::check(read.report, {});
  verdict.judged = false;  // no scenario's bounds judge it, as with `electsim check TRACE`
  json out = {{"ok", true},
              {"hash", read.info.trace_hash},
              {"summary", analysis::format_summary(read.info, read.report, verdict)},
              {"verdict", analysis::harm_in(read.report).empty() ? "no harm" : "harm"},
              {"nodes", read.header.node_count},
              {"end_ns", read.header.duration.count()},
              {"servers", servers_json(read.header.topology)},
              {"fleet", read.header.topology.groups().size() > 1},
              {"errors", json::array()}};
  if (page) {
    drawing::OutputDone done = page->finish({read.report, verdict, read.info});
    if (done.content) out["page"] = std::move(*done.content);
    if (!done.error.empty()) out["errors"].push_back(done.error);
  }
  return dump(out);
}

std::string Playground::variant_document(std::string_view document, std::string_view variant) {
  const json doc = json::parse(document, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return dump(problems_json({"the document is not JSON"}));
  auto resolved = runner::document_of_variant(doc, std::string(variant));
  if (!resolved) {
    return dump(problems_json({"the document has no variant \"" + std::string(variant) + "\""}));
  }
  return dump(json{{"ok", true}, {"document", *resolved}});
}

std::string Playground::catalog() {
  json protocols = json::array();
  for (const protocols::ProtocolInfo& info : protocols::all_protocols()) {
    json params = json::array();
    for (const params::ParamSpec& spec : info.params) {
      params.push_back({{"name", spec.name},
                        {"type", params::param_type_name(spec.type)},
                        {"default", params::default_text(spec)},
                        {"range", params::range_text(spec)},
                        {"meaning", spec.meaning},
                        {"choices", spec.choices}});
    }
    protocols.push_back(
        {{"name", info.name}, {"description", info.description}, {"params", params}});
  }
  return dump(json{{"protocols", protocols}});
}

}  // namespace electsim::playground
