// The kernel's event queue: keys come out in (time, order) order whatever mix of times, ties,
// late re-insertions and bounded pops a kernel gives it, checked against a sorted reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

using namespace electsim::sim;

namespace {

using Reference = std::set<std::pair<std::int64_t, std::uint64_t>>;

// Pops every key due by `until` from both and checks that they agree, key by key.
void drain(EventQueue& queue, Reference& reference, std::int64_t until) {
  while (queue.ready(until)) {
    REQUIRE_FALSE(reference.empty());
    const EventQueue::Key key = queue.pop();
    const auto expected = *reference.begin();
    reference.erase(reference.begin());
    REQUIRE(key.time == expected.first);
    REQUIRE(key.order == expected.second);
  }
  REQUIRE((reference.empty() || reference.begin()->first > until));
  REQUIRE(queue.size() == reference.size());
}

}  // namespace

TEST_CASE("event queue: equal times pop in order, earlier times first") {
  EventQueue queue;
  queue.push({5, 3});
  queue.push({5, 1});
  queue.push({2, 7});
  queue.push({5, 2});
  queue.push({9, 0});
  std::vector<std::pair<std::int64_t, std::uint64_t>> out;
  while (queue.ready(100)) {
    const EventQueue::Key k = queue.pop();
    out.emplace_back(k.time, k.order);
  }
  CHECK(out == std::vector<std::pair<std::int64_t, std::uint64_t>>{
                   {2, 7}, {5, 1}, {5, 2}, {5, 3}, {9, 0}});
  CHECK(queue.empty());
}

TEST_CASE("event queue: a bounded pop leaves later keys, and earlier pushes stay legal") {
  EventQueue queue;
  queue.push({1000, 1});
  CHECK_FALSE(queue.ready(999));
  // The queue did not move past 999: a key at 500 is still accepted and comes first.
  queue.push({500, 2});
  REQUIRE(queue.ready(999));
  CHECK(queue.pop().time == 500);
  CHECK_FALSE(queue.ready(999));
  REQUIRE(queue.ready(1000));
  CHECK(queue.pop().order == 1);
  CHECK_FALSE(queue.ready(1'000'000));
}

TEST_CASE("event queue: a key pushed at the current time with an earlier order goes to its place") {
  EventQueue queue;
  queue.push({10, 5});
  queue.push({10, 8});
  queue.push({10, 9});
  REQUIRE(queue.ready(10));
  CHECK(queue.pop().order == 5);
  // An adopted timer entry returns to its own place in the sequence, after the key just popped.
  queue.push({10, 7});
  queue.push({10, 12});
  std::vector<std::uint64_t> orders;
  while (queue.ready(10)) orders.push_back(queue.pop().order);
  CHECK(orders == std::vector<std::uint64_t>{7, 8, 9, 12});
}

TEST_CASE("event queue: random kernel-like workloads match a sorted reference") {
  // Each round pushes keys at or after the current time (some at it, some with orders from the
  // past as adopted entries have, some far ahead), then pops up to a horizon that sometimes
  // falls between keys, as run_until does. With a low bound between the binary and the radix
  // heap, the keys move between the two forms many times, mid-burst and mid-tie.
  const auto [seed, spread] = GENERATE(table<std::uint64_t, std::int64_t>({
      {1, 1},                      // every key at one of two times: ties only
      {2, 16},                     // few distinct times
      {3, 1'000'000},              // microsecond-apart times
      {4, std::int64_t{1} << 50},  // times across most of the bits
  }));
  const std::size_t to_radix = GENERATE(std::size_t{8}, std::size_t{64}, EventQueue::kToRadix);
  INFO("seed " << seed << ", spread " << spread << ", to_radix " << to_radix);
  Rng rng(seed, StreamPurpose::bench, 0);
  EventQueue queue(to_radix);
  int moves = 0;
  bool was_radix = false;
  Reference reference;
  std::int64_t now = 0;
  std::uint64_t next_order = 1;
  for (int round = 0; round < 2000; ++round) {
    // Now and then a burst: many keys split from one bucket at once.
    const std::int64_t pushes = rng.between(0, 40) == 0 ? rng.between(100, 400) : rng.between(0, 8);
    for (std::int64_t i = 0; i < pushes; ++i) {
      const std::int64_t time = rng.between(0, 3) == 0 ? now : now + rng.between(0, spread);
      std::uint64_t order = next_order++;
      // An order from the past, just below the earliest key queued at `now`, as an adopted timer
      // entry goes back to its own place in the sequence.
      if (time == now && !reference.empty() && rng.between(0, 4) == 0) {
        const auto first_now = reference.lower_bound({now, 0});
        if (first_now != reference.end() && first_now->first == now && first_now->second > 0) {
          order = first_now->second - 1;
          if (reference.contains({now, order})) order = next_order - 1;
        }
      }
      if (reference.contains({time, order})) continue;
      queue.push({time, order});
      reference.emplace(time, order);
    }
    if (queue.radix() != was_radix) ++moves;
    was_radix = queue.radix();
    const std::int64_t until = now + rng.between(0, spread) / (reference.size() > 64 ? 8 : 1);
    drain(queue, reference, until);
    if (queue.radix() != was_radix) ++moves;
    was_radix = queue.radix();
    now = until;
  }
  drain(queue, reference, std::int64_t{1} << 62);
  CHECK(queue.empty());
  // The bursts of 100 to 400 keys cross the low bounds: both forms served, back and forth (but
  // for ties only, where the queue grows past 64 keys and stays there).
  if (to_radix == 8 || (to_radix == 64 && spread > 1)) CHECK(moves >= 20);
}

TEST_CASE("event queue: a small queue is a binary heap, a large one a radix heap, and back") {
  EventQueue queue(16);
  for (std::uint64_t order = 1; order <= 15; ++order) {
    queue.push({static_cast<std::int64_t>(100 - order), order});
  }
  CHECK_FALSE(queue.radix());
  queue.push({50, 16});  // the 16th key
  CHECK(queue.radix());
  // Down to a quarter of the bound (4 keys) it stays a radix heap, then moves back.
  std::vector<std::int64_t> times;
  while (queue.size() > 4) {
    REQUIRE(queue.ready(1000));
    times.push_back(queue.pop().time);
    if (queue.size() > 4) CHECK(queue.radix());
  }
  CHECK_FALSE(queue.radix());
  while (queue.ready(1000)) times.push_back(queue.pop().time);
  CHECK(std::is_sorted(times.begin(), times.end()));
  CHECK(times.size() == 16);
  CHECK(times.front() == 50);
  CHECK(times.back() == 99);
}

TEST_CASE("event queue: many keys on few times drain in order") {
  // 20000 keys on 50 times, pushed in a scrambled time order, then popped in steps with a push
  // at the current time after each: buckets far past the capacity a bucket keeps.
  EventQueue queue;
  Reference reference;
  Rng rng(9, StreamPurpose::bench, 1);
  for (std::uint64_t order = 1; order <= 20000; ++order) {
    const std::int64_t time = 1000 + rng.between(0, 49) * 7;
    queue.push({time, order});
    reference.emplace(time, order);
  }
  CHECK(queue.size() == 20000);
  std::uint64_t next_order = 20001;
  for (std::int64_t until = 1000; until <= 1400; until += 20) {
    drain(queue, reference, until);
    queue.push({until, next_order});
    reference.emplace(until, next_order++);
  }
  drain(queue, reference, 1'000'000);
  CHECK(queue.empty());
}
