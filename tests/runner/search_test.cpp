// Tests of `electsim search` (runner/search.hpp, docs/search.md): the same search gives the same
// findings whatever the thread count, every schedule the nemesis draws loads under every
// protocol, shrinking stays within its budget, and on three planted bugs the shrunk scenario
// still violates its property while removing any one of its faults makes it hold (1-minimal).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "io/input.hpp"
#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "runner/search.hpp"
#include "runner/threads.hpp"
#include "sim/assert.hpp"

using namespace electsim;
using nlohmann::json;
using runner::Property;

namespace {

std::string scenario(const std::string& name) {
  const char* dir = std::getenv("ELECTSIM_SOURCE_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/scenarios/" + name;
}

json document(const std::string& file) {
  const io::ReadResult read = runner::read_scenario_file(scenario(file));
  REQUIRE(read.ok());
  const io::JsonParse parsed = io::parse_json(read.text);
  REQUIRE(parsed.ok());
  return parsed.value;
}

runner::SearchResult search(const std::string& file, runner::LoadOptions load,
                            runner::SearchConfig config, unsigned jobs) {
  runner::SearchOptions options;
  options.jobs = jobs;
  runner::SearchOutcome outcome = runner::run_search(document(file), file, load, config, options);
  for (const std::string& p : outcome.problems) UNSCOPED_INFO(p);
  REQUIRE(outcome.result);
  return std::move(*outcome.result);
}

runner::SearchConfig only(Property p, std::uint64_t runs) {
  runner::SearchConfig c = runner::SearchConfig::defaults();
  c.properties = 1u << static_cast<unsigned>(p);
  c.runs = runs;
  return c;
}

// Runs a written scenario document as `electsim run` would (with the search's planted bug, if
// any).
runner::RunResult run_document(const json& d, const runner::LoadOptions& load = {}) {
  runner::LoadOptions options;
  options.plant = load.plant;
  runner::LoadResult loaded = runner::load_scenario_json(d, "<found>", options);
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  return runner::run_scenario(*loaded.scenario, {});
}

// The document's run meets its expect block and breaks no invariant of the simulation.
bool holds(const json& d, const runner::LoadOptions& load = {}) {
  try {
    const sim::ThrowOnBrokenInvariant throw_instead;
    return run_document(d, load).verdict.ok();
  } catch (const sim::InvariantBroken& e) {
    UNSCOPED_INFO("invariant broken: " << e.what());
    return false;
  }
}

// The end of the safety phase (30 s in these tests): the heal and the drift resets there. The
// nemesis's own faults all start before it.
bool is_heal_phase(const json& fault) {
  const std::string kind = fault["kind"].get<std::string>();
  return fault["at"] == "30000ms" && (kind == "heal" || kind == "clock_drift");
}

// The end of the safety phase resets exactly the clocks the nemesis's faults set drifting, each
// once: a drift that goes takes its reset with it.
void check_resets(const json& d) {
  std::set<std::string> drifted;
  std::multiset<std::string> reset;
  for (const json& f : d["faults"]) {
    if (f["kind"] != "clock_drift") continue;
    if (is_heal_phase(f)) {
      reset.insert(f["target"].dump());
    } else {
      drifted.insert(f["target"].dump());
    }
  }
  CHECK(std::set<std::string>(reset.begin(), reset.end()) == drifted);
  CHECK(reset.size() == drifted.size());
}

// The shrunk file breaks its expect block, and without any one of its nemesis faults it holds.
void check_one_minimal(const runner::Shrunk& s, const runner::LoadOptions& load = {}) {
  INFO(s.document.dump(2));
  REQUIRE_FALSE(s.budget_exhausted);
  check_resets(s.document);
  CHECK_FALSE(holds(s.document, load));
  const json& faults = s.document["faults"];
  std::size_t nemesis = 0;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (is_heal_phase(faults[i])) continue;
    ++nemesis;
    json without = s.document;
    without["faults"].erase(i);
    INFO("without fault " << i << ": " << faults[i].dump());
    CHECK(holds(without, load));
  }
  CHECK(nemesis == s.faults_after);
  CHECK(s.faults_after <= s.faults_before);
}

// The search docs/search.md shows: Bully under the partition scenario's world, `runs` runs.
struct BullySearch {
  runner::LoadOptions load;
  runner::SearchConfig config = runner::SearchConfig::defaults();
};
BullySearch bully_search(std::uint64_t runs) {
  BullySearch b;
  b.load.protocol = "bully";
  b.config.runs = runs;
  return b;
}

}  // namespace

