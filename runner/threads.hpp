// The one executor of sweeps and searches: how many workers to start, and running them, on
// threads or, where there are none, on the calling thread. A system that refuses a thread costs
// parallelism, never the process: a std::thread that cannot be created throws std::system_error,
// and one destroyed unjoined calls std::terminate; here every thread started is joined, and the
// work goes on with the threads there are. A build without threads (ELECTSIM_THREADS=OFF, as the
// WebAssembly build has) runs every worker's work on the calling thread, with the same results.
#pragma once

#include <chrono>
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

// The workers a command starts unless told: one per core, or 1 without threads.
unsigned default_jobs();

// Runs body(t) for t from 0 to threads - 1, each on a thread of its own, and returns how many
// threads ran the bodies. The bodies must share the work through a common counter, so that fewer
// threads only take longer. `tick` (may be empty) reports progress: once as the work starts, then
// about every 200 ms of wall time until the bodies return, called by the calling thread while the
// workers run. Where no thread can run them (a build without threads, or a system that refuses
// every one: `refused` is told, with the notice to print, whenever the system refuses one), the
// calling thread runs body(0) alone and returns 1; the body's calls of worker_poll() between its
// items then give `tick` its turns.
// `tick_every` is the interval (200 ms unless a test says otherwise).
unsigned run_workers(unsigned threads, const std::function<void(unsigned)>& body,
                     const std::function<void()>& tick,
                     const std::function<void(const std::string&)>& refused,
                     std::chrono::milliseconds tick_every = std::chrono::milliseconds(200));

// Called by a body between two items of its work: on the calling thread's own run (no worker
// threads), calls the tick when its interval has passed; on worker threads, nothing.
void worker_poll();

}  // namespace electsim::runner
