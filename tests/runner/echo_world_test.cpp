// The echo server (tests/servers/echo), a kind of server only the tests register, through every
// reader of the world: a scenario declares it, faults aim at it by name, the trace names it, the
// checker reads it back, the timeline and Perfetto give it a lane, and the search's nemesis reaches
// it. Nothing outside tests/servers/echo names the kind: all of it comes from its registration.
#include <catch2/catch.hpp>

#include <algorithm>
#include <any>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/trace.hpp"
#include "drawing/timeline_svg.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "runner/search.hpp"
#include "servers/registry.hpp"
#include "servers/world.hpp"
#include "sim/topology.hpp"
#include "tests/files.hpp"
#include "tests/servers/echo/echo.hpp"

using namespace electsim;
using electsim::testing::slurp;
using nlohmann::json;

namespace {

namespace fs = std::filesystem;

json echo_document() {
  return json::parse(R"({
    "name": "echo-world", "seed": 3, "duration": "8s", "nodes": 3,
    "protocol": {"name": "lease"},
    "servers": {"echo": 2},
    "faults": [
      {"at": "2s", "kind": "crash", "target": "echo:1", "duration": "1s"},
      {"at": "3s", "kind": "pause", "target": "echo:0", "duration": "500ms"},
      {"at": "5s", "kind": "partition", "groups": [[0, "echo:1"], [1, 2, "store", "echo:0"]],
       "duration": "1s"}
    ]})");
}

runner::Scenario load(const json& document) {
  const runner::LoadResult r = runner::load_scenario_json(document, "echo-world.json");
  for (const auto& m : r.messages()) UNSCOPED_INFO(m);
  REQUIRE(r.scenario);
  return *r.scenario;
}

std::string load_error(const json& document) {
  const runner::LoadResult r = runner::load_scenario_json(document, "echo-world.json");
  REQUIRE_FALSE(r.scenario);
  std::string all;
  for (const auto& m : r.messages()) all += m + "\n";
  return all;
}

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / "electsim-echo-world-test";
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("echo world: a scenario declares registered servers and its faults name them") {
  const runner::Scenario s = load(echo_document());
  const fs::path dir = scratch();
  const fs::path trace = dir / "echo.jsonl";
  const fs::path perfetto = dir / "echo.perfetto.json";
  const fs::path page = dir / "echo.html";
  runner::RunOptions options;
  options.output("trace", trace.string())
      .output("perfetto", perfetto.string())
      .output("html", page.string());
  options.timeline = true;
  const runner::RunResult r = runner::run_scenario(s, options);
  REQUIRE(r.errors.empty());

  // The trace's header carries the echo servers with their kind's traits, its events name them.
  const std::string text = slurp(trace);
  CHECK_THAT(text, Catch::Contains(R"("name":"echo:1")"));
  CHECK_THAT(text, Catch::Contains(R"("ev":"crash","node":"echo:1")"));
  CHECK_THAT(text, Catch::Contains(R"("ev":"pause","node":"echo:0")"));
  std::stringstream in(text);
  const analysis::TraceReadResult read = analysis::read_trace(in);
  REQUIRE(read.error == "");
  CHECK(read.info.trace_hash == r.trace_hash);
  const sim::Topology& topology = read.header.topology;
  const auto echo1 = topology.find("echo:1");
  REQUIRE(echo1);
  CHECK(topology.kind_of(*echo1) == "echo");
  CHECK(topology.server(*echo1)->traits.lane == sim::ServerLane::process);
  CHECK(topology.server(*echo1)->traits.faults != 0);

  // The timeline gives each echo server a row with its crash and its pause, and draws it.
  REQUIRE(r.timeline);
  const drawing::Timeline& tl = *r.timeline;
  REQUIRE(tl.server_rows.size() == 2);
  CHECK(tl.server_rows[1] == *echo1);
  REQUIRE(tl.server_downs.size() == 1);
  CHECK(tl.server_downs[0].node == *echo1);
  CHECK(tl.server_downs[0].start == sim::Time(std::chrono::seconds(2)));
  CHECK(tl.server_downs[0].end == sim::Time(std::chrono::seconds(3)));
  REQUIRE(tl.server_pauses.size() == 1);
  CHECK(tl.server_pauses[0].end - tl.server_pauses[0].start == std::chrono::milliseconds(500));
  bool partitioned = false;
  for (const drawing::PartitionSpan& p : tl.partitions) {
    partitioned =
        partitioned || (p.side(*echo1) >= 0 && p.label.find("echo:1") != std::string::npos);
  }
  CHECK(partitioned);
  const std::string svg = drawing::render_timeline_svg(tl);
  CHECK_THAT(svg, Catch::Contains(R"(data-server="echo:0")"));
  CHECK_THAT(svg, Catch::Contains(R"(data-server="echo:1")"));

  // Perfetto: a "servers" process with a track per echo server and the crash on it.
  const json trace_events = json::parse(slurp(perfetto))["traceEvents"];
  std::set<std::string> threads;
  bool crashed = false;
  for (const json& e : trace_events) {
    if (e.value("name", "") == "thread_name" && e["pid"] == 3) {
      threads.insert(e["args"]["name"].get<std::string>());
    }
    crashed = crashed || (e.value("ph", "") == "X" && e["pid"] == 3 && e["name"] == "crashed");
  }
  CHECK(threads == std::set<std::string>{"echo:0", "echo:1"});
  CHECK(crashed);

  // The replay page lists them for their cards, by address; its names come from the topology.
  REQUIRE(r.pictures.size() == 1);
  const std::string html = r.pictures[0].content;
  CHECK_THAT(html,
             Catch::Contains(fmt::format("\"servers\":[{},{}]", *topology.find("echo:0"), *echo1)));
  CHECK_THAT(html, Catch::Contains(fmt::format("[{},\"echo:1\"]", *echo1)));
  fs::remove_all(dir);
}

