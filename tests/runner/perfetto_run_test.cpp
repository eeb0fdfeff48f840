// The Perfetto export of a whole run: the flagship scenario (a lease holder frozen by a GC pause)
// through the kernel with the writer attached as runner/run.cpp attaches observers. The leader
// slices are the report's leader intervals, the pause and the stale write show where they happened,
// a replicated store's leader slices are its leader terms, and every track nests.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/analyzer.hpp"
#include "drawing/perfetto.hpp"
#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "sim/kernel.hpp"

using namespace electsim;
using nlohmann::json;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

struct Exported {
  analysis::Report report;
  json doc;
};

// Mirrors runner::run_scenario, with the Perfetto writer as one more observer.
Exported run_flagship(const std::string& variant, const std::string& file_name) {
  runner::LoadOptions o;
  if (!variant.empty()) o.variant = variant;
  const runner::LoadResult loaded =
      runner::load_scenario_text(runner::flagship_scenario_text(), "<flagship>", o);
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  const runner::Scenario& scenario = *loaded.scenario;
  const sim::WorldConfig world = runner::world_for_seed(scenario, scenario.world.seed);
  const protocols::ProtocolInfo* info = protocols::find_protocol(scenario.protocol);
  REQUIRE(info != nullptr);

  const analysis::TraceHeader header = runner::trace_header(scenario, world);

  const std::string path =
      (std::filesystem::temp_directory_path() / ("electsim-perfetto-run-" + file_name)).string();
  analysis::Analyzer analyzer(header.analysis_config());
  drawing::PerfettoWriter writer(path, header, scenario.limits.max_trace_bytes);
  sim::Kernel kernel(world, scenario.prepared.factory);
  kernel.add_observer(&analyzer);
  kernel.add_observer(&writer);
  kernel.run();
  Exported out;
  out.report = analyzer.finish();
  INFO(writer.error());
  REQUIRE(writer.close());
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  out.doc = json::parse(text.str());
  std::remove(path.c_str());
  return out;
}

std::int64_t ns(const json& us) {
  return static_cast<std::int64_t>(std::llround(us.get<double>() * 1000.0));
}

// Node id by the tid of its main track ("node N").
std::map<int, sim::NodeId> node_tracks(const json& doc) {
  std::map<int, sim::NodeId> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "M" || e["name"] != "thread_name") continue;
    const std::string name = e["args"]["name"];
    if (name.rfind("node ", 0) == 0 && name.find(' ', 5) == std::string::npos) {
      out[e["tid"].get<int>()] = std::stoi(name.substr(5));
    }
  }
  return out;
}

// Complete events on one thread are nested or disjoint.
std::size_t partial_overlaps(const json& doc) {
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> by_tid;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::int64_t start = ns(e["ts"]);
    by_tid[e["tid"].get<int>()].emplace_back(start, start + ns(e["dur"]));
  }
  std::size_t problems = 0;
  for (auto& [tid, slices] : by_tid) {
    std::sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::int64_t> open_ends;
    for (const auto& [start, end] : slices) {
      while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
      if (!open_ends.empty() && end > open_ends.back()) ++problems;
      open_ends.push_back(end);
    }
  }
  return problems;
}

}  // namespace

