// Whole runs through the runner: determinism of traces (same seed, byte-identical; another seed,
// different), traces that are the same whether written or not, and the flagship's lesson.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "drawing/outputs.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "tests/temp_files.hpp"

using namespace electsim;

namespace {

runner::Scenario load(std::vector<runner::Override> overrides = {},
                      std::optional<std::uint64_t> seed = std::nullopt,
                      std::optional<std::string> variant = std::nullopt) {
  runner::LoadOptions o;
  o.overrides = std::move(overrides);
  o.seed = seed;
  o.variant = std::move(variant);
  runner::LoadResult r =
      runner::load_scenario_text(runner::flagship_scenario_text(), "<flagship>", o);
  for (const auto& m : r.messages()) UNSCOPED_INFO(m);
  REQUIRE(r.scenario);
  return *r.scenario;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("electsim-run-test-" + name)).string();
}

}  // namespace

TEST_CASE("run: the same scenario and seed give byte-identical traces, another seed differs") {
  const std::string a = temp_path("a.jsonl");
  const std::string b = temp_path("b.jsonl");
  const std::string c = temp_path("c.jsonl");
  const auto ra = runner::run_scenario(load({}, 5), runner::RunOptions{}.output("trace", a));
  const auto rb = runner::run_scenario(load({}, 5), runner::RunOptions{}.output("trace", b));
  const auto rc = runner::run_scenario(load({}, 6), runner::RunOptions{}.output("trace", c));
  REQUIRE(ra.errors.empty());
  const std::string ta = slurp(a);
  CHECK(ta.size() > 1000);
  CHECK(ta == slurp(b));
  CHECK(ta != slurp(c));
  CHECK(ra.trace_hash == rb.trace_hash);
  CHECK(ra.trace_hash != rc.trace_hash);
  for (const auto& p : {a, b, c}) std::remove(p.c_str());
}

TEST_CASE("run: writing a trace does not change the run or its hash") {
  const std::string a = temp_path("d.jsonl");
  const auto traced = runner::run_scenario(load(), runner::RunOptions{}.output("trace", a));
  const auto bare = runner::run_scenario(load(), runner::RunOptions{});
  CHECK(traced.trace_hash == bare.trace_hash);
  CHECK(traced.stats.events == bare.stats.events);
  // Reading the trace back gives the report the live run gave.
  const analysis::TraceReadResult read = analysis::read_trace_file(a);
  REQUIRE(read.ok());
  CHECK(read.info.trace_hash == traced.trace_hash);
  CHECK(read.report.split_brain_time == traced.report.split_brain_time);
  CHECK(read.report.stale_writes_rejected == traced.report.stale_writes_rejected);
  CHECK(read.report.intervals.size() == traced.report.intervals.size());
  std::remove(a.c_str());
}

TEST_CASE("run: in the flagship, fencing rejects the frozen holder's stale write") {
  const auto r = runner::run_scenario(load(), runner::RunOptions{});
  CHECK(r.report.stale_writes_rejected >= 1);
  CHECK(r.report.stale_writes_accepted == 0);
  CHECK(r.report.split_brain_time > sim::Duration(0));  // the frozen node still believed
  CHECK(r.verdict.ok());
}

TEST_CASE("run: without fencing the same stale write is accepted and breaks the expectation") {
  const auto r = runner::run_scenario(load({{"protocol.fencing", "false"}}), runner::RunOptions{});
  CHECK(r.report.stale_writes_accepted >= 1);
  CHECK(r.report.stale_writes_rejected == 0);
  REQUIRE_FALSE(r.verdict.ok());
  bool named = false;
  for (const auto& b : r.verdict.breaches) named |= b.expectation.metric == "stale_writes_accepted";
  CHECK(named);
}

TEST_CASE("run: the flagship's no-fencing variant expects the corruption and meets it") {
  const auto r = runner::run_scenario(load({}, std::nullopt, "no-fencing"), runner::RunOptions{});
  CHECK(r.report.stale_writes_accepted >= 1);
  CHECK(r.verdict.ok());
}

TEST_CASE("run: a trace over its byte limit is not written and the run says so") {
  runner::Scenario s = load();
  s.limits.max_trace_bytes = 2000;
  const std::string a = temp_path("e.jsonl");
  const auto r = runner::run_scenario(s, runner::RunOptions{}.output("trace", a));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("limit") != std::string::npos);
  CHECK_FALSE(std::ifstream(a).good());
  CHECK_FALSE(electsim::testing::has_temporary(a));
}

