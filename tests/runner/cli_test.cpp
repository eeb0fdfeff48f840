// The command line as users run it: exit codes, messages for bad input, list, validate, --set,
// --json, --trace and check, and determinism of whole outputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "servers/registry.hpp"
#include "tests/temp_files.hpp"

using electsim::cli::run_cli;

namespace {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

Outcome cli(std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

std::string source_dir() {
  const char* dir = std::getenv("ELECTSIM_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

std::string scenario(const std::string& name) {
  return source_dir() + "/scenarios/" + name;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("electsim-cli-test-" + name);
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("cli: no command prints usage and exits 2, an unknown command names itself") {
  const Outcome none = cli({});
  CHECK(none.code == 2);
  CHECK(none.out.find("usage: electsim") != std::string::npos);
  const Outcome bad = cli({"frobnicate"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown command 'frobnicate'") != std::string::npos);
}

TEST_CASE("cli: every command has --help") {
  for (const char* command : {"run", "compare", "sweep", "merge", "validate", "list", "check"}) {
    const Outcome o = cli({command, "--help"});
    INFO(command);
    CHECK(o.code == 0);
    CHECK(o.out.find(std::string("electsim ") + command) != std::string::npos);
  }
}

TEST_CASE("cli: run without a file runs the flagship with and without fencing") {
  const Outcome o = cli({"run"});
  CHECK(o.code == 0);
  CHECK(o.out.find("seed") < o.out.find("trace hash"));
  CHECK(o.out.find("no-fencing") != std::string::npos);
}

TEST_CASE("cli: a broken expectation exits 1 and says which bound broke") {
  const Outcome o =
      cli({"run", scenario("lease-gc-pause-fence.json"), "--set", "protocol.fencing=false"});
  CHECK(o.code == 1);
  CHECK(o.out.find("stale_writes_accepted") != std::string::npos);
}

TEST_CASE("cli: bad input exits 2 with file, pointer, expectation and suggestion") {
  const std::string path = temp_file("bad.json", R"({
    "name": "bad", "duration": "10s", "nodes": 3,
    "protocol": {"name": "lease", "tll": "2s"},
    "faults": [{"at": "20s", "kind": "crash", "target": 1}]
  })");
  const Outcome o = cli({"run", path});
  CHECK(o.code == 2);
  CHECK(o.err.find(path) != std::string::npos);
  CHECK(o.err.find("/protocol/tll") != std::string::npos);
  CHECK(o.err.find("\"ttl\"") != std::string::npos);
  CHECK(o.err.find("/faults/0/at") != std::string::npos);
  const Outcome v = cli({"validate", path});
  CHECK(v.code == 2);
  std::remove(path.c_str());
}

TEST_CASE("cli: bad command-line values exit 2") {
  CHECK(cli({"run", "--seed", "abc"}).code == 2);
  CHECK(cli({"run", "--set", "nonsense"}).code == 2);
  CHECK(cli({"run", "--no-such-flag"}).code == 2);
  CHECK(cli({"run", "/no/such/file.json"}).code == 2);
  CHECK(cli({"list", "everything"}).code == 2);
}

TEST_CASE("cli: validate accepts every shipped scenario") {
  for (const auto& entry : std::filesystem::directory_iterator(source_dir() + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Outcome o = cli({"validate", entry.path().string()});
    INFO(entry.path().string() << "\n" << o.err);
    CHECK(o.code == 0);
    CHECK(o.out.find(": ok") != std::string::npos);
  }
}

TEST_CASE("cli: list shows every lease parameter with its default and meaning") {
  const Outcome o = cli({"list", "protocols"});
  CHECK(o.code == 0);
  for (const char* p : {"ttl", "renew_interval", "renew_deadline", "retry_interval", "fencing",
                        "expiry", "recheck_before_write"}) {
    INFO(p);
    CHECK(o.out.find(p) != std::string::npos);
  }
  CHECK(cli({"list", "metrics"}).out.find("split_brain_time") != std::string::npos);
}

TEST_CASE("cli: list servers prints every registered kind with the faults each form takes") {
  const Outcome o = cli({"list", "servers"});
  CHECK(o.code == 0);
  for (const electsim::servers::ServerKindInfo& kind : electsim::servers::all_server_kinds()) {
    INFO(kind.name);
    CHECK(o.out.find("  " + kind.name + " ") != std::string::npos);
    for (const electsim::servers::ServerForm& form : kind.forms) {
      CHECK(o.out.find(form.noun + ": ") != std::string::npos);
    }
  }
  // A store member takes a disk stall; the single store does not crash.
  CHECK(o.out.find("a store member: a coordinator; lane store; faults: crash") !=
        std::string::npos);
  CHECK(o.out.find("the single store: a coordinator; lane store; faults: clock_offset") !=
        std::string::npos);
  // The Redis masters keep their own clocks, which the clocks section gives by index.
  CHECK(o.out.find("clocks of their own: /clocks/redis, by master index (redis.masters)") !=
        std::string::npos);
  CHECK(cli({"list"}).out.find("server kinds (the server registry)") != std::string::npos);
}

TEST_CASE("cli: --set and --seed change the run, --json is machine-readable and deterministic") {
  const std::string file = scenario("lease-leader-crash.json");
  const Outcome a = cli({"run", file, "--json", "--seed", "3"});
  const Outcome b = cli({"run", file, "--json", "--seed", "3"});
  const Outcome c = cli({"run", file, "--json", "--seed", "3", "--set", "protocol.ttl=5s"});
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  const auto ja = nlohmann::json::parse(a.out);
  const auto jc = nlohmann::json::parse(c.out);
  CHECK(ja["seed"] == 3);
  CHECK(ja != jc);
}

TEST_CASE("cli: --trace writes a trace that check reads back to the same verdict") {
  const auto path =
      (std::filesystem::temp_directory_path() / "electsim-cli-test-trace.jsonl").string();
  const Outcome r = cli({"run", scenario("lease-leader-crash.json"), "--trace", path});
  REQUIRE(r.code == 0);
  const Outcome c = cli({"check", path, "--scenario", scenario("lease-leader-crash.json")});
  CHECK(c.code == 0);
  // The same hash line appears in both summaries.
  const auto hash_line = [](const std::string& s) {
    const auto at = s.find("trace hash");
    return s.substr(at, s.find('\n', at) - at);
  };
  CHECK(hash_line(r.out) == hash_line(c.out));
  // One event count: the run's events in the trace are the lines check reads back.
  const auto events_of = [](const std::string& s) {
    const auto at = s.find(", ", s.find("simulated "));
    return s.substr(at, s.find(" events in the trace", at) - at);
  };
  CHECK(events_of(r.out) == events_of(c.out));
  CHECK_THAT(r.out, Catch::Contains("kernel steps"));
  std::remove(path.c_str());
  CHECK(cli({"check", path}).code == 2);  // gone: a clear error, not a crash
}

TEST_CASE("cli: compare gives the same table for the same seed, and another for another seed") {
  const std::string file = scenario("lease-leader-crash.json");
  const Outcome a = cli({"compare", file, "--seed", "4"});
  const Outcome b = cli({"compare", file, "--seed", "4"});
  const Outcome c = cli({"compare", file, "--seed", "5"});
  INFO(a.err);
  // The file's bounds were written for the lease; other protocols may break them (exit 1).
  REQUIRE(a.code != 2);
  CHECK(a.out == b.out);
  CHECK(a.out != c.out);
  for (const char* row :
       {"failover median", "failover max", "write outage max", "leaderless", "split-brain time",
        "same-epoch leaders", "stale writes accepted", "stale writes rejected",
        "election messages per election", "store requests per second"}) {
    INFO(row);
    CHECK(a.out.find(row) != std::string::npos);
  }
  const Outcome csv = cli({"compare", file, "--seed", "4", "--csv"});
  CHECK(csv.out.rfind("protocol,seed,verdict", 0) == 0);
  const auto json_out = nlohmann::json::parse(cli({"compare", file, "--json"}).out);
  CHECK(json_out.contains("table"));
  CHECK(cli({"compare", file, "--protocols", "paxos"}).code == 2);
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string temp_prefix(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("electsim-cli-test-" + name)).string();
}

}  // namespace

TEST_CASE("cli: sweep writes its tables whole and the same for any --jobs") {
  const std::string a = temp_prefix("sweep-a");
  const std::string b = temp_prefix("sweep-b");
  const std::vector<std::string> base = {"sweep",   scenario("lease-gc-pause-fence.json"),
                                         "--grid",  "protocol.ttl=1s..3s:1s",
                                         "--seeds", "1..3",
                                         "--quiet", "--runs"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const Outcome one = cli(with({"--jobs", "1", "-o", a}));
  INFO(one.err);
  REQUIRE(one.code == 0);
  const Outcome two = cli(with({"--jobs", "2", "-o", b}));
  REQUIRE(two.code == 0);
  CHECK(one.out == two.out);
  CHECK(one.out.find("protocol.ttl") != std::string::npos);
  for (const char* ext : {".csv", ".json", ".runs.csv"}) {
    INFO(ext);
    const std::string text = slurp(a + ext);
    CHECK_FALSE(text.empty());
    CHECK(text == slurp(b + ext));
    CHECK_FALSE(electsim::testing::has_temporary(a + ext));
  }
  // A row per grid point plus the header; a row per run plus the header.
  const std::string points = slurp(a + ".csv");
  CHECK(std::count(points.begin(), points.end(), '\n') == 4);
  const std::string runs = slurp(a + ".runs.csv");
  CHECK(std::count(runs.begin(), runs.end(), '\n') == 10);
  CHECK(runs.find("--set protocol.ttl=2s --seed 3") != std::string::npos);
}

TEST_CASE("cli: sweep --protocols NAME takes --set protocol.X as NAME's parameter") {
  // The file's `protocol` is the lease; with --protocols raft, protocol.X is raft's, for --set as
  // for --grid, and a raft parameter the lease lacks is no error.
  const std::string prefix = temp_prefix("sweep-raft-set");
  const Outcome o =
      cli({"sweep", scenario("lease-gc-pause-fence.json"), "--protocols", "raft", "--grid",
           "protocol.election_timeout_min=500ms,1s", "--set", "protocol.election_timeout_max=2s",
           "--seeds", "1..2", "--quiet", "--runs", "-o", prefix});
  INFO(o.err);
  REQUIRE(o.code == 0);
  const std::string runs = slurp(prefix + ".runs.csv");
  CHECK(runs.find("--protocol raft --set protocol.election_timeout_max=2s") != std::string::npos);
  // A lease parameter is refused for raft, naming raft's own.
  const Outcome bad = cli({"sweep", scenario("lease-gc-pause-fence.json"), "--protocols", "raft",
                           "--set", "protocol.ttl=5s", "--seeds", "1..2", "--quiet"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("/protocols/raft/ttl") != std::string::npos);
}

TEST_CASE("cli: sweep shards merged equal the unsharded sweep") {
  const std::string whole = temp_prefix("sweep-whole");
  const std::vector<std::string> base = {"sweep",       scenario("lease-gc-pause-fence.json"),
                                         "--grid",      "faults.0.duration=3s,6s",
                                         "--protocols", "lease,raft",
                                         "--seeds",     "2",
                                         "--quiet"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"-o", whole});
  REQUIRE(cli(args).code == 0);
  std::vector<std::string> merge = {"merge"};
  for (int i = 1; i <= 3; ++i) {
    const std::string part = temp_prefix("sweep-shard-" + std::to_string(i));
    args = base;
    args.insert(args.end(), {"--shard", std::to_string(i) + "/3", "-o", part});
    const Outcome o = cli(args);
    INFO(o.err);
    REQUIRE(o.code == 0);
    CHECK(o.out.find("written to " + part + ".part") != std::string::npos);
    merge.push_back(part + ".part");
  }
  const std::string merged = temp_prefix("sweep-merged");
  merge.insert(merge.end(), {"-o", merged});
  const Outcome m = cli(merge);
  INFO(m.err);
  REQUIRE(m.code == 0);
  CHECK(slurp(merged + ".csv") == slurp(whole + ".csv"));
  CHECK(slurp(merged + ".json") == slurp(whole + ".json"));
  merge.erase(merge.begin() + 2);  // drop shard 2 of 3
  const Outcome missing = cli(merge);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("missing") != std::string::npos);
}

TEST_CASE("cli: search shards merged print the search's report and save its files") {
  const std::vector<std::string> base = {
      "search", scenario("partition-minority-leader.json"), "--protocol", "bully", "--runs", "40",
      "-q"};
  const std::string whole_dir = temp_prefix("search-whole");
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--save", whole_dir});
  const Outcome whole = cli(args);
  REQUIRE(whole.code == 1);  // Bully breaks stale_write under a partition
  std::vector<std::string> merge = {"merge"};
  for (int i = 1; i <= 2; ++i) {
    const std::string part = temp_prefix("search-shard-" + std::to_string(i));
    args = base;
    args.insert(args.end(), {"--shard", std::to_string(i) + "/2", "-o", part});
    const Outcome o = cli(args);
    INFO(o.err);
    REQUIRE(o.code == 0);
    CHECK(o.out.find("shard " + std::to_string(i) + "/2: 20 of the search's 40 runs") !=
          std::string::npos);
    merge.push_back(part + ".part");
  }
  const std::string merged_dir = temp_prefix("search-merged");
  merge.insert(merge.end(), {"--save", merged_dir});
  const Outcome m = cli(merge);
  INFO(m.err);
  CHECK(m.code == whole.code);
  const auto report = [](const std::string& out) { return out.substr(0, out.find("wrote ")); };
  CHECK(report(m.out) == report(whole.out));
  const std::string name = "partition-minority-leader-bully-stale_write.json";
  CHECK(slurp(merged_dir + "/" + name) == slurp(whole_dir + "/" + name));
  // A shard's own options: a part needs -o, runs its whole share, and saves nothing itself.
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--shard", "1/2"},
        std::vector<std::string>{"--shard", "1/2", "-o", "x", "--time", "5s"},
        std::vector<std::string>{"--shard", "1/2", "-o", "x", "--save", "d"},
        std::vector<std::string>{"-o", "x"}}) {
    args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const Outcome bad = cli(args);
    INFO(bad.err);
    CHECK(bad.code == 2);
  }
  // A search's parts take --save, not a sweep's outputs.
  const Outcome sweep_options = cli({"merge", merge[1], merge[2], "-o", "x"});
  CHECK(sweep_options.code == 2);
  CHECK(sweep_options.err.find("a search's parts") != std::string::npos);
}

TEST_CASE("cli: sweep refuses bad grids, seeds, shards and metrics with exit 2") {
  const std::string file = scenario("lease-gc-pause-fence.json");
  const auto bad = GENERATE(
      as<std::vector<std::string>>{}, std::vector<std::string>{"--grid", "protocol.ttl"},
      std::vector<std::string>{"--grid", "protocol.ttl=5s..1s:1s"},
      std::vector<std::string>{"--grid", "protocol.ttl=2s,never"},
      std::vector<std::string>{"--seeds", "0"},
      std::vector<std::string>{"--shard", "4/3", "-o", "x"},
      std::vector<std::string>{"--shard", "1/3"}, std::vector<std::string>{"--protocols", "paxos"},
      std::vector<std::string>{"--metrics", "speed"}, std::vector<std::string>{"--jobs", "0"});
  std::vector<std::string> args = {"sweep", file, "--quiet"};
  args.insert(args.end(), bad.begin(), bad.end());
  if (std::find(bad.begin(), bad.end(), "--seeds") == bad.end()) {
    args.insert(args.end(), {"--seeds", "1"});
  }
  const Outcome o = cli(args);
  INFO(o.err);
  CHECK(o.code == 2);
  CHECK_FALSE(o.err.empty());
}

TEST_CASE("cli: --variant writes the path given, --all-variants adds names and lists each file") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "electsim-cli-test-variant-outputs";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = (dir / "t.jsonl").string();
  const Outcome one = cli(
      {"run", scenario("lease-gc-pause-fence.json"), "--variant", "no-fencing", "--trace", trace});
  INFO(one.err);
  REQUIRE(one.code == 0);
  CHECK(fs::exists(trace));
  CHECK_FALSE(fs::exists(dir / "t-no-fencing.jsonl"));
  CHECK(one.err.find("wrote") == std::string::npos);
  fs::remove(trace);

  const Outcome all =
      cli({"run", scenario("lease-gc-pause-fence.json"), "--all-variants", "--trace", trace});
  REQUIRE(all.code == 0);
  CHECK(fs::exists(trace));
  CHECK(fs::exists(dir / "t-no-fencing.jsonl"));
  CHECK_THAT(all.err, Catch::Contains("wrote " + trace) &&
                          Catch::Contains("wrote " + (dir / "t-no-fencing.jsonl").string()));
  fs::remove_all(dir);
}

TEST_CASE("cli: an override that cannot reach the protocol that runs is said, never ignored") {
  const std::string file = scenario("lease-gc-pause-fence.json");
  // --protocol raft --set protocol.X is raft's X: a lease parameter there is an error...
  const Outcome lease_key =
      cli({"run", file, "--protocol", "raft", "--set", "protocol.ttl=3s", "--json"});
  CHECK(lease_key.code == 2);
  CHECK_THAT(lease_key.err, Catch::Contains("at /protocols/raft/ttl"));
  // ...and a raft parameter takes effect.
  const Outcome pre_vote =
      cli({"run", file, "--protocol", "raft", "--set", "protocol.pre_vote=false", "--json"});
  CHECK(pre_vote.code != 2);
  const Outcome pre_vote_on =
      cli({"run", file, "--protocol", "raft", "--set", "protocol.pre_vote=true", "--json"});
  CHECK(pre_vote.out != pre_vote_on.out);
  // A parameter of a protocol that does not run is a warning next to the result.
  const Outcome other = cli({"run", file, "--set", "protocols.raft.pre_vote=true"});
  CHECK_THAT(other.err, Catch::Contains("warning: --set protocols.raft.pre_vote=true does not "
                                        "reach this run: it runs protocol lease"));
  // A protocol-specific grid axis swept across protocols fails before any run, naming both.
  const Outcome sweep = cli({"sweep", file, "--grid", "protocol.ttl=1s,3s", "--protocols",
                             "lease,raft", "--seeds", "1", "--quiet"});
  CHECK(sweep.code == 2);
  CHECK_THAT(sweep.err, Catch::Contains("at /protocols/raft/ttl") &&
                            Catch::Contains("grid point protocol raft"));
}

TEST_CASE("cli: election messages are counted alike live and from a trace, heartbeats apart") {
  const auto path =
      (std::filesystem::temp_directory_path() / "electsim-cli-test-ring.jsonl").string();
  const Outcome r = cli({"run", scenario("ring-all-start.json"), "--trace", path});
  REQUIRE(r.code == 0);
  // Descending ring of 8, all starting: n(n+1)/2 = 36 Election and 8 Elected.
  CHECK_THAT(r.out, Catch::Contains("44 election messages, 44.0 per election"));
  const Outcome c = cli({"check", path});
  CHECK_THAT(c.out, Catch::Contains("44 election messages, 44.0 per election"));
  std::remove(path.c_str());
}

TEST_CASE("cli: a kubernetes per_node override that breaks a cross-check exits 2 naming it") {
  const std::string path = temp_file("kubernetes-per-node.json", R"({
    "name": "k", "duration": "30s", "nodes": 3,
    "protocol": {"name": "kubernetes", "per_node": {"2": {"ttl": "8s"}}}
  })");
  const Outcome o = cli({"run", path});
  CHECK(o.code == 2);
  CHECK_THAT(o.err, Catch::Contains(path + ": at /protocol/per_node/2/renew_deadline: expected "
                                           "a duration shorter than ttl (8s), found 10s (the "
                                           "cluster-wide value)"));
  std::filesystem::remove(path);
}

TEST_CASE("cli: check without a scenario never prints PASS, and fails on harm") {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string clean = (dir / "electsim-cli-test-clean.jsonl").string();
  const std::string harmed = (dir / "electsim-cli-test-harmed.jsonl").string();
  REQUIRE(cli({"run", scenario("lease-leader-crash.json"), "--trace", clean}).code == 0);
  // Without fencing the woken holder's write lands on the new leader's data; the variant's
  // expect block bounds that, so the run itself passes.
  REQUIRE(cli({"run", scenario("lease-gc-pause-fence.json"), "--variant", "no-fencing", "--trace",
               harmed})
              .code == 0);
  const Outcome c = cli({"check", clean});
  CHECK(c.code == 0);
  CHECK_THAT(c.out, Catch::Contains("verdict: not judged, no expect block") &&
                        Catch::Contains("no harm found"));
  CHECK_THAT(c.out, !Catch::Contains("PASS"));
  const Outcome h = cli({"check", harmed});
  CHECK(h.code == 1);
  CHECK_THAT(h.out, Catch::Contains("verdict: not judged") && Catch::Contains("of split-brain") &&
                        Catch::Contains("overwrite"));
  // With the scenario its bounds judge, as the run did.
  const Outcome judged =
      cli({"check", harmed, "--scenario", scenario("lease-gc-pause-fence.json")});
  CHECK(judged.code == 0);
  CHECK_THAT(judged.out, Catch::Contains("verdict: PASS"));
  std::remove(clean.c_str());
  std::remove(harmed.c_str());
}

TEST_CASE("cli: the service outage of a store leader's crash is measured, live and from a trace") {
  const auto path =
      (std::filesystem::temp_directory_path() / "electsim-cli-test-store-crash.jsonl").string();
  // Seed 2: another node takes over (with seed 1 the old holder wins the race again, an outage
  // but no failover).
  const Outcome r =
      cli({"run", scenario("lease-leader-crash.json"), "--seed", "2", "--set", "store.members=3",
           "--set", "faults.0.target=store_leader", "--json", "--trace", path});
  REQUIRE(r.code != 2);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // No node fault, yet the service lost its leader: a coordinator failover, with its outage.
  CHECK(j["liveness"]["failovers"].empty());
  REQUIRE(!j["liveness"]["coordinator_failovers"].empty());
  CHECK(j["liveness"]["coordinator_failovers"][0]["target"].is_string());
  CHECK(j["service"]["outages"].get<int>() >= 1);
  CHECK(j["metrics"]["outage_max"].get<double>() > 1e9);
  CHECK(j["metrics"]["coordinator_failovers"].get<double>() >= 1);
  const std::string causes = j["service"]["episodes"][0]["causes_text"];
  // Member 0 is written "store", as traces write it; the others "store:K".
  CHECK_THAT(causes, Catch::Contains("crash of store"));
  // check reads the same outages back from the trace.
  const Outcome c = cli({"check", path, "--json"});
  const nlohmann::json k = nlohmann::json::parse(c.out);
  CHECK(k["service"] == j["service"]);
  CHECK(k["liveness"]["coordinator_failovers"] == j["liveness"]["coordinator_failovers"]);
  std::remove(path.c_str());
}

TEST_CASE("cli: a partition the database's leader rides out costs no write outage") {
  const Outcome r =
      cli({"run", scenario("partition-minority-leader.json"), "--protocol", "postgres", "--json"});
  REQUIRE(r.code != 2);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j["liveness"]["failovers"].size() == 1);
  CHECK(j["liveness"]["failovers"][0]["ridden_out"] == true);
  CHECK(j["liveness"]["failovers"][0]["write_outage_ns"] == 0);
  CHECK(j["service"]["outages"] == 0);
}

TEST_CASE("cli: JSON seconds are the exact decimals of the nanoseconds") {
  const Outcome r = cli({"run", scenario("lease-leader-crash.json"), "--json"});
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const nlohmann::json& li : j["leadership"]["intervals"]) {
    const std::int64_t ns = li["start_ns"];
    const std::string text = li["start_s"].dump();
    // Printed as the shortest decimal that reads back: whole nanoseconds need at most 9 places.
    const auto dot = text.find('.');
    CHECK((dot == std::string::npos || text.size() - dot - 1 <= 9));
    CHECK(std::llround(li["start_s"].get<double>() * 1e9) == ns);
  }
}

