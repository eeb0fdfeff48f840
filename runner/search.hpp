// Searching for violations (docs/search.md): many runs of one scenario's world and protocol, each
// under a fault schedule a nemesis draws from the run's seed, in two phases as FoundationDB's
// simulator and Jepsen do. In the safety phase faults fly and the safety properties must hold;
// at its end every fault heals, and in the healing phase a single leader must be writing again
// within a bound. Each property that breaks is shrunk, deterministically and within a budget of
// runs, to a minimal schedule written as an ordinary scenario file.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "runner/grid.hpp"
#include "runner/loader.hpp"
#include "sim/fault.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace electsim::runner {

enum class Property : std::uint8_t {
  stale_write,   // a stale write accepted: an old leader wrote after a newer epoch was granted
  overwrite,     // a stale write accepted over newer data (corruption)
  same_epoch,    // two leaders in one epoch
  no_recovery,   // after healing, no single leader writing within the bound
  failover,      // a failover longer than the bound (only with a bound)
  expect,        // the scenario's own expect block
  store_safety,  // the replicated store broke its own safety (always a bug)
  stale_action,  // a leader committed a write after its own deadline had passed on its clock
  invariant,     // the simulation broke one of its own invariants (always a bug in a model)
};
inline constexpr int kPropertyCount = 9;
const char* property_name(Property p);
const char* property_meaning(Property p);
std::optional<Property> property_from_name(std::string_view name);
std::string property_list();  // every property's name, comma-separated

// The file name a shrunk finding is saved as: "<scenario>-<protocol>-<property>.json", with every
// character outside [A-Za-z0-9._-] replaced by '_' and no leading dot, so that it names a file
// inside the folder asked whatever the scenario's name says.
std::string found_file_name(const std::string& scenario, const std::string& protocol,
                            Property property);

struct SearchConfig {
  // How often the nemesis picks each fault kind (0: never). Kinds the world cannot take (a store
  // fault without a store) are left out whatever their weight.
  std::array<std::uint32_t, sim::kFaultKindCount> weights{};
  std::uint32_t faults_min = 1;  // per run, drawn uniformly
  std::uint32_t faults_max = 6;
  sim::Duration safety = std::chrono::seconds(30);      // the safety phase
  sim::Duration heal_bound = std::chrono::seconds(20);  // the healing phase's liveness bound
  // Given by the file or --heal-bound; otherwise the search raises the bound to the protocol's
  // own worst-case recovery (protocols/registry.hpp, PreparedProtocol::worst_recovery).
  bool heal_bound_given = false;
  sim::Duration max_fault_duration = std::chrono::seconds(10);
  // Intensities: the largest value the nemesis draws for each (uniformly from a small floor).
  std::uint32_t max_loss_percent = 50;       // loss windows: 5 % to this
  std::uint32_t max_duplicate_percent = 30;  // duplication windows: 5 % to this
  sim::Duration max_latency_spike = std::chrono::milliseconds(500);  // extra latency, uniform 0 to
  sim::Duration max_clock_jump = std::chrono::seconds(5);  // offsets and steps, either sign
  std::int64_t max_drift_ppm = 500;                        // drift, either sign
  std::optional<sim::Duration> failover_bound;             // the `failover` property, when set
  std::uint32_t properties = 0;                            // bit = Property
  std::uint64_t first_seed = 1;
  std::uint64_t runs = 1000;
  std::uint64_t shrink_budget = 400;  // runs per finding shrunk
  bool shrink = true;
  bool unsafe_by_design = false;  // written into saved files: the violation is expected to stay

  // The defaults: every kind the nemesis knows, weighted as in docs/search.md, and every property
  // but `failover` (which needs a bound) and `expect`.
  static SearchConfig defaults();
  bool wants(Property p) const { return (properties >> static_cast<int>(p)) & 1u; }
};

// Reads the scenario's `search` section over `config` (the command line then overrides it).
// Problems are located at /search/... .
void read_search_section(const nlohmann::json& section, SearchConfig& config,
                         params::Problems& problems);
// "crash=3,pause=1": only these kinds, with these weights ("crash" alone: weight 1).
std::optional<std::string> parse_kinds(std::string_view text, SearchConfig& config);
// "stale_write,overwrite": check only these properties (failover only with a bound).
std::optional<std::string> parse_properties(std::string_view text, SearchConfig& config);
// "loss=0.2,clock_jump=500ms": intensities (keys: duration, loss, duplicate, latency, clock_jump,
// drift_ppm), each range-checked.
std::optional<std::string> parse_intensity(std::string_view text, SearchConfig& config);

// What one run exercised.
struct Coverage {
  std::uint32_t fault_kinds = 0;    // bit = FaultKind, generated
  std::uint8_t roles = 0;           // bit = sim::Role, announced
  std::uint64_t message_types = 0;  // bit = message type index, sent (first 64)
  std::uint32_t store_ops = 0;      // bit = StoreOp, sent
  void merge(const Coverage& o) {
    fault_kinds |= o.fault_kinds;
    roles |= o.roles;
    message_types |= o.message_types;
    store_ops |= o.store_ops;
  }
};

struct Finding {
  Property property = Property::stale_write;
  std::uint64_t run = 0;  // index in the search
  std::uint64_t seed = 0;
  std::size_t faults = 0;
};

// A finding shrunk: the scenario file that reproduces it.
struct Shrunk {
  Property property = Property::stale_write;
  std::uint64_t seed = 0;
  std::size_t faults_before = 0;
  std::size_t faults_after = 0;
  std::uint64_t runs = 0;          // runs the shrinking spent
  bool budget_exhausted = false;   // stopped by the budget, not because nothing smaller failed
  std::vector<std::string> steps;  // what was shrunk, for the description
  nlohmann::json document;         // the scenario file
  // The saved file, run as `electsim run` runs it, breaks its expect block (or the invariant):
  // a finding that does not is reported as such and never saved.
  bool reproduced = true;
};