TEST_CASE("run: a replay page or picture over its limit is refused, not kept growing") {
  const runner::Scenario s = load();
  const std::string hash = runner::run_scenario(s, runner::RunOptions{}).trace_hash;
  auto refused = [&](runner::RunOptions options, const std::string& message) {
    const auto r = runner::run_scenario(s, options);
    REQUIRE(r.errors.size() == 1);
    CHECK_THAT(r.errors[0], Catch::Contains(message));
    CHECK(r.pictures.empty());
    CHECK_FALSE(r.timeline);
    CHECK(r.trace_hash == hash);  // the run itself is whole either way
  };
  runner::RunOptions page;
  page.output("html", "page.html").replay_events_max = 500;
  refused(page, "more than 500 events (the limit on a replay page)");
  runner::RunOptions drawn;
  drawn.output("svg", "picture.svg").timeline_items_max = 20;
  refused(drawn, "more than 20 spans and marks");
  runner::RunOptions kept;
  kept.timeline = true;
  kept.timeline_items_max = 20;
  refused(kept, "more than 20 spans and marks");
}

TEST_CASE("run: the event limit stops a run and is reported") {
  runner::Scenario s = load();
  s.world.limits.max_events = 1000;
  const auto r = runner::run_scenario(s, runner::RunOptions{});
  CHECK(r.stats.hit_event_limit);
  CHECK(r.stats.events == 1000);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].find("limit on events") != std::string::npos);
}

TEST_CASE("run: every output format of the registry writes its file without changing the run") {
  // A replicated store, so that every format (a history of operations too) has something to say.
  const runner::Scenario s = load({{"store.members", "3"}});
  const auto bare = runner::run_scenario(s, runner::RunOptions{});
  for (const drawing::OutputFormat& format : drawing::output_formats()) {
    INFO("output " << format.flag);
    const std::string path = temp_path(std::string("every-output.") + format.flag);
    const auto r = runner::run_scenario(s, runner::RunOptions{}.output(format.flag, path));
    REQUIRE(r.errors.empty());
    CHECK(r.trace_hash == bare.trace_hash);
    // A picture comes back to be written with the others; a streamed file is on disk already.
    CHECK(r.pictures.size() + r.streamed.size() == 1);
    if (!r.pictures.empty()) {
      CHECK(r.pictures[0].path == path);
      CHECK(r.pictures[0].content.size() > 1000);
    } else {
      CHECK(r.streamed[0] == path);
      CHECK(slurp(path).size() > 1000);
      std::remove(path.c_str());
    }
  }
}

TEST_CASE(
    "run: a replicated store's history lists every client operation with its call and "
    "return, and a single store has none to give") {
  const runner::RunResult r = runner::run_scenario(
      load({{"store.members", "3"}}), runner::RunOptions{}.output("history", "history.jsonl"));
  REQUIRE(r.errors.empty());
  REQUIRE(r.pictures.size() == 1);
  std::istringstream lines(r.pictures[0].content);
  std::size_t ops = 0;
  std::size_t txns_on_key = 0;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json op = nlohmann::json::parse(line);
    ++ops;
    CHECK(op["client"].get<int>() >= 0);
    if (op["outcome"] == "unknown") {
      CHECK(op["return_ns"].is_null());
      continue;
    }
    CHECK(op["return_ns"].get<std::int64_t>() >= op["call_ns"].get<std::int64_t>());
    if (op["op"] == "txn" && !op["key"].get<std::string>().empty()) ++txns_on_key;
  }
  // One line per request the clients sent, as the summary counts them.
  CHECK(ops == r.report.store_requests_total);
  CHECK(txns_on_key > 0);
  const runner::RunResult single =
      runner::run_scenario(load(), runner::RunOptions{}.output("history", "history.jsonl"));
  CHECK(single.pictures.empty());
  REQUIRE(single.errors.size() == 1);
  CHECK(single.errors[0].find("replicated store") != std::string::npos);
}