TEST_CASE("search: the same search gives the same findings and files whatever --jobs is") {
  const BullySearch b = bully_search(60);
  const runner::LoadOptions& load = b.load;
  const runner::SearchConfig& config = b.config;
  const runner::SearchResult one = search("partition-minority-leader.json", load, config, 1);
  const runner::SearchResult three = search("partition-minority-leader.json", load, config, 3);
  CHECK(one.runs_done == 60);
  CHECK(one.violations == three.violations);
  REQUIRE(one.first.size() == three.first.size());
  REQUIRE_FALSE(one.first.empty());
  for (std::size_t i = 0; i < one.first.size(); ++i) {
    CHECK(one.first[i].seed == three.first[i].seed);
    CHECK(one.first[i].property == three.first[i].property);
  }
  REQUIRE(one.shrunk.size() == three.shrunk.size());
  for (std::size_t i = 0; i < one.shrunk.size(); ++i) {
    CHECK(one.shrunk[i].document == three.shrunk[i].document);
  }
  CHECK(one.coverage.fault_kinds == three.coverage.fault_kinds);
}

TEST_CASE("search: --jobs 1024 starts at most 4 threads per core, says so once, same findings") {
  runner::LoadOptions load;
  load.protocol = "bully";
  runner::SearchConfig config = runner::SearchConfig::defaults();
  config.runs = 40;
  config.shrink = false;
  runner::SearchOptions options;
  options.jobs = 1024;
  std::vector<std::string> notices;
  options.notice = [&](const std::string& n) { notices.push_back(n); };
  const std::string file = "partition-minority-leader.json";
  runner::SearchOutcome many = runner::run_search(document(file), file, load, config, options);
  REQUIRE(many.result);
  const runner::SearchResult one = search(file, load, config, 1);
  CHECK(many.result->runs_done == 40);
  CHECK(many.result->violations == one.violations);
  REQUIRE(many.result->first.size() == one.first.size());
  for (std::size_t i = 0; i < one.first.size(); ++i) {
    CHECK(many.result->first[i].seed == one.first[i].seed);
  }
  if (runner::max_worker_threads() < 40) {
    REQUIRE(notices.size() == 1);
    CHECK_THAT(notices[0], Catch::StartsWith("--jobs 1024 capped at "));
  } else {
    CHECK(notices.empty());
  }
}

TEST_CASE("search: every schedule the nemesis draws loads under every protocol") {
  for (const std::string& protocol : protocols::protocol_names()) {
    for (const char* members : {"1", "3"}) {
      runner::LoadOptions load;
      load.protocol = protocol;
      load.overrides.push_back({"store.members", members});
      runner::SearchConfig config = runner::SearchConfig::defaults();
      for (auto& w : config.weights) w = std::max<std::uint32_t>(w, 1);
      config.weights[static_cast<std::size_t>(sim::FaultKind::heal)] = 0;
      config.faults_min = 4;
      config.faults_max = 12;
      config.runs = 12;
      config.shrink = false;
      config.safety = std::chrono::seconds(10);
      config.heal_bound = std::chrono::seconds(5);
      INFO(protocol << " with " << members << " store members");
      const runner::SearchResult r = search("leader-crash.json", load, config, 2);
      CHECK(r.runs_done == 12);
    }
  }
}

TEST_CASE("search: shrinking spends at most its budget and keeps a violating file") {
  runner::LoadOptions load;
  load.protocol = "bully";
  runner::SearchConfig config = only(Property::stale_write, 40);
  config.shrink_budget = 3;
  config.faults_min = 5;
  config.faults_max = 8;
  const runner::SearchResult r = search("partition-minority-leader.json", load, config, 2);
  REQUIRE(r.shrunk.size() == 1);
  const runner::Shrunk& s = r.shrunk[0];
  CHECK(s.runs <= 3);
  CHECK(s.budget_exhausted);
  CHECK_FALSE(run_document(s.document).verdict.ok());
  CHECK(s.document["found"]["property"] == "stale_write");
}

TEST_CASE("search: a careless lease client without fencing shrinks to a 1-minimal overwrite") {
  runner::LoadOptions load;
  load.overrides = {{"protocol.recheck_before_write", "false"}, {"protocol.fencing", "false"}};
  const runner::SearchResult r =
      search("lease-gc-pause-fence.json", load, only(Property::overwrite, 100), 2);
  REQUIRE(r.violations[static_cast<std::size_t>(Property::overwrite)] > 0);
  REQUIRE(r.shrunk.size() == 1);
  check_one_minimal(r.shrunk[0]);
  CHECK(r.shrunk[0].document["expect"] == json{{"stale_writes_overwriting", {{"max", 0}}}});
  // The scenario's random latency (uniform 1 to 10 ms) is a constant in the shrunk file.
  CHECK(document("lease-gc-pause-fence.json")["network"]["latency"].is_object());
  CHECK(r.shrunk[0].document["network"]["latency"] == "1ms");
}

