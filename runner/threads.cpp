// The executor of sweeps and searches: see runner/threads.hpp.
#include "runner/threads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <new>
#include <system_error>
#include <vector>

#if ELECTSIM_THREADS
#include <thread>
#endif

namespace electsim::runner {
namespace {

constexpr unsigned kThreadsPerCore = 4;
constexpr unsigned kMostThreads = 256;
#if ELECTSIM_THREADS
// How often the calling thread looks whether the workers are done (so that a short run does not
// wait out a report's interval).
constexpr std::chrono::milliseconds kLookInterval{10};
#endif

unsigned cores() {
#if ELECTSIM_THREADS
  return std::max(1u, std::thread::hardware_concurrency());
#else
  return 1;
#endif
}

// The tick of the run on the calling thread (no workers), for worker_poll: set only while that
// run lasts, and only ever read by the thread that set it.
struct InlineTick {
  const std::function<void()>* tick = nullptr;
  std::chrono::milliseconds every;
  std::chrono::steady_clock::time_point last;
};
thread_local InlineTick* g_inline = nullptr;

// Runs body(0) on the calling thread, giving `tick` its turns through worker_poll.
void run_inline(const std::function<void(unsigned)>& body, const std::function<void()>& tick,
                std::chrono::milliseconds every) {
  InlineTick state{tick ? &tick : nullptr, every, std::chrono::steady_clock::now()};
  if (tick) tick();
  g_inline = &state;
  struct Reset {
    ~Reset() { g_inline = nullptr; }
  } reset;
  body(0);
}

}  // namespace

unsigned default_jobs() {
  return cores();
}

void worker_poll() {
  InlineTick* state = g_inline;
  if (state == nullptr || state->tick == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - state->last < state->every) return;
  state->last = now;
  (*state->tick)();
}

unsigned max_worker_threads() {
  return std::min(kMostThreads, kThreadsPerCore * cores());
}

WorkerCount worker_count(unsigned requested, std::uint64_t work, unsigned cap) {
  const std::uint64_t wanted = std::max<std::uint64_t>(1, std::min<std::uint64_t>(requested, work));
  WorkerCount count;
  count.threads = static_cast<unsigned>(std::min<std::uint64_t>(wanted, std::max(1u, cap)));
  count.capped = count.threads < wanted;
  return count;
}

std::string capped_notice(unsigned requested, unsigned threads) {
  return fmt::format(
      "--jobs {} capped at {} ({} threads per core on {} cores, at most {}: more only take "
      "memory); the results are the same for any --jobs",
      requested, threads, kThreadsPerCore, cores(), kMostThreads);
}

unsigned run_workers(unsigned threads, const std::function<void(unsigned)>& body,
                     const std::function<void()>& tick,
                     const std::function<void(const std::string&)>& refused,
                     std::chrono::milliseconds tick_every) {
#if ELECTSIM_THREADS
  std::atomic<unsigned> finished{0};
  const auto run = [&](unsigned t) {
    body(t);
    finished.fetch_add(1, std::memory_order_release);
  };
  std::vector<std::thread> started;
  // Joins whatever was started on every way out, a throwing `tick` included.
  struct Joiner {
    std::vector<std::thread>& threads;
    ~Joiner() {
      for (std::thread& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{started};
  std::string why;
  try {
    started.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) started.emplace_back(run, t);
  } catch (const std::system_error& e) {
    why = e.code().message();
  } catch (const std::bad_alloc&) {
    why = "out of memory";
  }
  if (!why.empty()) {
    const auto n = static_cast<unsigned>(started.size());
    if (refused) {
      refused(fmt::format(
          "the system refused thread {} of {} ({}); going on with {}, the results are the same "
          "for any --jobs",
          n + 1, threads, why,
          n == 0 ? std::string("the calling thread alone") : fmt::format("the {} started", n)));
    }
    if (n == 0) {
      run_inline(body, tick, tick_every);
      return 1;
    }
  }
  // The calling thread reports progress while the workers run.
  if (tick) tick();
  auto last = std::chrono::steady_clock::now();
  while (finished.load(std::memory_order_acquire) < started.size()) {
    std::this_thread::sleep_for(kLookInterval);
    const auto now = std::chrono::steady_clock::now();
    if (tick && now - last >= tick_every) {
      last = now;
      tick();
    }
  }
  return static_cast<unsigned>(started.size());
#else
  (void)threads;
  (void)refused;
  run_inline(body, tick, tick_every);
  return 1;
#endif
}

}  // namespace electsim::runner