TEST_CASE("run: operator_clear on the store deletes the lease's key and another node takes it") {
  // The flagship's lease holder is node 4 from the start; a person deletes the key at 3s.
  const auto r = runner::run_scenario(
      load({{"faults", R"([{"at": "3s", "kind": "operator_clear", "target": "store"}])"}}),
      runner::RunOptions{});
  REQUIRE(r.report.intervals.size() >= 2);
  const analysis::LeaderInterval& first = r.report.intervals[0];
  const analysis::LeaderInterval& second = r.report.intervals[1];
  // The holder's watch sees the deletion and it steps down; a follower acquires with a higher
  // revision as its token. Neither overlaps the other.
  CHECK_FALSE(first.open_at_end);
  CHECK(first.end < sim::Time(sim::Duration(std::chrono::milliseconds(3100)).count()));
  CHECK(second.node != first.node);
  CHECK(second.epoch > first.epoch);
  CHECK(r.report.split_brain_time == sim::Duration(0));
}

TEST_CASE("run: operator_clear on the database frees db-flag's row for the next UPDATE") {
  runner::LoadOptions o;
  o.overrides = {{"faults.1", R"({"at": "30s", "kind": "operator_clear", "target": "postgres"})"}};
  const std::filesystem::path file =
      std::filesystem::path(std::getenv("ELECTSIM_SOURCE_DIR") ? std::getenv("ELECTSIM_SOURCE_DIR")
                                                               : ".") /
      "scenarios" / "db-flag-stuck-forever.json";
  runner::LoadResult loaded = runner::load_scenario_file(file.string(), o);
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  const auto r = runner::run_scenario(*loaded.scenario, runner::RunOptions{});
  REQUIRE(r.report.intervals.size() == 2);
  // Cleared at 30s; the followers poll every second, so one leads within a second and a round
  // trip, and with db-flag's only epoch, 0.
  CHECK(r.report.intervals[1].start >= sim::Time(sim::Duration(std::chrono::seconds(30)).count()));
  CHECK(r.report.intervals[1].start <
        sim::Time(sim::Duration(std::chrono::milliseconds(31100)).count()));
  CHECK(r.report.intervals[1].epoch == 0);
  CHECK(r.report.same_epoch_leaders_total == 1);
}

TEST_CASE("run: a database outage costs the postgres protocol stall, never split-brain") {
  runner::LoadOptions o;
  o.variant = "tuned-keepalives";
  o.overrides = {{"faults", R"([{"at": "10s", "kind": "crash", "target": "postgres",
                                 "duration": "5s"}])"}};
  const std::filesystem::path file =
      std::filesystem::path(std::getenv("ELECTSIM_SOURCE_DIR") ? std::getenv("ELECTSIM_SOURCE_DIR")
                                                               : ".") /
      "scenarios" / "postgres-dead-client-keepalive.json";
  runner::LoadResult loaded = runner::load_scenario_file(file.string(), o);
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  const auto r = runner::run_scenario(*loaded.scenario, runner::RunOptions{});
  // The holder's check goes unanswered and it steps down; nobody can take a lock until the
  // server is back at 15s, with no session and no lock from before its crash.
  CHECK(r.report.store.database);
  CHECK(r.report.store.unavailable_time == sim::Duration(std::chrono::seconds(5)));
  CHECK(r.report.stall_time > sim::Duration(std::chrono::seconds(3)));
  CHECK(r.report.split_brain_time == sim::Duration(0));
  REQUIRE(r.report.intervals.size() == 2);
  CHECK(r.report.intervals[1].start >= sim::Time(sim::Duration(std::chrono::seconds(15)).count()));
}

TEST_CASE("run: a connection given up is counted and named in the summary") {
  // The leader is cut off from everything for 5s; with retransmissions of 100ms doubling to at
  // most 400ms, three of them, its TCP gives its connections up 1.1s after a segment first left.
  const std::vector<runner::Override> isolate = {
      {"faults", R"([{"at": "5s", "kind": "isolate", "target": "leader", "duration": "5s"}])"}};
  std::vector<runner::Override> short_tcp = isolate;
  short_tcp.push_back(
      {"network.tcp", R"({"rto_min": "100ms", "rto_max": "400ms", "retries2": 3})"});
  const runner::RunResult broken = runner::run_scenario(load(short_tcp), {});
  CHECK(broken.report.connections_broken > 0);
  CHECK(broken.stats.connections_broken == broken.report.connections_broken);
  CHECK_THAT(analysis::format_summary(broken.info, broken.report, broken.verdict),
             Catch::Contains("connections given up: "));
  // With Linux's timers (924.6s) five seconds break nothing: the traffic only waits.
  const runner::RunResult waited = runner::run_scenario(load(isolate), {});
  CHECK(waited.report.connections_broken == 0);
  CHECK(waited.stats.retransmissions > 0);
  CHECK_THAT(analysis::format_summary(waited.info, waited.report, waited.verdict),
             !Catch::Contains("connections given up"));
}