TEST_CASE("search: Bully under partition shrinks to a 1-minimal stale write") {
  runner::LoadOptions load;
  load.protocol = "bully";
  const runner::SearchResult r =
      search("partition-minority-leader.json", load, only(Property::stale_write, 100), 2);
  REQUIRE(r.shrunk.size() == 1);
  check_one_minimal(r.shrunk[0]);
}

TEST_CASE(
    "search: a store whose votes skip the log check shrinks to 1-minimal conflicting commits") {
  // The planted bug: the replicated store's Raft grants votes without the up-to-date rule
  // (Raft §5.4.1), so a member that missed committed entries can lead and overwrite them.
  runner::LoadOptions planted;
  planted.plant = [](runner::Scenario& s) {
    s.services.replication.raft.planted_skip_log_check = true;
  };
  // A follower told to replace an entry it knows committed breaks the log's invariant (Raft
  // §5.4); members that apply different commands at one index break store_safety. Keepalives do
  // not go through the log, so a member misses committed entries only around elections: it
  // takes a couple of thousand runs to find one.
  runner::SearchConfig config = only(Property::invariant, 2000);
  config.properties |= 1u << static_cast<unsigned>(Property::store_safety);
  const runner::SearchResult found = search("store-partition.json", planted, config, 2);
  REQUIRE(found.violations[static_cast<std::size_t>(Property::invariant)] +
              found.violations[static_cast<std::size_t>(Property::store_safety)] >
          0);
  REQUIRE_FALSE(found.shrunk.empty());
  for (const runner::Shrunk& s : found.shrunk) check_one_minimal(s, planted);
  // The shrunk file is an ordinary scenario: without the planted bug the store stays safe.
  CHECK(holds(found.shrunk[0].document));
  const runner::SearchResult sound = search("store-partition.json", {}, config, 2);
  CHECK(sound.violations[static_cast<std::size_t>(Property::invariant)] == 0);
  CHECK(sound.violations[static_cast<std::size_t>(Property::store_safety)] == 0);
}

TEST_CASE("search: the database flag after a crash shrinks to a 1-minimal missing recovery") {
  const runner::SearchResult r =
      search("db-flag-stuck-forever.json", {}, only(Property::no_recovery, 100), 2);
  REQUIRE(r.shrunk.size() == 1);
  check_one_minimal(r.shrunk[0]);
  const json& expect = r.shrunk[0].document["expect"];
  CHECK(expect.contains("heal_recovery"));
}

TEST_CASE("search: the search section and the kinds are checked, each problem located") {
  runner::SearchConfig config = runner::SearchConfig::defaults();
  params::Problems problems;
  runner::read_search_section(json{{"runs", 0},
                                   {"kinds", {{"crush", 1}}},
                                   {"properties", {"overwrite", "nope"}},
                                   {"faults", {{"min", 5}, {"max", 2}}},
                                   {"safety", "ten"},
                                   {"bogus", 1}},
                              config, problems);
  std::vector<std::string> pointers;
  for (const auto& p : problems) pointers.push_back(p.pointer);
  for (const char* expected : {"/search/runs", "/search/kinds", "/search/properties/1",
                               "/search/faults", "/search/safety", "/search/bogus"}) {
    INFO(expected);
    CHECK(std::find(pointers.begin(), pointers.end(), expected) != pointers.end());
  }
  runner::SearchConfig unbounded = runner::SearchConfig::defaults();
  params::Problems failover_problems;
  runner::read_search_section(json{{"properties", {"failover"}}}, unbounded, failover_problems);
  REQUIRE(failover_problems.size() == 1);
  CHECK(failover_problems[0].pointer == "/search/properties/0");
  for (const json& bad : {json("overwrite"), json::array()}) {
    runner::SearchConfig c = runner::SearchConfig::defaults();
    params::Problems p;
    runner::read_search_section(json{{"properties", bad}}, c, p);
    REQUIRE(p.size() == 1);
    CHECK(p[0].pointer == "/search/properties");
    CHECK(c.properties == runner::SearchConfig::defaults().properties);
  }
  runner::SearchConfig bounded = runner::SearchConfig::defaults();
  params::Problems none;
  runner::read_search_section(json{{"failover_bound", "5s"}}, bounded, none);
  CHECK(none.empty());
  CHECK(bounded.wants(Property::failover));

  runner::SearchConfig kinds = runner::SearchConfig::defaults();
  CHECK(runner::parse_kinds("pause=2,crash", kinds) == std::nullopt);
  CHECK(kinds.weights[static_cast<std::size_t>(sim::FaultKind::pause)] == 2);
  CHECK(kinds.weights[static_cast<std::size_t>(sim::FaultKind::crash)] == 1);
  CHECK(kinds.weights[static_cast<std::size_t>(sim::FaultKind::partition)] == 0);
  CHECK(runner::parse_kinds("crash=x", kinds).has_value());
  CHECK(runner::parse_kinds("heal", kinds).has_value());
  CHECK(runner::parse_kinds("crash=0", kinds).has_value());

  runner::SearchConfig intense = runner::SearchConfig::defaults();
  CHECK(runner::parse_intensity("loss=0.2,clock_jump=500ms,drift_ppm=100", intense) ==
        std::nullopt);
  CHECK(intense.max_loss_percent == 20);
  CHECK(intense.max_clock_jump == std::chrono::milliseconds(500));
  CHECK(intense.max_drift_ppm == 100);
  const auto bad = runner::parse_intensity("loss=2", intense);
  REQUIRE(bad.has_value());
  CHECK(bad->find("a probability from 0.05 to 1") != std::string::npos);
  CHECK(intense.max_loss_percent == 20);  // unchanged by a bad value
  CHECK(runner::parse_intensity("heat=1", intense).has_value());
  CHECK(runner::parse_intensity("latency=2h", intense).has_value());
}