struct SearchProgress {
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  std::uint64_t findings = 0;
};

struct SearchOptions {
  unsigned jobs = 1;
  const std::atomic<bool>* stop = nullptr;  // Ctrl-C: stop, cut runs short, shrink nothing
  // The time budget is spent: start no new run, finish those under way, then shrink.
  const std::atomic<bool>* time_up = nullptr;
  std::function<void(const SearchProgress&)> progress;  // from the calling thread, every 200 ms
  // Told, from the calling thread and at most once each, when fewer threads run than `jobs` asks
  // for other than for want of runs: the cap of runner/threads.hpp, or a system that refuses a
  // thread.
  std::function<void(const std::string&)> notice;
  // Run only this shard's runs (every n-th, docs/search.md): its part merges with the others'
  // into the whole search (merge_search_parts).
  std::optional<Shard> shard;
};

struct SearchResult {
  std::string scenario_name;
  std::string protocol;
  std::uint64_t runs_planned = 0;
  // Runs 0 to runs_done - 1 all finished (a stopped search keeps that prefix only, so that the
  // same command gives the same findings whatever --jobs is). In a shard: its own first
  // runs_done runs.
  std::uint64_t runs_done = 0;
  // What was searched: the scenario document every run's schedule is added to (the file after
  // its variant and --set). Parts of one search carry the same.
  nlohmann::json searched;
  bool stopped = false;      // by Ctrl-C or the time budget, before runs_planned
  bool interrupted = false;  // by Ctrl-C (nothing was shrunk)
  std::array<std::uint64_t, kPropertyCount> violations{};  // runs violating each property
  std::vector<Finding> first;                              // the first finding of each, in order
  std::vector<Shrunk> shrunk;                              // one per entry of `first`
  Coverage coverage;
  std::vector<std::string> message_type_names;  // the protocol's, for the coverage report
  bool uses_store = false;
  // The healing bound the runs used (the protocol's worst-case recovery unless one was given),
  // and warnings about the configuration (a given bound below that recovery).
  sim::Duration heal_bound{0};
  std::vector<std::string> warnings;
  // Fault kinds asked for that cannot apply to this world (a store fault without a store).
  std::vector<std::string> kinds_inapplicable;
  // How long a silent leader keeps the others out (PreparedProtocol::silent_hold) and the
  // longest a fault of any run silenced one (a pause, partition, isolation or cut, or a clock
  // jump): safety properties no fault threatened are reported untested, not held.
  std::optional<sim::Duration> silent_hold;
  std::string silent_hold_what;
  sim::Duration longest_threat{0};
  std::uint64_t runs_healed = 0;  // runs with faults healed at the end of the safety phase
  // Runs the limit on events cut short: their recovery, failover and expect block are not judged.
  std::uint64_t runs_incomplete = 0;
  // What the service lived through over the runs: the longest outage, the run it happened in,
  // and the runs whose service never wrote again.
  sim::Duration longest_outage{0};
  std::uint64_t longest_outage_seed = 0;
  std::uint64_t runs_never_wrote_again = 0;
};

// A search over `document` (a scenario file after its variant and overrides are applied by
// `options`). Problems with the file or the configuration come back in `problems` and nothing
// runs.
struct SearchOutcome {
  std::optional<SearchResult> result;
  std::vector<std::string> problems;
};
SearchOutcome run_search(const nlohmann::json& document, const std::string& source,
                         const LoadOptions& load, const SearchConfig& config,
                         const SearchOptions& options);

// Servers of one group that the nemesis may aim at (ServerTraits::nemesis), in the world's order.
struct SearchServers {
  std::vector<std::string> names;  // as faults name them: "store", "store:1", "redis:0"
  sim::FaultSet faults = 0;        // the fault kinds they take
  // A replicated store's members, which elect a leader among them: process faults aim at them
  // by role when the fault fires ("<group>_leader", "<group>_follower"), clock faults by name.
  std::string roles;
  // The server keeps a leadership record that operator_clear clears (the single store only
  // with a leader key).
  bool record = true;
};

// What the nemesis can aim at: the nodes and the servers the protocol depends on.
struct SearchWorld {
  std::size_t nodes = 0;
  bool store = false;  // the protocol uses the store (store_pause stalls it)
  std::vector<SearchServers> servers;
};
SearchWorld search_world(const Scenario& scenario);

// The scenario document of run `seed` of a search: the world and protocol of `base`, the
// nemesis's faults, the heal at the end of the safety phase. Exposed for tests.
nlohmann::json search_run_document(const nlohmann::json& base, const SearchConfig& config,
                                   std::uint64_t seed, const SearchWorld& world,
                                   Coverage* coverage = nullptr);

// The text report: runs, violations per property with the first seed, shrunk files, coverage.
std::string format_search_report(const SearchResult& result, const SearchConfig& config);

// ---- Shards (runner/search_part.cpp)
// A shard's part: JSON Lines, a header naming the search (what was searched, the configuration
// asked for, the shard), its counts and first findings, then one line per finding shrunk.
std::string search_part(const SearchResult& result, const SearchConfig& config, const Shard& shard);
// Whether a part's text is a search's (its first line says so), not a sweep's.
bool is_search_part(std::string_view text);
// Parts of one search, every shard once and each run to its end, combined into the result one
// process gives for the same command: the same counts, findings, shrunk files and report.
struct SearchMerge {
  std::optional<SearchResult> result;
  SearchConfig config;  // as the search was asked, for its report
  std::vector<std::string> problems;
};
SearchMerge merge_search_parts(const std::vector<PartText>& parts);

}  // namespace electsim::runner
