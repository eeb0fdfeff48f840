// Worker threads for sweeps and searches: see runner/threads.hpp.
#include "runner/threads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace electsim::runner {
namespace {

constexpr unsigned kThreadsPerCore = 4;
constexpr unsigned kMostThreads = 256;

unsigned cores() {
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

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
                     const std::function<void()>& meanwhile,
                     const std::function<void(const std::string&)>& refused) {
  std::vector<std::thread> started;
  // Joins whatever was started on every way out, a throwing `meanwhile` included.
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
    for (unsigned t = 0; t < threads; ++t) started.emplace_back(body, t);
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
      body(0);
      return 1;
    }
  }
  if (meanwhile) meanwhile();
  return static_cast<unsigned>(started.size());
}

}  // namespace electsim::runner