TEST_CASE("search: --kinds, --intensity and --property are read exactly, each item once") {
  auto [list, text, says] = GENERATE(table<std::string, std::string, std::string>({
      {"kinds", "crash,pause,crash=2", "each fault kind once, found \"crash\" a second time"},
      {"kinds", "crash,,pause", "a fault kind in every item, found an empty item in"},
      {"kinds", "crash,", "a fault kind in every item"},
      {"kinds", "", "a fault kind in every item"},
      {"kinds", "crash=-0", "in plain digits (no sign, space or leading zero), found \"-0\""},
      {"kinds", "crash=+1", "in plain digits"},
      {"kinds", "crash=01", "in plain digits"},
      {"kinds", "crash= 1", "in plain digits"},
      {"kinds", "crash=1001", "a weight from 0 to 1000 after \"crash=\", found \"1001\""},
      {"intensity", "loss=0.2,loss=0.5", "each intensity once, found \"loss\" a second time"},
      {"intensity", "loss=0.2,,latency=5ms", "key=value in every item, found an empty item"},
      {"intensity", "loss= 0.2", "written as a plain decimal"},
      {"intensity", "loss=+0.2", "written as a plain decimal"},
      {"intensity", "loss=.5", "written as a plain decimal"},
      {"intensity", "loss=00.5", "written as a plain decimal"},
      {"intensity", "loss=5e-1", "written as a plain decimal"},
      {"intensity", "duplicate=0.5.", "written as a plain decimal"},
      {"intensity", "drift_ppm=+50", "in plain digits"},
      {"intensity", "drift_ppm=050", "in plain digits"},
      {"property", "stale_write,,overwrite", "a property in every item, found an empty item"},
  }));
  INFO(list << " " << text);
  runner::SearchConfig config = runner::SearchConfig::defaults();
  const runner::SearchConfig before = config;
  const auto problem = list == "kinds"       ? runner::parse_kinds(text, config)
                       : list == "intensity" ? runner::parse_intensity(text, config)
                                             : runner::parse_properties(text, config);
  REQUIRE(problem.has_value());
  CHECK_THAT(*problem, Catch::Contains(says));
  CHECK(config.weights == before.weights);  // nothing taken from a refused list
  CHECK(config.max_loss_percent == before.max_loss_percent);
  CHECK(config.properties == before.properties);
}

TEST_CASE("search: plain numbers in lists are still read") {
  runner::SearchConfig config = runner::SearchConfig::defaults();
  REQUIRE(runner::parse_kinds("crash=0,pause=10", config) == std::nullopt);
  CHECK(config.weights[static_cast<std::size_t>(sim::FaultKind::pause)] == 10);
  REQUIRE(runner::parse_intensity("loss=1,duplicate=0.05,drift_ppm=500000", config) ==
          std::nullopt);
  CHECK(config.max_loss_percent == 100);
  CHECK(config.max_duplicate_percent == 5);
  CHECK(config.max_drift_ppm == 500000);
}

