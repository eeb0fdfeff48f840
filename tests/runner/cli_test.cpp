// The command line as users run it: exit codes, messages for bad input, list, validate, --set,
// --json, --trace and check, and determinism of whole outputs.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"

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
  for (const char* command : {"run", "validate", "list", "check"}) {
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
