// Tests of the run summaries: the text opens with the seed and closes with the trace hash, shows
// who led when (capped), the safety findings, each failover and the verdict; the JSON carries
// stable keys with durations in nanoseconds and seconds.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/summary.hpp"
#include "sim/fault.hpp"
#include "sim/protocol.hpp"

namespace {

using namespace electsim;
using analysis::Report;
using analysis::RunInfo;
using analysis::Verdict;
using sim::Duration;
using sim::Time;

Time ms(std::int64_t n) {
  return Time(n * 1'000'000);
}
Duration dms(std::int64_t n) {
  return Duration(n * 1'000'000);
}

RunInfo info() {
  RunInfo i;
  i.scenario = "leader-crash";
  i.variant = "unfenced";
  i.protocol = "lease";
  i.seed = 1234;
  i.trace_hash = "00112233aabbccdd";
  i.events_processed = 999;
  i.duration = std::chrono::seconds(60);
  return i;
}

// A run with a split brain, a stale write accepted and one failover, built through the analyzer.
Report eventful_report() {
  analysis::AnalysisConfig config;
  config.node_count = 3;
  config.duration = std::chrono::seconds(60);
  config.message_types = {"heartbeat"};
  analysis::Analyzer a(config);
  auto ev = [&](sim::EventKind kind, std::int64_t at_ms, sim::NodeId node, std::int64_t x = 0,
                std::uint16_t code = 0, std::int64_t c = 0) {
    sim::Event e;
    e.time = ms(at_ms);
    e.kind = kind;
    e.node = node;
    e.a = x;
    e.code = code;
    e.c = c;
    a.on_event(e);
  };
  const auto leader = static_cast<std::uint16_t>(sim::Role::leader);
  const auto follower = static_cast<std::uint16_t>(sim::Role::follower);
  ev(sim::EventKind::run_start, 0, sim::kNoNode, 3);
  ev(sim::EventKind::belief, 100, 0, 1, leader);
  ev(sim::EventKind::sink_write, 200, 0, 1, 0, 1);
  ev(sim::EventKind::fault, 10'000, 0, 0, static_cast<std::uint16_t>(sim::FaultKind::pause));
  ev(sim::EventKind::belief, 12'000, 1, 2, leader);
  ev(sim::EventKind::sink_write, 12'100, 1, 2, 0, 1);
  ev(sim::EventKind::sink_write, 12'500, 0, 1, 0, 1);
  ev(sim::EventKind::belief, 13'000, 0, 2, follower);
  ev(sim::EventKind::msg_send, 14'000, 1, 0, 0);
  ev(sim::EventKind::store_request, 14'000, 1, 0, static_cast<std::uint16_t>(sim::StoreOp::txn));
  ev(sim::EventKind::run_end, 60'000, sim::kNoNode);
  return a.finish();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_line_containing(const std::vector<std::string>& ls, const std::string& needle) {
  for (const std::string& l : ls) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("summary: the text opens with the seed and closes with the trace hash") {
  const std::string text = analysis::format_summary(info(), eventful_report(), Verdict{});
  const std::vector<std::string> ls = lines(text);
  REQUIRE(ls.size() > 3);
  CHECK(ls.front() == "seed 1234");
  CHECK(ls.back() == "trace hash 00112233aabbccdd");
  CHECK(has_line_containing(ls, "leader-crash (variant unfenced), protocol lease, 3 nodes"));
  CHECK(has_line_containing(ls, "verdict: PASS"));
  CHECK(text == analysis::format_summary(info(), eventful_report(), Verdict{}));
}

TEST_CASE("summary: the text shows leaders, safety findings, failovers and cost") {
  const std::vector<std::string> ls =
      lines(analysis::format_summary(info(), eventful_report(), Verdict{}));
  INFO(analysis::format_summary(info(), eventful_report(), Verdict{}));
  CHECK(has_line_containing(ls, "0.100s - 13.000s"));
  CHECK(has_line_containing(ls, "still leader"));
  CHECK(has_line_containing(ls,
                            "split brain: 1.000s in 1 episode; first at 12.000s: node 0 "
                            "(epoch 1), node 1 (epoch 2)"));
  CHECK(has_line_containing(ls, "stale writes: 1 accepted, 0 rejected"));
  CHECK(has_line_containing(ls, "overwrites: none"));
  CHECK(has_line_containing(ls, "first accepted at 12.500s: node 0 wrote token 1 after epoch 2"));
  CHECK(has_line_containing(ls,
                            "pause of node 0 (epoch 1) at 10.000s: node 1 leads at 12.000s, "
                            "failover 2.000s; write outage 11.900s"));
  CHECK(has_line_containing(ls, "heartbeat"));
  CHECK(has_line_containing(ls, "store requests: 1"));
  CHECK(has_line_containing(ls, "txn 1"));
}

TEST_CASE("summary: an overwrite is named corruption, with when and over which token") {
  Report r = eventful_report();
  r.stale_writes_overwriting = 2;
  r.first_overwrite = Report::Overwrite{ms(12'500), 0, 1, 2};
  const std::string text = analysis::format_summary(info(), r, Verdict{});
  INFO(text);
  CHECK(has_line_containing(lines(text),
                            "overwrites: 2 (corruption: an old token's write accepted over newer "
                            "data); first at 12.500s: node 0 wrote token 1 after the sink had "
                            "accepted 2"));
  const nlohmann::json j = analysis::summary_json(info(), r, Verdict{});
  CHECK(j["safety"]["first_overwrite"]["token"] == 1);
  CHECK(j["safety"]["first_overwrite"]["over"] == 2);
  CHECK(j["safety"]["first_overwrite"]["at_ns"] == 12'500'000'000);
}

TEST_CASE("summary: the leader timeline shows the first 50 intervals and counts the rest") {
  Report r;
  for (int i = 0; i < 73; ++i) {
    r.intervals.push_back({i % 3, i, ms(i * 10), ms(i * 10 + 5), false});
  }
  const std::vector<std::string> ls = lines(analysis::format_summary(info(), r, Verdict{}));
  std::size_t interval_lines = 0;
  for (const std::string& l : ls) interval_lines += l.find(" epoch ") != std::string::npos ? 1 : 0;
  CHECK(interval_lines == 50);
  CHECK(has_line_containing(ls, "... and 23 more intervals"));
}

TEST_CASE("summary: a failed verdict lists each breach with where it was stated") {
  Verdict v;
  analysis::Breach b;
  b.expectation.metric = "split_brain_time";
  b.expectation.pointer = "/expect/split_brain_time";
  b.message = "split_brain_time = 1s, above max 0s by 1s";
  v.breaches = {b, b};
  const std::vector<std::string> ls = lines(analysis::format_summary(info(), Report{}, v));
  CHECK(has_line_containing(ls, "verdict: FAIL, 2 expectations broke"));
  CHECK(has_line_containing(
      ls, "  split_brain_time = 1s, above max 0s by 1s [/expect/split_brain_time]"));
  CHECK_FALSE(has_line_containing(ls, "PASS"));
}

TEST_CASE("summary: JSON keeps durations in nanoseconds and seconds, and null when unobserved") {
  const nlohmann::json j = analysis::summary_json(info(), eventful_report(), Verdict{});
  CHECK(j["seed"] == 1234);
  CHECK(j["trace_hash"] == "00112233aabbccdd");
  CHECK(j["duration_ns"] == 60'000'000'000);
  CHECK(j["duration_s"] == Approx(60.0));
  CHECK(j["safety"]["split_brain_time_ns"] == dms(1000).count());
  CHECK(j["safety"]["split_brain_time_s"] == Approx(1.0));
  CHECK(j["safety"]["stale_writes_accepted"] == 1);
  CHECK(j["liveness"]["failovers"].size() == 1);
  CHECK(j["liveness"]["failovers"][0]["failover_ns"] == dms(2000).count());
  CHECK(j["liveness"]["failovers"][0]["fault"] == "pause");
  CHECK(j["liveness"]["failover_max_s"] == Approx(2.0));
  CHECK(j["metrics"]["failover_max"] == Approx(2e9));
  CHECK(j["cost"]["store_requests"]["txn"] == 1);
  CHECK(j["verdict"]["ok"] == true);

  const nlohmann::json empty = analysis::summary_json(info(), Report{}, Verdict{});
  CHECK(empty["metrics"]["failover_max"].is_null());
  CHECK(empty["liveness"]["failover_max_ns"].is_null());
  CHECK(empty["leadership"]["first_leader_at_s"].is_null());
  CHECK(empty["safety"]["first_split_brain"].is_null());
}

TEST_CASE("summary: a PASS with harm the expect block does not bound names that harm") {
  Report clean;
  const std::string fine = analysis::format_summary(info(), clean, Verdict{});
  CHECK(has_line_containing(lines(fine), "verdict: PASS"));
  CHECK_FALSE(has_line_containing(lines(fine), "still has"));
  Report damaged;
  damaged.split_brain_time = Duration(1'500'000'000);
  damaged.stale_writes_accepted = 2;
  damaged.stale_writes_overwriting = 1;
  const std::string text = analysis::format_summary(info(), damaged, Verdict{});
  CHECK(has_line_containing(lines(text),
                            "verdict: PASS (every bound of the expect block holds; the run still "
                            "has 1.500s of split-brain, 2 stale writes accepted and 1 overwrite "
                            "of newer data (corruption))"));
}