TEST_CASE("search: the healing phase resets the drift of every clock the nemesis set drifting") {
  runner::SearchConfig config = runner::SearchConfig::defaults();
  REQUIRE(runner::parse_kinds("clock_drift=3,pause=1", config) == std::nullopt);
  config.faults_min = 1;
  config.faults_max = 8;
  const json base = document("store-partition.json");
  const runner::LoadResult loaded = runner::load_scenario_json(base, "store-partition.json");
  REQUIRE(loaded.scenario);
  std::size_t resets = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    INFO("seed " << seed);
    const json d =
        runner::search_run_document(base, config, seed, runner::search_world(*loaded.scenario));
    check_resets(d);
    for (const json& f : d["faults"]) resets += is_heal_phase(f) && f["kind"] == "clock_drift";
  }
  CHECK(resets > 50);
}

TEST_CASE("search: intensities bound what the nemesis draws") {
  runner::SearchConfig config = runner::SearchConfig::defaults();
  REQUIRE(runner::parse_kinds("clock_step=1,loss=1", config) == std::nullopt);
  REQUIRE(runner::parse_intensity("loss=0.1,clock_jump=20ms", config) == std::nullopt);
  config.faults_min = 8;
  config.faults_max = 8;
  const json base = document("leader-crash.json");
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    runner::SearchWorld world;
    world.nodes = 5;
    world.store = true;
    const json d = runner::search_run_document(base, config, seed, world);
    for (const json& f : d["faults"]) {
      if (f["kind"] == "loss") CHECK(f["probability"].get<double>() <= 0.1 + 1e-9);
      if (f["kind"] == "clock_step") {
        const auto by = sim::parse_duration(f["by"].get<std::string>());
        REQUIRE(by);
        CHECK(std::chrono::abs(*by) <= std::chrono::milliseconds(20));
      }
    }
  }
}

TEST_CASE("search: the nemesis aims at every server the protocol depends on") {
  runner::SearchConfig config = runner::SearchConfig::defaults();
  config.faults_min = 8;
  config.faults_max = 8;
  // Every endpoint name and target the nemesis wrote in 300 runs of one world.
  auto names = [&](const std::string& file) {
    const json base = document(file);
    const runner::LoadResult loaded = runner::load_scenario_json(base, file);
    REQUIRE(loaded.scenario);
    const runner::SearchWorld world = runner::search_world(*loaded.scenario);
    std::set<std::string> seen;
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
      const json d = runner::search_run_document(base, config, seed, world);
      for (const json& f : d["faults"]) {
        for (const char* key : {"target", "from", "to"}) {
          if (f.contains(key) && f[key].is_string()) seen.insert(f[key].get<std::string>());
        }
        for (const json& group : f.value("groups", json::array())) {
          for (const json& e : group) {
            if (e.is_string()) seen.insert(e.get<std::string>());
          }
        }
      }
    }
    return seen;
  };
  const std::set<std::string> redlock = names("redlock-gc-pause.json");
  for (const char* master : {"redis:0", "redis:1", "redis:2", "redis:3", "redis:4"}) {
    CHECK(redlock.count(master) == 1);
  }
  CHECK(redlock.count("store") == 0);  // redlock does not use the store
  const std::set<std::string> postgres = names("postgres-dead-client-keepalive.json");
  CHECK(postgres.count("postgres") == 1);
  CHECK(postgres.count("redis:0") == 0);
  const std::set<std::string> members = names("store-partition.json");
  for (const char* m : {"store:0", "store:1", "store:2", "store_leader", "store_follower"}) {
    CHECK(members.count(m) == 1);
  }
  CHECK(members.count("store") == 0);  // members by name, never the first one's alias
  const std::set<std::string> single = names("lease-leader-crash.json");
  CHECK(single.count("store") == 1);
  CHECK(single.count("store:0") == 0);
}