TEST_CASE("perfetto run: the flagship's leader slices are the report's leader intervals") {
  auto variant = GENERATE(as<std::string>{}, "", "no-fencing");
  INFO("variant: " << variant);
  const Exported run = run_flagship(variant, "intervals-" + variant + ".json");
  const std::map<int, sim::NodeId> nodes = node_tracks(run.doc);
  REQUIRE(nodes.size() == run.report.node_count);

  using Interval = std::tuple<sim::NodeId, sim::Epoch, std::int64_t, std::int64_t>;
  std::vector<Interval> slices;
  for (const json& e : run.doc["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (e["ph"] != "X" || name.rfind("leader e", 0) != 0) continue;
    REQUIRE(nodes.count(e["tid"].get<int>()) == 1);
    const std::int64_t start = ns(e["ts"]);
    CHECK(name == "leader e" + std::to_string(e["args"]["epoch"].get<sim::Epoch>()));
    slices.emplace_back(nodes.at(e["tid"].get<int>()), e["args"]["epoch"].get<sim::Epoch>(), start,
                        start + ns(e["dur"]));
  }
  std::vector<Interval> intervals;
  for (const analysis::LeaderInterval& i : run.report.intervals) {
    intervals.emplace_back(i.node, i.epoch, i.start.ns, i.end.ns);
  }
  std::sort(slices.begin(), slices.end());
  std::sort(intervals.begin(), intervals.end());
  REQUIRE(intervals.size() >= 2);  // the frozen holder and its successor
  CHECK(slices == intervals);
  CHECK(partial_overlaps(run.doc) == 0);
}

TEST_CASE("perfetto run: a replicated store's leader slices are the store's leader terms") {
  constexpr const char* text = R"json({
    "name": "store-leader-crash",
    "description": "A three-member store loses its leader at 10s for 15s.",
    "seed": 1,
    "duration": "40s",
    "nodes": 3,
    "protocol": {"name": "lease", "ttl": "3s"},
    "store": {"members": 3},
    "network": {"latency": {"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"}},
    "workload": {"interval": "100ms", "work": "5ms"},
    "faults": [{"at": "10s", "kind": "crash", "target": "store_leader", "duration": "15s"}]
  })json";
  const runner::LoadResult loaded = runner::load_scenario_text(text, "<store>", {});
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  const std::string path =
      (std::filesystem::temp_directory_path() / "electsim-perfetto-run-store.json").string();
  runner::RunOptions options;
  options.output("perfetto", path);
  const runner::RunResult result = runner::run_scenario(*loaded.scenario, options);
  for (const std::string& e : result.errors) UNSCOPED_INFO(e);
  REQUIRE(result.errors.empty());
  std::ifstream in(path, std::ios::binary);
  std::ostringstream read;
  read << in.rdbuf();
  const json doc = json::parse(read.str());
  std::remove(path.c_str());

  // One track per member, under the store's own process.
  std::map<int, std::string> members;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 2) {
      members[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
  }
  CHECK(members.size() == 3);
  // A leader slice per term a member led in, and the crash of the first leader.
  std::size_t leaders = 0;
  std::size_t crashes = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != 2) continue;
    REQUIRE(members.count(e["tid"].get<int>()) == 1);
    const std::string name = e["name"];
    if (name.rfind("leader t", 0) == 0) {
      ++leaders;
      CHECK(name == "leader t" + std::to_string(e["args"]["term"].get<sim::Epoch>()));
    }
    if (name == "crashed") {
      ++crashes;
      CHECK(ns(e["ts"]) == 10 * kSecond);
      CHECK(ns(e["dur"]) == 15 * kSecond);
    }
  }
  CHECK(leaders >= 2);
  CHECK(leaders == result.report.store.leader_elections);
  CHECK(crashes == 1);
  CHECK(partial_overlaps(doc) == 0);
}

TEST_CASE("perfetto run: the flagship's GC pause and its stale write are where they happened") {
  auto [variant, stale_name] = GENERATE(table<std::string, std::string>({
      {"", "REJECTED"},
      {"no-fencing", "STALE write accepted"},
  }));
  INFO("variant: " << variant);
  const Exported run = run_flagship(variant, "pause-" + variant + ".json");
  const std::map<int, sim::NodeId> nodes = node_tracks(run.doc);

  // The pause: 6s from 4.9633s, on the track of the node that led when it struck, inside its leader
  // slice (a paused node still believes).
  std::vector<json> pauses;
  for (const json& e : run.doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "GC pause") pauses.push_back(e);
  }
  REQUIRE(pauses.size() == 1);
  const std::int64_t pause_at = 4'963'300'000;
  const std::int64_t wake_at = pause_at + 6 * kSecond;
  CHECK(ns(pauses[0]["ts"]) == pause_at);
  CHECK(ns(pauses[0]["dur"]) == 6 * kSecond);
  REQUIRE(nodes.count(pauses[0]["tid"].get<int>()) == 1);
  const sim::NodeId paused = nodes.at(pauses[0]["tid"].get<int>());
  const bool inside_leader =
      std::any_of(run.report.intervals.begin(), run.report.intervals.end(), [&](const auto& i) {
        return i.node == paused && i.start.ns <= pause_at && i.end.ns >= wake_at;
      });
  CHECK(inside_leader);

  // The stale write: by the frozen node, after it wakes; rejected with fencing, accepted without.
  std::size_t stale = 0;
  for (const json& e : run.doc["traceEvents"]) {
    if (e["ph"] != "i" || !e["args"].value("stale", false)) continue;
    ++stale;
    CHECK(e["name"].get<std::string>().find(stale_name) != std::string::npos);
    CHECK(e["args"]["writer"] == paused);
    CHECK(ns(e["ts"]) >= wake_at);
  }
  CHECK(stale >= 1);
  CHECK(stale == run.report.stale_writes_accepted + run.report.stale_writes_rejected);
}