TEST_CASE("cli: a store section for a protocol that uses no store is a warning") {
  const Outcome r = cli({"run", scenario("lease-leader-crash.json"), "--protocol", "postgres",
                         "--set", "store.members=3"});
  CHECK(r.code != 2);
  CHECK_THAT(r.err, Catch::Contains("the store section (/store) does nothing for this run: "
                                    "protocol postgres elects without the store (through the "
                                    "database)"));
  const Outcome lease =
      cli({"run", scenario("lease-leader-crash.json"), "--set", "store.members=3"});
  CHECK_THAT(lease.err, !Catch::Contains("does nothing"));
}

TEST_CASE("cli: a grid over one protocol's parameter leaves the other protocols' rows unlabelled") {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string prefix = (dir / "electsim-cli-test-unreached").string();
  const std::string csv = prefix + ".csv";
  const Outcome r =
      cli({"sweep", scenario("lease-gc-pause-fence.json"), "--protocols", "redlock,lease", "--grid",
           "protocols.redlock.expiry=2s,8s", "--seeds", "1", "--quiet", "-o", prefix});
  REQUIRE(r.code != 2);
  CHECK_THAT(r.err, Catch::Contains("protocols.redlock.expiry=2s,8s does not reach protocol "
                                    "lease's runs"));
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  bool lease_row = false;
  while (std::getline(in, line)) {
    if (line.rfind("lease,", 0) != 0) continue;
    lease_row = true;
    CHECK(line.rfind("lease,-,", 0) == 0);
    CHECK_THAT(line, Catch::Contains("protocols.redlock.expiry=2s,8s"));
  }
  CHECK(lease_row);
  std::remove(csv.c_str());
  std::remove((prefix + ".json").c_str());
}