TEST_CASE("search: a server the file configures but the protocol does not need is left alone") {
  // Servers listed for the nemesis, by name, for the lease file with a database and three Redis
  // masters configured, run with `protocol`.
  const auto aimed = [](const char* protocol) {
    json d = document("lease-leader-crash.json");
    d["postgres"] = json::object();
    d["redis"] = {{"masters", 3}};
    d["protocol"] = {{"name", protocol}};
    const runner::LoadResult loaded = runner::load_scenario_json(d, "configured.json");
    REQUIRE(loaded.scenario);
    CHECK(loaded.scenario->services.postgres.has_value());
    CHECK(loaded.scenario->services.redis.has_value());
    std::set<std::string> names;
    for (const runner::SearchServers& g : runner::search_world(*loaded.scenario).servers) {
      names.insert(g.names.begin(), g.names.end());
    }
    return names;
  };
  const std::set<std::string> lease = aimed("lease");
  CHECK(lease.count("store") == 1);
  CHECK(lease.count("postgres") == 0);
  CHECK(lease.count("redis:0") == 0);
  const std::set<std::string> postgres = aimed("postgres");
  CHECK(postgres.count("postgres") == 1);
  CHECK(postgres.count("redis:0") == 0);
  const std::set<std::string> redlock = aimed("redlock");
  CHECK(redlock.count("postgres") == 0);
  CHECK(redlock.count("redis:2") == 1);
}

TEST_CASE("search: some partitions are partial, leaving nodes linked to both sides") {
  runner::SearchConfig config = runner::SearchConfig::defaults();
  REQUIRE(runner::parse_kinds("partition", config) == std::nullopt);
  config.faults_min = 1;
  config.faults_max = 1;
  runner::SearchWorld world;
  world.nodes = 5;
  const json base = document("leader-crash.json");
  int partial = 0;
  int whole = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const json d = runner::search_run_document(base, config, seed, world);
    const json& groups = d["faults"][0]["groups"];
    REQUIRE(groups.size() == 2);
    std::size_t named = 0;
    bool rest = false;
    for (const json& g : groups) {
      for (const json& e : g) {
        rest = rest || e == "rest";
        named += e == "rest" ? 0 : 1;
      }
    }
    // "rest" takes every node not named; without it, the nodes left out bridge the sides.
    if (rest) {
      ++whole;
    } else {
      CHECK(named < world.nodes);
      CHECK(named >= 2);
      ++partial;
    }
  }
  CHECK(partial > 30);
  CHECK(whole > 100);
}

TEST_CASE("search: a careless lease client acts after its own deadline, a careful one never") {
  runner::LoadOptions careless;
  careless.overrides = {{"protocol.recheck_before_write", "false"}};
  const runner::SearchResult found =
      search("lease-gc-pause-fence.json", careless, only(Property::stale_action, 100), 2);
  REQUIRE(found.violations[static_cast<std::size_t>(Property::stale_action)] > 0);
  REQUIRE(found.shrunk.size() == 1);
  check_one_minimal(found.shrunk[0]);
  CHECK(run_document(found.shrunk[0].document).report.writes_after_deadline > 0);
  const runner::SearchResult careful =
      search("lease-gc-pause-fence.json", {}, only(Property::stale_action, 100), 2);
  CHECK(careful.violations[static_cast<std::size_t>(Property::stale_action)] == 0);
}

TEST_CASE("search: honest reports: untested properties, inapplicable kinds, the protocol's bound") {
  SECTION("a kind that cannot apply draws nothing: no finding, and the report says why") {
    runner::SearchConfig c = runner::SearchConfig::defaults();
    REQUIRE_FALSE(runner::parse_kinds("store_pause", c));
    c.runs = 5;
    runner::LoadOptions load;
    load.protocol = "raft";
    const runner::SearchResult r = search("leader-crash.json", load, c, 1);
    for (const std::uint64_t n : r.violations) CHECK(n == 0);
    REQUIRE(r.kinds_inapplicable.size() == 1);
    CHECK(r.kinds_inapplicable[0] == "store_pause");
    CHECK(r.runs_healed == 0);
    const std::string report = runner::format_search_report(r, c);
    CHECK_THAT(report, Catch::Contains("no_recovery   untested: no run had a fault to heal"));
    CHECK_THAT(report, Catch::Contains("overwrite     untested: no fault silenced a leader"));
    CHECK_THAT(report,
               Catch::Contains("cannot apply to this world") && Catch::Contains("store_pause"));
  }
  SECTION("Consul's own recovery sets the healing bound, and a lower one is warned about") {
    runner::SearchConfig c = runner::SearchConfig::defaults();
    c.runs = 20;
    runner::LoadOptions load;
    load.protocol = "consul";
    const runner::SearchResult r = search("leader-crash.json", load, c, 1);
    // 2 x 15 s + 15 s lock-delay, a blocking query's 15 s, a renewal's 7.5 s, two writes.
    CHECK(r.heal_bound >= std::chrono::seconds(67));
    CHECK(r.warnings.empty());
    CHECK(r.violations[static_cast<std::size_t>(Property::no_recovery)] == 0);
    c.heal_bound = std::chrono::seconds(20);
    c.heal_bound_given = true;
    const runner::SearchResult low = search("leader-crash.json", load, c, 1);
    CHECK(low.heal_bound == std::chrono::seconds(20));
    REQUIRE(low.warnings.size() == 1);
    CHECK_THAT(low.warnings[0], Catch::Contains("below consul's own worst-case recovery"));
  }
  SECTION("every saved finding breaks its own expect block when run") {
    runner::LoadOptions load;
    load.protocol = "bully";
    const runner::SearchResult r =
        search("partition-minority-leader.json", load, only(Property::stale_write, 50), 1);
    REQUIRE_FALSE(r.shrunk.empty());
    for (const runner::Shrunk& s : r.shrunk) {
      CHECK(s.reproduced);
      CHECK_FALSE(run_document(s.document).verdict.ok());
    }
  }
}

