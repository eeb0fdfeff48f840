// The store's lease table: through grants, renewals, erasures and slot reuse it answers as a map
// of leases beside a set of (deadline, id) would: the same lookups, the same earliest deadline,
// the same due leases in id order; and its heap stays within its bound however often leases
// are renewed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "servers/store/lease_table.hpp"
#include "sim/rng.hpp"

using namespace electsim;
using sim::LeaseId;
using sim::LocalTime;

namespace {

struct Record {
  int value = 0;
};

constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();  // due() without a limit

LocalTime at(std::int64_t ms) {
  return LocalTime(sim::Duration(std::chrono::milliseconds(ms)));
}

}  // namespace

TEST_CASE("lease table: agrees with a map and a set of deadlines") {
  sim::Rng rng(21, sim::StreamPurpose::bench, 0);
  servers::LeaseTable<Record> table;
  std::map<LeaseId, std::pair<int, LocalTime>> reference;
  std::set<std::pair<LocalTime, LeaseId>> deadlines;
  LeaseId next = 1;
  std::int64_t now = 0;
  for (int step = 0; step < 30000; ++step) {
    now += rng.between(0, 3);
    const int action = static_cast<int>(rng.between(0, 9));
    if (action == 0 || reference.empty()) {
      const LocalTime deadline = at(now + rng.between(1, 200));
      table.insert(next, Record{step}, deadline);
      reference.emplace(next, std::pair{step, deadline});
      deadlines.emplace(deadline, next);
      ++next;
    } else {
      // A live lease picked at random, renewed (often) or erased.
      auto it = std::next(reference.begin(),
                          rng.between(0, static_cast<std::int64_t>(reference.size()) - 1));
      if (action <= 7) {
        const LocalTime deadline = at(now + rng.between(0, 200));
        deadlines.erase({it->second.second, it->first});
        it->second.second = deadline;
        deadlines.emplace(deadline, it->first);
        table.set_deadline(*table.find(it->first), deadline);
      } else {
        deadlines.erase({it->second.second, it->first});
        table.erase(it->first);
        reference.erase(it);
      }
    }
    REQUIRE(table.size() == reference.size());
    REQUIRE(table.next_deadline() ==
            (deadlines.empty() ? std::nullopt : std::optional{deadlines.begin()->first}));
    const LeaseId probe = rng.between(1, next);
    const auto found = reference.find(probe);
    REQUIRE(table.contains(probe) == (found != reference.end()));
    if (found != reference.end()) {
      REQUIRE(table.find(probe)->id() == probe);
      REQUIRE(table.find(probe)->lease().value == found->second.first);
      REQUIRE(table.find(probe)->deadline() == found->second.second);
    }
    if (step % 97 == 0) {
      const LocalTime cut = at(now + rng.between(0, 100));
      std::vector<LeaseId> due{-1};  // what was there before stays first
      table.due(cut, kAll, due);
      std::vector<LeaseId> expected{-1};
      for (const auto& [deadline, id] : deadlines) {
        if (deadline > cut) break;
        expected.push_back(id);
      }
      std::sort(expected.begin() + 1, expected.end());
      REQUIRE(due == expected);
      // With a limit and leases passed over: the earliest deadlines of the rest, in id order.
      const auto limit = static_cast<std::size_t>(rng.between(0, 8));
      const auto odd = [](LeaseId id) { return id % 2 != 0; };
      due.assign(1, -1);
      table.due(cut, limit, odd, due);
      expected.assign(1, -1);
      for (const auto& [deadline, id] : deadlines) {
        if (deadline > cut || expected.size() == limit + 1) break;
        if (!odd(id)) expected.push_back(id);
      }
      std::sort(expected.begin() + 1, expected.end());
      REQUIRE(due == expected);
    }
  }
  std::vector<LeaseId> visited;
  table.for_each([&](servers::LeaseTable<Record>::Held& held) {
    REQUIRE(reference.at(held.id()) == std::pair{held.lease().value, held.deadline()});
    visited.push_back(held.id());
  });
  CHECK(visited.size() == reference.size());
}

TEST_CASE("lease table: renewing one lease forever keeps the heap bounded") {
  // Each renewal leaves a stale entry behind; the table rebuilds its heap rather than keep them.
  servers::LeaseTable<Record> table;
  table.insert(1, Record{1}, at(1000));
  table.insert(2, Record{2}, at(5));
  for (std::int64_t i = 0; i < 100000; ++i) table.set_deadline(*table.find(1), at(2000 + i));
  CHECK(table.next_deadline() == at(5));
  std::vector<LeaseId> due;
  table.due(at(200000), kAll, due);
  CHECK(due == std::vector<LeaseId>{1, 2});
  table.erase(2);
  CHECK(table.next_deadline() == at(2000 + 99999));
  CHECK(table.heap_size() <= 2 * table.size() + 64);
}