TEST_CASE("cli: --set detection sets each protocol's own timing to one value") {
  const std::string file = scenario("leader-crash.json");
  // The lease: its TTL (and etcd's ratios for the rest); the failover follows the knob.
  const Outcome lease =
      cli({"run", file, "--protocol", "lease", "--set", "detection=6s", "--json"});
  REQUIRE(lease.code != 2);
  const nlohmann::json l = nlohmann::json::parse(lease.out);
  CHECK(l["metrics"]["failover_max"].get<double>() > 3e9);
  CHECK(l["metrics"]["failover_max"].get<double>() < 7e9);
  // Consul cannot hold a silent leader for less than 2 x its 10 s minimum TTL: said, exit 2.
  const Outcome consul = cli({"run", file, "--protocol", "consul", "--set", "detection=5s"});
  CHECK(consul.code == 2);
  CHECK_THAT(consul.err,
             Catch::Contains("--set detection=5s") && Catch::Contains("at least 2 x 10s = 20s"));
  // The database flag has nothing to set.
  const Outcome flag = cli({"run", file, "--protocol", "db-flag", "--set", "detection=20s"});
  CHECK(flag.code == 2);
  CHECK_THAT(flag.err, Catch::Contains("the flag has no TTL"));
  CHECK(cli({"run", file, "--set", "detection=ten"}).code == 2);
  // The same value through different designs: ZooKeeper's session timeout is the knob too.
  const Outcome zk =
      cli({"run", file, "--protocol", "zookeeper", "--set", "detection=6s", "--json"});
  const nlohmann::json z = nlohmann::json::parse(zk.out);
  CHECK(z["metrics"]["failover_max"].get<double>() < 7e9);
}

TEST_CASE("cli: compare judges another protocol only by its own bounds") {
  // lease-gc-pause-fence's expect block is the lease's; Raft has no bounds of its own there.
  const Outcome c =
      cli({"compare", scenario("lease-gc-pause-fence.json"), "--protocols", "lease,raft", "--csv"});
  REQUIRE(c.code != 2);
  CHECK_THAT(c.out, Catch::Contains("\nlease,1,pass") && Catch::Contains("\nraft,1,unjudged"));
}

TEST_CASE("cli: a trace carries whether tokens are ordered, so check judges staleness alike") {
  const auto path =
      (std::filesystem::temp_directory_path() / "electsim-cli-test-flag.jsonl").string();
  const Outcome r = cli({"run", scenario("db-flag-stuck-forever.json"), "--variant",
                         "paused-holder-cleared", "--json", "--trace", path});
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // Every write carries token 0: only the order of grants shows the woken holder overwriting.
  CHECK(j["safety"]["stale_writes_overwriting"].get<int>() >= 1);
  const Outcome c = cli({"check", path, "--json"});
  const nlohmann::json k = nlohmann::json::parse(c.out);
  CHECK(k["safety"] == j["safety"]);
  std::remove(path.c_str());
}
