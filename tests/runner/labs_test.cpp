// Claims the lab sheets (docs/labs/) make that no scenario's expect block states: each test runs
// the lab's own command (scenario file and --set values) and checks the figure the sheet quotes.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <tuple>

#include "runner/loader.hpp"
#include "runner/run.hpp"

using namespace electsim;

namespace {

std::string scenario(const std::string& name) {
  const char* dir = std::getenv("ELECTSIM_SOURCE_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/scenarios/" + name;
}

analysis::Report run(const std::string& file, std::vector<runner::Override> sets,
                     std::optional<std::string> protocol = std::nullopt) {
  runner::LoadOptions o;
  o.overrides = std::move(sets);
  o.protocol = std::move(protocol);
  runner::LoadResult loaded = runner::load_scenario_file(scenario(file), o);
  for (const auto& m : loaded.messages()) UNSCOPED_INFO(m);
  REQUIRE(loaded.scenario);
  const runner::RunResult r = runner::run_scenario(*loaded.scenario, {});
  REQUIRE(r.errors.empty());
  return r.report;
}

std::uint64_t sent(const analysis::Report& r, const std::string& type) {
  const auto it = r.messages_by_type.find(type);
  return it == r.messages_by_type.end() ? 0 : it->second;
}

}  // namespace

TEST_CASE("lab 7: a descending ring where all start sends n(n+1)/2 Election and n Elected") {
  const std::uint64_t n = GENERATE(4u, 8u, 16u, 32u);
  INFO("n = " << n);
  const auto r = run("ring-all-start.json", {{"nodes", std::to_string(n)}});
  CHECK(r.elections == 1);
  CHECK(sent(r, "Election") == n * (n + 1) / 2);
  CHECK(sent(r, "Elected") == n);
}

TEST_CASE("lab 7: an ascending ring where all start sends 2n-1 Election messages") {
  const std::uint64_t n = GENERATE(4u, 8u, 16u, 32u);
  INFO("n = " << n);
  const auto r =
      run("ring-all-start.json", {{"nodes", std::to_string(n)}, {"protocol.order", "ascending"}});
  CHECK(sent(r, "Election") == 2 * n - 1);
  CHECK(sent(r, "Elected") == n);
}

TEST_CASE("lab 7: Bully where all start sends n squared minus 1 election messages") {
  const std::uint64_t n = GENERATE(4u, 8u, 16u, 32u);
  INFO("n = " << n);
  const auto r = run("ring-all-start.json", {{"nodes", std::to_string(n)}}, "bully");
  CHECK(r.elections == 1);
  CHECK(sent(r, "Election") == n * (n - 1) / 2);
  CHECK(sent(r, "Answer") == n * (n - 1) / 2);
  CHECK(sent(r, "Coordinator") == n - 1);
  CHECK(sent(r, "Election") + sent(r, "Answer") + sent(r, "Coordinator") == n * n - 1);
}

TEST_CASE(
    "lab 2: failover after a holder crash grows with the TTL and stays within it plus a "
    "retry") {
  const auto [ttl, ttl_ns] = GENERATE(table<std::string, std::int64_t>(
      {{"2s", 2'000'000'000}, {"6s", 6'000'000'000}, {"10s", 10'000'000'000}}));
  INFO("ttl " << ttl);
  const auto r = run("lease-leader-crash.json", {{"protocol.ttl", ttl}});
  REQUIRE(r.failovers.size() == 1);
  REQUIRE(r.failovers[0].failover);
  const std::int64_t failover = r.failovers[0].failover->count();
  CHECK(failover > ttl_ns / 2);
  CHECK(failover <= ttl_ns + ttl_ns / 3 + 50'000'000);
}

TEST_CASE("lab 3: a pause shorter than the renew deadline is ridden out with nothing stale") {
  const auto r = run("lease-gc-pause-fence.json", {{"faults.0.duration", "500ms"}});
  REQUIRE(r.failovers.size() == 1);
  CHECK(r.failovers[0].ridden_out);
  CHECK(r.split_brain_time == sim::Duration(0));
  CHECK(r.stale_writes_accepted == 0);
  CHECK(r.stale_writes_rejected == 0);
}

TEST_CASE("lab 5: without PreVote the minority's terms inflate and disrupt the heal, with it not") {
  const auto plain = run("partition-minority-leader.json", {}, "raft");
  const auto pre_vote =
      run("partition-minority-leader.json", {{"protocols.raft.pre_vote", "true"}}, "raft");
  REQUIRE_FALSE(plain.intervals.empty());
  REQUIRE_FALSE(pre_vote.intervals.empty());
  // Without PreVote the cut-off node campaigns for 40s; its term forces a new election at the heal.
  CHECK(plain.intervals.back().epoch > 50);
  CHECK(plain.elections == 3);
  // With PreVote it never wins a pre-vote, so the majority's leader of term 2 leads to the end.
  CHECK(pre_vote.elections == 2);
  CHECK(pre_vote.intervals.back().epoch == 2);
  CHECK(pre_vote.intervals.back().open_at_end);
}