TEST_CASE("search: a run cut short by the limit on events breaks no liveness property") {
  runner::LoadOptions load;
  load.overrides.push_back({"limits.events", "2000"});
  runner::SearchConfig c = only(Property::no_recovery, 10);
  const runner::SearchResult r = search("lease-leader-crash.json", load, c, 1);
  CHECK(r.runs_incomplete == 10);
  CHECK(r.violations[static_cast<std::size_t>(Property::no_recovery)] == 0);
  CHECK_THAT(runner::format_search_report(r, c),
             Catch::Contains("10 of 10 runs hit the limit on events"));
}

TEST_CASE("search: the nemesis's default weights are the fault catalogue's, and each is drawn") {
  const runner::SearchConfig config = runner::SearchConfig::defaults();
  for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
    CHECK(config.weights[static_cast<std::size_t>(info.kind)] == info.nemesis_weight);
  }
  // On a world where every kind can apply (a replicated store, so disk stalls and campaigns have
  // members to hit), a search with the defaults draws every kind the catalogue weighs.
  runner::LoadOptions load;
  load.overrides.push_back({"store.members", "3"});
  runner::SearchConfig c = config;
  c.runs = 60;
  c.shrink = false;
  c.safety = std::chrono::seconds(10);
  c.heal_bound = std::chrono::seconds(5);
  const runner::SearchResult r = search("lease-leader-crash.json", load, c, 2);
  for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
    if (info.nemesis_weight == 0) continue;
    INFO(info.name);
    CHECK(((r.coverage.fault_kinds >> static_cast<unsigned>(info.kind)) & 1u) == 1u);
  }
}

TEST_CASE("search: the nemesis draws every kind from its catalogue row, and every draw loads") {
  // Two worlds between them give every kind something to act on: a single store that keeps a
  // leader key (operator_clear), and a replicated store (disk stalls and campaigns on members).
  const json single = document("lease-leader-crash.json");
  json replicated = single;
  replicated["store"]["members"] = 3;
  for (const sim::FaultKindInfo& info : sim::fault_catalogue()) {
    if (info.kind == sim::FaultKind::heal) continue;  // the nemesis's own, at the safety's end
    INFO(info.name);
    runner::SearchConfig config = runner::SearchConfig::defaults();
    config.weights.fill(0);
    config.weights[static_cast<std::size_t>(info.kind)] = 1;
    config.faults_min = 2;
    config.faults_max = 2;
    std::size_t drawn = 0;
    for (const json& base : {single, replicated}) {
      const runner::LoadResult loaded = runner::load_scenario_json(base, "base.json");
      REQUIRE(loaded.scenario);
      const runner::SearchWorld world = runner::search_world(*loaded.scenario);
      for (std::uint64_t seed = 1; seed <= 30; ++seed) {
        const json d = runner::search_run_document(base, config, seed, world);
        for (const json& f : d["faults"]) drawn += f["kind"] == info.name ? 1 : 0;
        const runner::LoadResult run = runner::load_scenario_json(d, "run.json");
        for (const auto& m : run.messages()) UNSCOPED_INFO(m);
        REQUIRE(run.scenario);
      }
    }
    CHECK(drawn > 0);
  }
}

namespace {

// A search split into `n` shards, each written as its part.
std::vector<runner::PartText> shard_parts(const std::string& file, const runner::LoadOptions& load,
                                          const runner::SearchConfig& config, std::uint64_t n,
                                          unsigned jobs) {
  std::vector<runner::PartText> parts;
  for (std::uint64_t i = 1; i <= n; ++i) {
    runner::SearchOptions options;
    options.jobs = jobs;
    options.shard = runner::Shard{i, n};
    runner::SearchOutcome outcome = runner::run_search(document(file), file, load, config, options);
    REQUIRE(outcome.result);
    CHECK(outcome.result->runs_done == options.shard->runs_of(config.runs));
    parts.push_back({"p" + std::to_string(i) + ".part",
                     runner::search_part(*outcome.result, config, *options.shard)});
  }
  return parts;
}

}  // namespace

