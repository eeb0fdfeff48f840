// The guided experiments: each one's world, with what its text asks the student to do, shows
// what its answer says. The faults are the ones the page records for those clicks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "playground/experiments.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "tests/files.hpp"

using namespace electsim;
using nlohmann::json;

namespace {

const playground::Experiment& experiment(const std::string& id) {
  for (const playground::Experiment& x : playground::experiments()) {
    if (x.id == id) return x;
  }
  FAIL("no experiment " << id);
  throw 0;
}

// The experiment's run with `faults` (as the page writes them) and `sets` applied.
runner::RunResult play(const std::string& id, const json& faults,
                       std::vector<runner::Override> sets = {}) {
  json doc = json::parse(experiment(id).scenario);
  if (!faults.empty()) doc["faults"] = faults;
  runner::LoadOptions options;
  options.overrides = std::move(sets);
  runner::LoadResult loaded = runner::load_scenario_text(doc.dump(), id, options);
  for (const std::string& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  return runner::run_scenario(*loaded.scenario, runner::RunOptions{});
}

// The node that leads first (the holder a student clicks on).
sim::NodeId first_leader(const runner::RunResult& r) {
  REQUIRE_FALSE(r.report.intervals.empty());
  return r.report.intervals.front().node;
}

}  // namespace

TEST_CASE("experiments: every one has its texts and a world that loads") {
  REQUIRE(playground::experiments().size() >= 8);
  for (const playground::Experiment& x : playground::experiments()) {
    INFO(x.id);
    CHECK_FALSE(x.title.empty());
    CHECK_FALSE(x.text.empty());
    CHECK_FALSE(x.question.empty());
    CHECK(x.answer.size() > x.question.size());
    const runner::RunResult r = play(x.id, json::array());
    CHECK(r.errors.empty());
    CHECK(r.report.elections >= 1);
  }
}

TEST_CASE("experiments: acquire and renew, one election that a follower's crash leaves alone") {
  const runner::RunResult quiet = play("acquire-and-renew", json::array());
  CHECK(quiet.report.elections == 1);
  const sim::NodeId holder = first_leader(quiet);
  const sim::NodeId follower = holder == 0 ? 1 : 0;
  const runner::RunResult r =
      play("acquire-and-renew",
           json::array({{{"at", "10.000s"}, {"kind", "crash"}, {"target", follower}}}));
  CHECK(r.report.elections == 1);
  CHECK(r.report.failovers.empty());
  CHECK(r.report.split_brain_time.count() == 0);
}

TEST_CASE("experiments: a leader crash fails over in about the TTL, never much more") {
  const sim::NodeId holder = first_leader(play("leader-crash", json::array()));
  for (const char* at : {"5.000s", "7.300s", "10.600s", "12.950s"}) {
    INFO("crash at " << at);
    const runner::RunResult r =
        play("leader-crash", json::array({{{"at", at}, {"kind", "crash"}, {"target", holder}}}));
    REQUIRE(r.report.failovers.size() == 1);
    const sim::Duration took = r.report.failovers.front().failover.value();
    CHECK(took >= std::chrono::milliseconds(1900));  // a renew interval less than the TTL
    CHECK(took <= std::chrono::milliseconds(3300));  // the TTL and a request or two
  }
}

TEST_CASE("experiments: GC pause and fence, the woken holder's write rejected, or an overwrite") {
  const sim::NodeId holder = first_leader(play("gc-pause-and-fence", json::array()));
  for (const char* at : {"3.100s", "5.237s", "8.500s"}) {
    INFO("pause at " << at);
    const json pause =
        json::array({{{"at", at}, {"kind", "pause"}, {"target", holder}, {"duration", "6s"}}});
    const runner::RunResult fenced = play("gc-pause-and-fence", pause);
    CHECK(fenced.report.stale_writes_rejected == 1);
    CHECK(fenced.report.stale_writes_accepted == 0);
    CHECK(fenced.report.split_brain_time > std::chrono::seconds(3));
    const runner::RunResult unfenced =
        play("gc-pause-and-fence", pause, {{"protocol.fencing", "false"}});
    CHECK(unfenced.report.stale_writes_overwriting >= 1);
  }
}

TEST_CASE("experiments: free play, a 1 s pause costs the lease at any moment with a 1.2 s TTL") {
  int lost_at_3s = 0;
  for (const char* at : {"10.000s", "10.300s", "10.700s"}) {
    INFO("pause at " << at);
    const json pause =
        json::array({{{"at", at}, {"kind", "pause"}, {"target", "leader"}, {"duration", "1s"}}});
    CHECK(play("free-play", pause, {{"protocol.ttl", "1.2s"}}).report.elections >= 2);
    lost_at_3s += play("free-play", pause).report.elections >= 2 ? 1 : 0;
  }
  // With 3 s, only at the worst moments: not at all three.
  CHECK(lost_at_3s < 3);
}

TEST_CASE("experiments: a partitioned Raft leader is replaced, and steps down when fenced") {
  const runner::RunResult before = play("raft-partition", json::array());
  const sim::NodeId leader = first_leader(before);
  json minority = json::array({leader, leader == 0 ? 1 : 0});
  json majority = json::array();
  for (int n = 0; n < 5; ++n) {
    if (n != leader && n != minority[1]) majority.push_back(n);
  }
  const runner::RunResult r = play(
      "raft-partition",
      json::array({{{"at", "10.000s"}, {"kind", "partition"}, {"groups", {minority, majority}}}}));
  const auto& leaders = r.report.intervals;
  const auto replaced = std::find_if(leaders.begin(), leaders.end(), [&](const auto& l) {
    return l.node != leader && l.start > sim::Time(std::chrono::seconds(10));
  });
  REQUIRE(replaced != leaders.end());
  CHECK(replaced->start < sim::Time(std::chrono::milliseconds(10400)));
  CHECK(replaced->epoch > leaders.front().epoch);
  CHECK(r.report.split_brain_time > sim::Duration(0));  // the old leader believed on
  CHECK(r.report.stale_writes_rejected >= 1);           // until fencing turned it away
  CHECK_FALSE(leaders.front().open_at_end);
}

TEST_CASE("experiments: a paused Bully coordinator is replaced, then bullies its way back") {
  const runner::RunResult r = play(
      "bully-pause",
      json::array({{{"at", "10.000s"}, {"kind", "pause"}, {"target", 4}, {"duration", "2s"}}}));
  const auto& leaders = r.report.intervals;
  const bool node3_led = std::any_of(leaders.begin(), leaders.end(), [](const auto& l) {
    return l.node == 3 && l.start > sim::Time(std::chrono::seconds(10)) &&
           l.start < sim::Time(std::chrono::seconds(12));
  });
  CHECK(node3_led);
  CHECK(r.report.split_brain_time > sim::Duration(0));
  CHECK(leaders.back().node == 4);
}

TEST_CASE("experiments: ZooKeeper wakes only the successor when its leader dies") {
  const sim::NodeId leader = first_leader(play("zookeeper-no-herd", json::array()));
  json doc = json::parse(experiment("zookeeper-no-herd").scenario);
  doc["faults"] = json::array({{{"at", "10.000s"}, {"kind", "crash"}, {"target", leader}}});
  runner::LoadResult loaded = runner::load_scenario_text(doc.dump(), "zookeeper");
  REQUIRE(loaded.scenario);
  const std::string trace =
      (std::filesystem::temp_directory_path() / "electsim-experiments-zookeeper.jsonl").string();
  const runner::RunResult r =
      runner::run_scenario(*loaded.scenario, runner::RunOptions{}.output("trace", trace));
  REQUIRE(r.errors.empty());
  REQUIRE(r.report.failovers.size() == 1);
  const sim::Duration took = r.report.failovers.front().failover.value();
  CHECK(took >= std::chrono::seconds(4));
  CHECK(took <= std::chrono::milliseconds(6500));
  // One watch notification in the whole run, to the node that leads next.
  const std::string text = testing::slurp(trace);
  std::size_t notified = 0;
  for (std::size_t at = text.find("\"ev\":\"watch_notify\""); at != std::string::npos;
       at = text.find("\"ev\":\"watch_notify\"", at + 1)) {
    ++notified;
  }
  CHECK(notified == 1);
  const std::string expected =
      "\"ev\":\"watch_notify\",\"node\":" + std::to_string(r.report.failovers.front().new_leader);
  CHECK(text.find(expected) != std::string::npos);
  std::remove(trace.c_str());
}

TEST_CASE("experiments: Redlock under a clock jump on a majority has two holders") {
  json steps = json::array();
  for (const char* master : {"redis:0", "redis:1", "redis:2"}) {
    steps.push_back({{"at", "3.000s"}, {"kind", "clock_step"}, {"target", master}, {"by", "10s"}});
  }
  const runner::RunResult r = play("redlock-clock-jump", steps);
  CHECK(r.report.split_brain_time > std::chrono::seconds(2));
  CHECK(r.report.stale_writes_overwriting >= 1);
}

TEST_CASE(
    "experiments: every playground link of the labs opens an experiment or a moment of a run") {
  // Links look like ../playground.html#scenario=NAME[/VARIANT][&t=SECONDS] or #experiment=ID.
  const char* dir = std::getenv("ELECTSIM_SOURCE_DIR");
  REQUIRE(dir != nullptr);
  const std::string marker = "playground.html#";
  std::size_t links = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(dir) / "docs" / "labs")) {
    const std::string text = testing::slurp(entry.path());
    for (std::size_t at = text.find(marker); at != std::string::npos;
         at = text.find(marker, at + 1)) {
      const std::size_t start = at + marker.size();
      const std::string link = text.substr(start, text.find(')', start) - start);
      INFO(entry.path().filename().string() << ": " << link);
      ++links;
      if (link.rfind("experiment=", 0) == 0) {
        const std::string id = link.substr(std::string("experiment=").size());
        const auto xs = playground::experiments();
        CHECK(std::any_of(xs.begin(), xs.end(), [&](const auto& x) { return x.id == id; }));
        continue;
      }
      REQUIRE(link.rfind("scenario=", 0) == 0);
      const std::size_t amp = link.find("&t=");
      REQUIRE(amp != std::string::npos);
      std::string name =
          link.substr(std::string("scenario=").size(), amp - std::string("scenario=").size());
      std::string variant;
      if (const std::size_t slash = name.find('/'); slash != std::string::npos) {
        variant = name.substr(slash + 1);
        name = name.substr(0, slash);
      }
      runner::LoadOptions options;
      if (!variant.empty()) options.variant = variant;
      runner::LoadResult loaded = runner::load_scenario_file(
          (std::filesystem::path(dir) / "scenarios" / (name + ".json")).string(), options);
      REQUIRE(loaded.scenario);
      const double seconds = std::stod(link.substr(amp + 3));
      CHECK(seconds >= 0);
      CHECK(seconds * 1e9 <= static_cast<double>(loaded.scenario->world.duration.count()));
    }
  }
  CHECK(links >= 10);  // every lab links at least one moment
}
