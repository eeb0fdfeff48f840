// Worker threads for sweeps and searches: the count asked for is lowered to the work and to the
// cap, and a system that refuses threads (here an address-space limit too small for another
// thread's stack) costs parallelism, never the process.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "runner/threads.hpp"

using electsim::runner::run_workers;
using electsim::runner::worker_count;

namespace {

// The process's address space now, in bytes (the first field of /proc/self/statm, in pages).
std::uint64_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Sets the default stack size of new threads for its lifetime. A size no earlier thread used
// keeps glibc's cache of freed stacks, which serves only stacks at least as large as asked, from
// standing in for a new mapping.
class DefaultStackSize {
 public:
  explicit DefaultStackSize(std::size_t bytes) {
    REQUIRE(pthread_getattr_default_np(&old_) == 0);
    pthread_attr_t attr;
    REQUIRE(pthread_getattr_default_np(&attr) == 0);
    REQUIRE(pthread_attr_setstacksize(&attr, bytes) == 0);
    REQUIRE(pthread_setattr_default_np(&attr) == 0);
    pthread_attr_destroy(&attr);
  }
  ~DefaultStackSize() {
    pthread_setattr_default_np(&old_);
    pthread_attr_destroy(&old_);
  }
  DefaultStackSize(const DefaultStackSize&) = delete;
  DefaultStackSize& operator=(const DefaultStackSize&) = delete;

 private:
  pthread_attr_t old_{};
};

// Holds RLIMIT_AS at `bytes` for its lifetime, then restores it.
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(std::uint64_t bytes) {
    REQUIRE(getrlimit(RLIMIT_AS, &old_) == 0);
    rlimit lowered = old_;
    lowered.rlim_cur = bytes;
    REQUIRE(setrlimit(RLIMIT_AS, &lowered) == 0);
  }
  ~AddressSpaceLimit() { setrlimit(RLIMIT_AS, &old_); }
  AddressSpaceLimit(const AddressSpaceLimit&) = delete;
  AddressSpaceLimit& operator=(const AddressSpaceLimit&) = delete;

 private:
  rlimit old_{};
};

// The work of a sweep in miniature: items taken from a shared counter, each marked once.
struct Work {
  explicit Work(std::size_t n) : done(n) {}
  std::vector<std::atomic<int>> done;
  std::atomic<std::size_t> next{0};
  void take() {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= done.size()) return;
      done[i].fetch_add(1);
    }
  }
  bool each_once() const {
    for (const auto& d : done) {
      if (d.load() != 1) return false;
    }
    return true;
  }
};

}  // namespace

TEST_CASE("threads: the count asked for is lowered to the work and to the cap") {
  auto [requested, work, cap, threads, capped] =
      GENERATE(table<unsigned, std::uint64_t, unsigned, unsigned, bool>({
          {1024, 1'000'000, 8, 8, true},  // the cap lowers it: said
          {1024, 3, 8, 3, false},         // three runs need three threads: nothing to say
          {6, 1'000, 8, 6, false},
          {8, 1'000, 8, 8, false},
          {0, 1'000, 8, 1, false},  // at least one
          {4, 0, 8, 1, false},
      }));
  INFO(requested << " asked, " << work << " runs, cap " << cap);
  const auto count = worker_count(requested, work, cap);
  CHECK(count.threads == threads);
  CHECK(count.capped == capped);
}

TEST_CASE("threads: the cap is four per core, from 4 to 256") {
  const unsigned cap = electsim::runner::max_worker_threads();
  CHECK(cap >= 4);
  CHECK(cap <= 256);
  CHECK(cap % 4 == 0);
  CHECK_THAT(electsim::runner::capped_notice(1024, cap),
             Catch::StartsWith("--jobs 1024 capped at " + std::to_string(cap)));
}

TEST_CASE("threads: every item is done once, each thread taking from the shared counter") {
  Work work(5000);
  std::vector<std::string> notices;
  bool meanwhile = false;
  const unsigned ran = run_workers(
      8, [&](unsigned) { work.take(); }, [&] { meanwhile = true; },
      [&](const std::string& n) { notices.push_back(n); });
  CHECK(ran == 8);
  CHECK(meanwhile);
  CHECK(notices.empty());
  CHECK(work.each_once());
}

TEST_CASE("threads: a system that refuses threads costs parallelism, never the process") {
  // Room for half a thread's stack, or for two and a half: the next thread cannot be created.
  auto [stack_mib, stacks_of_room, started] =
      GENERATE(table<std::size_t, double, unsigned>({{24, 0.5, 0}, {40, 2.5, 2}}));
  INFO(stacks_of_room << " stacks of " << stack_mib << " MiB of room");
  const std::size_t stack = stack_mib << 20;
  Work work(5000);
  std::vector<std::string> notices;
  bool meanwhile = false;
  unsigned ran = 0;
  {
    const DefaultStackSize size(stack);
    const AddressSpaceLimit limit(address_space_bytes() +
                                  static_cast<std::uint64_t>(stacks_of_room * stack));
    ran = run_workers(
        64, [&](unsigned) { work.take(); }, [&] { meanwhile = true; },
        [&](const std::string& n) { notices.push_back(n); });
  }
  CHECK(work.each_once());
  REQUIRE(notices.size() == 1);
  CHECK_THAT(notices[0], Catch::StartsWith("the system refused thread " +
                                           std::to_string(started + 1) + " of 64 ("));
  // Progress was reported as the work started, by the calling thread either way.
  CHECK(meanwhile);
  if (started == 0) {
    // No thread at all: the calling thread did the work.
    CHECK(ran == 1);
    CHECK_THAT(notices[0], Catch::Contains("going on with the calling thread alone"));
  } else {
    CHECK(ran == started);
    CHECK_THAT(notices[0], Catch::Contains("going on with the 2 started"));
  }
}

TEST_CASE("threads: with no thread, the calling thread's work gives progress its turns") {
  // Room for half a thread's stack: no worker thread can start, so the calling thread runs the
  // work, and each worker_poll between items may report (every time, with an interval of 0).
  const std::size_t stack = std::size_t{24} << 20;
  std::size_t items = 0;
  std::size_t ticks = 0;
  unsigned ran = 0;
  {
    const DefaultStackSize size(stack);
    const AddressSpaceLimit limit(address_space_bytes() + stack / 2);
    ran = run_workers(
        4,
        [&](unsigned) {
          for (; items < 100; ++items) electsim::runner::worker_poll();
        },
        [&] { ++ticks; }, [](const std::string&) {}, std::chrono::milliseconds(0));
  }
  CHECK(ran == 1);
  CHECK(items == 100);
  CHECK(ticks == 101);  // as the work started, then at each of the 100 polls
  // Outside a run on the calling thread, a poll does nothing.
  electsim::runner::worker_poll();
  CHECK(ticks == 101);
}