TEST_CASE("echo world: the same scenario and seed give the same trace hash") {
  const runner::Scenario s = load(echo_document());
  const runner::RunResult a = runner::run_scenario(s, runner::RunOptions{});
  const runner::RunResult b = runner::run_scenario(s, runner::RunOptions{});
  CHECK(a.trace_hash == b.trace_hash);
  json without = echo_document();
  without["faults"] = json::array();
  const runner::RunResult c = runner::run_scenario(load(without), runner::RunOptions{});
  CHECK(c.trace_hash != a.trace_hash);  // the echo servers' faults show in the run
}

TEST_CASE("echo world: bad declarations and faults the kind does not take are refused") {
  json d = echo_document();
  d["servers"] = {{"echo", 0}};
  CHECK_THAT(load_error(d), Catch::Contains("at /servers/echo: expected a whole number of servers "
                                            "from 1 to 64, found 0"));
  d["servers"] = {{"ecko", 1}};
  CHECK_THAT(load_error(d), Catch::Contains("did you mean \"echo\"?"));
  d["servers"] = {{"redis", 1}};
  CHECK_THAT(load_error(d), Catch::Contains("the redis has its own section, \"redis\""));
  d = echo_document();
  d["faults"] = json::array({{{"at", "1s"}, {"kind", "step_down"}, {"target", "echo:0"}}});
  CHECK_THAT(load_error(d), Catch::Contains("found \"echo:0\", an echo server, on which step_down "
                                            "does nothing"));
  d["faults"] = json::array({{{"at", "1s"}, {"kind", "crash"}, {"target", "echo:2"}}});
  CHECK_THAT(load_error(d), Catch::Contains("\"echo:0\", \"echo:1\""));  // the names it has
}

TEST_CASE("echo world: the kind reads its own section, as the built-in kinds read theirs") {
  json d = echo_document();
  d["echo"] = {{"copies", 3}};
  const runner::Scenario s = load(d);
  const auto it = s.services.settings.find("echo");
  REQUIRE(it != s.services.settings.end());
  CHECK(std::any_cast<testing::EchoConfig>(it->second).copies == 3);
  CHECK(load(echo_document()).services.settings.count("echo") == 0);  // no section, no settings

  d["echo"] = {{"copies", 0}};
  CHECK_THAT(load_error(d), Catch::Contains("at /echo/copies: expected a whole number of copies "
                                            "from 1 to 16, found 0"));
  d["echo"] = {{"copis", 2}};
  CHECK_THAT(load_error(d), Catch::Contains("at /echo/copis: expected one of the keys of the echo "
                                            "section: copies, found unknown key \"copis\"; did you "
                                            "mean \"copies\"?"));
  d["echo"] = "loud";
  CHECK_THAT(load_error(d), Catch::Contains("at /echo: expected an object (the echo section)"));
}