TEST_CASE("run: a store of finite capacity counts the writes it refused, as its trace shows them") {
  // Requests take 150 ms each, one at a time, and nothing may wait behind one: every write that
  // arrives while the store is busy is refused with too_many_requests.
  const std::string text = R"({"name": "overload", "duration": "20s", "nodes": 5,
    "protocol": {"name": "lease"},
    "store": {"capacity": {"service_time": "150ms", "queue_limit": 0}},
    "workload": {"interval": "100ms"}})";
  runner::LoadResult loaded = runner::load_scenario_text(text, "<overload>", {});
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  const std::string path = temp_path("overload.jsonl");
  const auto r = runner::run_scenario(*loaded.scenario, runner::RunOptions{}.output("trace", path));
  REQUIRE(r.errors.empty());
  std::uint64_t refused_in_trace = 0;
  std::istringstream lines(slurp(path));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"ev\":\"store_reply\"") != std::string::npos &&
        line.find("\"error\":6") != std::string::npos) {
      ++refused_in_trace;
    }
  }
  std::remove(path.c_str());
  CHECK(r.report.store.requests_refused > 0);
  CHECK(r.report.store.requests_refused == refused_in_trace);
  CHECK_THAT(analysis::format_summary(r.info, r.report, r.verdict),
             Catch::Contains(fmt::format("refused for overload (too many requests, "
                                         "store.capacity): {}\n",
                                         r.report.store.requests_refused)));
  // Without a capacity nothing is refused, and the summary says nothing of it.
  const auto unlimited = runner::run_scenario(load(), runner::RunOptions{});
  CHECK(unlimited.report.store.requests_refused == 0);
  CHECK_THAT(analysis::format_summary(unlimited.info, unlimited.report, unlimited.verdict),
             !Catch::Contains("refused for overload"));
}

TEST_CASE("run: a session run in slices gives the whole run's report, summary and hash") {
  // Slices of one step, of a few steps, and of simulated time: the playground's per-frame
  // budgets, which must change nothing.
  const runner::Scenario scenario = load();
  const runner::RunResult whole = runner::run_scenario(scenario, runner::RunOptions{});
  REQUIRE(whole.errors.empty());
  const std::string summary = analysis::format_summary(whole.info, whole.report, whole.verdict);
  for (const std::uint64_t steps : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}}) {
    INFO("slices of " << steps << " steps");
    runner::Session session(scenario, runner::RunOptions{});
    std::uint64_t slices = 0;
    sim::Time until(sim::Duration(0));
    while (!session.advance(until, steps)) {
      ++slices;
      if (slices % 3 == 0) until += std::chrono::milliseconds(250);  // time moves on too
      REQUIRE(session.now() <= session.end());
    }
    CHECK(session.done());
    CHECK(session.now() == session.end());
    CHECK(slices > 2);
    const runner::RunResult sliced = session.finish();
    CHECK(sliced.trace_hash == whole.trace_hash);
    CHECK(sliced.stats.events == whole.stats.events);
    CHECK(analysis::format_summary(sliced.info, sliced.report, sliced.verdict) == summary);
  }
}

TEST_CASE("run: a session finished early runs the rest first") {
  const runner::Scenario scenario = load();
  const runner::RunResult whole = runner::run_scenario(scenario, runner::RunOptions{});
  runner::Session session(scenario, runner::RunOptions{});
  CHECK_FALSE(session.advance(sim::Time(sim::Duration(std::chrono::seconds(3))), 100000));
  CHECK(session.now() == sim::Time(sim::Duration(std::chrono::seconds(3))));
  CHECK_FALSE(session.done());
  CHECK(session.finish().trace_hash == whole.trace_hash);
}