TEST_CASE("search: shards merged give the one-process report, findings and files") {
  const BullySearch b = bully_search(120);
  const runner::LoadOptions& load = b.load;
  const runner::SearchConfig& config = b.config;
  const runner::SearchResult whole = search("partition-minority-leader.json", load, config, 2);
  REQUIRE(whole.shrunk.size() >= 2);  // stale_write and same_epoch, as docs/search.md shows
  for (const std::uint64_t n : {1, 3, 7}) {
    INFO(n << " shards");
    std::vector<runner::PartText> parts =
        shard_parts("partition-minority-leader.json", load, config, n, n == 3 ? 1 : 2);
    std::reverse(parts.begin(), parts.end());  // in any order
    const runner::SearchMerge merged = runner::merge_search_parts(parts);
    for (const std::string& p : merged.problems) UNSCOPED_INFO(p);
    REQUIRE(merged.result);
    CHECK(runner::format_search_report(*merged.result, merged.config) ==
          runner::format_search_report(whole, config));
    REQUIRE(merged.result->shrunk.size() == whole.shrunk.size());
    for (std::size_t i = 0; i < whole.shrunk.size(); ++i) {
      CHECK(merged.result->shrunk[i].document == whole.shrunk[i].document);
      CHECK(merged.result->shrunk[i].reproduced == whole.shrunk[i].reproduced);
    }
    CHECK(merged.result->violations == whole.violations);
    CHECK(merged.result->longest_outage_seed == whole.longest_outage_seed);
  }
}

TEST_CASE("search: a merge refuses parts that are not one whole search, saying which") {
  BullySearch b = bully_search(12);
  b.config.shrink = false;
  const runner::LoadOptions& load = b.load;
  const runner::SearchConfig& config = b.config;
  const std::vector<runner::PartText> parts =
      shard_parts("partition-minority-leader.json", load, config, 3, 1);
  const auto problem = [](const std::vector<runner::PartText>& given) {
    const runner::SearchMerge merged = runner::merge_search_parts(given);
    CHECK_FALSE(merged.result);
    REQUIRE(merged.problems.size() == 1);
    return merged.problems.front();
  };
  CHECK_THAT(problem({parts[0], parts[2]}), Catch::Contains("shards 2/3 are missing"));
  CHECK_THAT(problem({parts[0], parts[1], parts[1], parts[2]}),
             Catch::Contains("p2.part:1: shard 2/3 is also p2.part"));
  runner::SearchConfig other = config;
  other.first_seed = 5;
  const std::vector<runner::PartText> elsewhere =
      shard_parts("partition-minority-leader.json", load, other, 3, 1);
  CHECK_THAT(problem({parts[0], elsewhere[1], parts[2]}),
             Catch::Contains("p2.part:1: this part comes from a different search than p1.part"));
  // A part edited by hand: each change is refused at its line.
  const auto edited = [&](const std::string& from, const std::string& to) {
    std::vector<runner::PartText> copy = parts;
    const std::size_t at = copy[1].text.find(from);
    REQUIRE(at != std::string::npos);
    copy[1].text.replace(at, from.size(), to);
    return problem(copy);
  };
  CHECK_THAT(edited("\"stopped\":false", "\"stopped\":true"),
             Catch::Contains("p2.part:2: shard 2/3 stopped after 4 of its 4 runs"));
  CHECK_THAT(edited("\"runs_done\":4", "\"runs_done\":5"),
             Catch::Contains("p2.part:2: expected \"runs_done\" to be a whole number from 0 to 4"));
  CHECK_THAT(edited("\"shard\":\"2/3\"", "\"shard\":\"4/3\""),
             Catch::Contains("p2.part:1: expected \"shard\": \"i/n\""));
  CHECK_THAT(edited("\"coverage\":[", "\"coverage\":[99999999999,"),
             Catch::Contains("p2.part:2: expected \"coverage\": [fault kinds, roles"));
  CHECK_THAT(edited("{\"counts\"", "[{\"counts\""),
             Catch::Contains("p2.part:2: expected a JSON object"));
  CHECK_THAT(problem({{"x.part", "{\"electsim_sweep_part\":1}\n"}}),
             Catch::Contains("x.part:1: expected a search part"));
}