TEST_CASE("echo world: the kind's servers keep the clocks the clocks section gives them") {
  json d = echo_document();
  d["clocks"] = {{"echo", {{"1", {{"offset", "3s"}, {"drift_ppm", 50}}}}}};
  const runner::Scenario s = load(d);
  const sim::WorldConfig world = runner::world_for_seed(s, 1);
  const sim::Topology topology = sim::topology_of(world);
  CHECK(sim::server_clock(world, *topology.find("echo:1")).offset == std::chrono::seconds(3));
  CHECK(sim::server_clock(world, *topology.find("echo:1")).drift_ppb == 50'000);
  CHECK(sim::server_clock(world, *topology.find("echo:0")).offset == std::chrono::seconds(0));

  d["clocks"] = {{"echo", {{"2", {{"offset", "1s"}}}}}};
  CHECK_THAT(load_error(d), Catch::Contains("at /clocks/echo/2: expected an echo server index from "
                                            "0 to 1 (servers.echo) as the key, found \"2\""));
  d["clocks"] = {{"echo", {{"0", {{"offset", {{"min", "1s"}, {"max", "2s"}}}}}}}};
  CHECK_THAT(load_error(d), Catch::Contains("at /clocks/echo/0: expected a fixed offset and drift "
                                            "(an echo server's clock is not drawn)"));
  d["clocks"] = {{"echo", 5}};
  CHECK_THAT(load_error(d), Catch::Contains("at /clocks/echo: expected an object from echo server "
                                            "index to clock"));
}

TEST_CASE("echo world: the search's nemesis aims at the echo servers") {
  const json base = echo_document();
  const runner::Scenario s = load(base);
  const runner::SearchWorld world = runner::search_world(s);
  bool listed = false;
  for (const runner::SearchServers& g : world.servers) {
    listed = listed || g.names == std::vector<std::string>{"echo:0", "echo:1"};
  }
  CHECK(listed);
  runner::SearchConfig config = runner::SearchConfig::defaults();
  config.faults_min = 8;
  config.faults_max = 8;
  std::set<std::string> seen;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const json d = runner::search_run_document(base, config, seed, world);
    for (const json& f : d["faults"]) {
      if (f.contains("target") && f["target"].is_string()) {
        seen.insert(f["target"].get<std::string>());
      }
    }
    // Every drawn schedule loads: the nemesis aims only at what takes the fault.
    const runner::LoadResult loaded = runner::load_scenario_json(d, "search-run.json");
    for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
    REQUIRE(loaded.scenario);
  }
  CHECK(seen.count("echo:0") == 1);
  CHECK(seen.count("echo:1") == 1);
}

TEST_CASE(
    "echo world: a kind a protocol needs comes with one server unless the file asks for more") {
  // require_servers, as the loader calls it for ProtocolInfo::servers: the echo kind has no
  // `require` of its own, so it gets the registry's: one server.
  servers::Services none;
  servers::require_servers(none, "echo");
  CHECK(servers::servers_of(none, "echo") == 1);
  sim::WorldConfig world;
  world.node_count = 3;
  servers::add_services(world, none);
  CHECK(std::count_if(world.servers.begin(), world.servers.end(),
                      [](const sim::ServerSpec& s) { return s.kind == "echo"; }) == 1);
  servers::Services two;
  two.more.emplace_back("echo", 2);
  servers::require_servers(two, "echo");
  CHECK(servers::servers_of(two, "echo") == 2);
  servers::require_servers(two, "no-such-kind");  // an unknown kind adds nothing
  CHECK(two.more.size() == 1);
}
