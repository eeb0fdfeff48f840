// Worker threads for sweeps and searches: how many to start, and starting them so that a system
// that refuses a thread costs parallelism, never the process. A std::thread that cannot be
// created throws std::system_error, and one destroyed unjoined calls std::terminate; here every
// thread started is joined, and the work goes on with the threads there are.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace electsim::runner {

// The most worker threads a sweep or a search starts: four per core, at most 256. Runs are
// CPU-bound, so more threads only add memory (each holds a whole run) and stacks.
unsigned max_worker_threads();

struct WorkerCount {
  unsigned threads = 1;  // min(requested, work, cap), at least 1
  bool capped = false;   // the cap, not the work, lowered the request
};
WorkerCount worker_count(unsigned requested, std::uint64_t work,
                         unsigned cap = max_worker_threads());

// "--jobs 1024 capped at 8 (4 threads per core, at most 256); ...": the notice for a capped count.
std::string capped_notice(unsigned requested, unsigned threads);

// Runs body(t) for t from 0 to threads - 1, each on a thread of its own, while `meanwhile` runs on
// the calling thread; then joins them all. When the system refuses a thread, no more are asked
// for: `refused` is told (with the notice to print) and the threads started do all the work; when
// none could start, the calling thread runs body(0) itself instead of `meanwhile`. The bodies must
// share the work through a common counter, so that fewer threads only take longer. Returns how
// many threads ran the bodies (1 when it was the calling thread).
unsigned run_workers(unsigned threads, const std::function<void(unsigned)>& body,
                     const std::function<void()>& meanwhile,
                     const std::function<void(const std::string&)>& refused);

}  // namespace electsim::runner
