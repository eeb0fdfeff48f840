// Parameters of the lease protocol (protocols/lease/config.hpp). Store mode derives its timings
// from the TTL as etcd's concurrency.Session does (keepalive every TTL/3); client mode uses
// Kubernetes client-go leaderelection's defaults (LeaseDuration 15s, RenewDeadline 10s,
// RetryPeriod 2s, JitterFactor 1.2), shown under client-go's names by the kubernetes entry.
// Cross-field problems are reported at the dependent field, for per_node overrides too.
#include "protocols/lease/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "params/section.hpp"

namespace electsim::protocols::lease {
namespace {

// A bound on the jitter factor: beyond it retries would be too irregular to reason about.
constexpr double kJitterFactorMax = 10.0;
constexpr std::size_t kKeyLengthMax = 1024;
// Bounds of the herd's remedies: a longer spread or a steeper backoff than these would hide
// the coordinator from the clients for longer than any lease they could hold.
constexpr sim::Duration kRaceJitterMax = std::chrono::hours(1);
constexpr double kBackoffFactorMax = 10.0;

constexpr const char* kExpiryNames[] = {"store", "client"};             // Expiry's order
constexpr const char* kPhaseNames[] = {"grant", "random"};              // random_keepalive_phase
constexpr const char* kDurationFromNames[] = {"record", "own"};         // DurationFrom's order
constexpr const char* kJudgeNames[] = {"observed_time", "renew_time"};  // ExpiryJudge's order

double jitter_factor_of(const LeaseConfig& c) {
  return static_cast<double>(c.jitter_ppm) / static_cast<double>(sim::kPpmOne);
}

double backoff_factor_of(const LeaseConfig& c) {
  return static_cast<double>(c.backoff_factor_ppm) / static_cast<double>(sim::kPpmOne);
}

// "2s (store) / 15s (client)": a timing whose default depends on the expiry mode.
std::string by_mode(std::string store, sim::Duration client) {
  return fmt::format("{} (store) / {} (client)", store, sim::format_duration(client));
}

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const LeaseConfig store = default_config(Expiry::store);
    const LeaseConfig client = default_config(Expiry::client);
    return std::vector<params::ParamSpec>{
        {.name = "ttl",
         .default_note = by_mode(sim::format_duration(store.ttl), client.ttl),
         .min = params::kShortestTimer,
         .meaning = "how long a claim lasts without renewal (etcd lease TTL / Kubernetes "
                    "LeaseDuration)"},
        {.name = "renew_interval",
         .default_note = by_mode("ttl/3", client.renew_interval),
         .min = params::kShortestTimer,
         .meaning = "the holder renews (keepalive or record update) this often"},
        {.name = "renew_deadline",
         .default_note = by_mode("ttl*2/3", client.renew_deadline),
         .min = params::kShortestTimer,
         .meaning = "the holder stops believing it leads this long after its last confirmed "
                    "renewal, by its own clock"},
        {.name = "retry_interval",
         .default_note = by_mode("ttl/3", client.retry_interval),
         .min = params::kShortestTimer,
         .meaning = "followers retry acquiring (store mode) or poll the record (client mode) this "
                    "often"},
        {.name = "fencing",
         .type = params::ParamType::boolean,
         .default_value = store.fencing,
         .meaning = "the sink rejects writes whose token is lower than the highest it accepted"},
        {.name = "expiry",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kExpiryNames, LeaseConfig{}.expiry),
         .meaning = "store: the store's clock expires a lease (etcd); client: followers judge "
                    "expiry on their own clocks (Kubernetes Lease)",
         .choices = params::choice_names(kExpiryNames)},
        {.name = "recheck_before_write",
         .type = params::ParamType::boolean,
         .default_value = store.recheck_before_write,
         .meaning = "the holder checks its deadline just before committing each write (false: "
                    "the careless client); a pause in the workload's send_delay after the check "
                    "still makes it write late"},
        {.name = "jitter_factor",
         .type = params::ParamType::number,
         .default_note = fmt::format("{} (store) / {} (client)", jitter_factor_of(store),
                                     jitter_factor_of(client)),
         .min = 0.0,
         .max = kJitterFactorMax,
         .meaning = "a follower waits retry_interval * (1 + u) between tries, u drawn uniformly "
                    "from [0, jitter_factor): client-go's wait.Jitter(RetryPeriod, JitterFactor)"},
        {.name = "race_jitter",
         .default_value = store.race_jitter,
         .max = kRaceJitterMax,
         .meaning = "store mode: a follower that sees the key freed (a watch event, a read) "
                    "waits a uniform draw from [0, race_jitter) before it races for it, so that "
                    "the followers of many leases that expire at once do not all ask the store in "
                    "the same instant; 0s races at once, as etcd's Campaign does"},
        {.name = "backoff_max",
         .default_note = "none",
         .min = params::kShortestTimer,
         .meaning = "after a try the coordinator failed (no answer in time, unavailable, no "
                    "leader, too many requests) the next comes retry_interval later, and each "
                    "further failure multiplies that wait by backoff_factor up to this cap; an "
                    "answer resets it (client-go's wait.Backoff: Duration, Factor, Cap); "
                    "jitter_factor applies on top. none: every retry comes retry_interval later"},
        {.name = "backoff_factor",
         .type = params::ParamType::number,
         .default_value = backoff_factor_of(store),
         .min = 1.0,
         .max = kBackoffFactorMax,
         .meaning = "with backoff_max: how many times longer each backed-off wait is than the "
                    "last (wait.Backoff's Factor)"},
        {.name = "keepalive_phase",
         .type = params::ParamType::choice,
         .default_value = std::string(kPhaseNames[store.random_keepalive_phase ? 1 : 0]),
         .meaning = "grant: the holder renews every renew_interval from its grant; random: the "
                    "first renewal comes after a uniform draw from (0, renew_interval], then "
                    "every renew_interval, so that renewals need not lock onto the store's expiry "
                    "scans",
         .choices = params::choice_names(kPhaseNames)},
        {.name = "key",
         .type = params::ParamType::text,
         .default_value = store.key,
         .meaning = "the store key the holder owns"},
        {.name = "lease_duration_from",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kDurationFromNames, client.lease_duration_from),
         .meaning = "client mode: record: a follower waits out the lease duration the holder "
                    "wrote in the record (client-go since v0.27); own: its own ttl (older "
                    "client-go, fabric8 before its fix), so a replica configured shorter takes "
                    "over from a longer-configured holder",
         .choices = params::choice_names(kDurationFromNames)},
        {.name = "expiry_judged_by",
         .type = params::ParamType::choice,
         .default_value = params::choice_name(kJudgeNames, client.expiry_judged_by),
         .meaning = "client mode: observed_time: the duration counts from the moment the "
                    "follower saw the record change, on its monotonic clock (client-go); "
                    "renew_time: from the record's renewTime, the holder's wall clock, against "
                    "the follower's wall clock (fabric8), so skew or a clock step moves the expiry",
         .choices = params::choice_names(kJudgeNames)},
        {.name = "per_node",
         .type = params::ParamType::object,
         .default_note = "none",
         .meaning = "client mode: timings of single nodes, {\"<id>\": {\"ttl\": \"30s\", "
                    "\"renew_deadline\": \"20s\", ...}}; ttl, renew_interval, renew_deadline "
                    "and retry_interval may be given, each checked like the cluster-wide value; "
                    "others run with the cluster-wide values"},
    };
  }();
  return table;
}

// The kubernetes entry's table: the lease table without `expiry` (always client mode), with
// client-go's defaults, typed, and its names in the meanings.
const std::vector<params::ParamSpec>& kubernetes_specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const LeaseConfig client = default_config(Expiry::client);
    std::vector<params::ParamSpec> out;
    for (const params::ParamSpec& spec : specs()) {
      // race_jitter is store mode's: client mode's followers never see a deletion happen.
      if (spec.name == "expiry" || spec.name == "race_jitter") continue;
      params::ParamSpec copy = spec;
      // Always client mode here: the lease table's "client mode: " prefixes say nothing.
      constexpr std::string_view kClientMode = "client mode: ";
      if (copy.meaning.starts_with(kClientMode)) copy.meaning.erase(0, kClientMode.size());
      out.push_back(std::move(copy));
    }
    const auto client_go = [&](std::string_view name, params::ParamValue value,
                               const char* meaning) {
      for (params::ParamSpec& spec : out) {
        if (spec.name != name) continue;
        spec.default_value = std::move(value);
        spec.default_note.clear();
        spec.meaning = meaning;
      }
    };
    client_go("ttl", client.ttl,
              "LeaseDuration: how long followers wait, from seeing the record change, before they "
              "may take it over");
    client_go("renew_interval", client.renew_interval,
              "the holder updates the record this often (RetryPeriod)");
    client_go("renew_deadline", client.renew_deadline,
              "RenewDeadline: the holder stops leading this long after its last successful "
              "renewal, by its monotonic clock");
    client_go("retry_interval", client.retry_interval,
              "RetryPeriod: followers poll the record this often, jittered");
    client_go("jitter_factor", jitter_factor_of(client),
              "JitterFactor: a follower waits retry_interval * (1 + u) between polls, u drawn "
              "uniformly from [0, jitter_factor) (wait.JitterUntil)");
    return out;
  }();
  return table;
}

// What a per_node entry may give: the four timings.
const std::vector<params::ParamSpec>& node_timing_specs() {
  static const std::vector<params::ParamSpec> table = [] {
    std::vector<params::ParamSpec> out;
    for (const params::ParamSpec& spec : specs()) {
      if (spec.name == "ttl" || spec.name == "renew_interval" || spec.name == "renew_deadline" ||
          spec.name == "retry_interval") {
        out.push_back(spec);
      }
    }
    return out;
  }();
  return table;
}

// A factor (within the spec's range) into parts per million, so that no floating point reaches
// a run; `ppm` is left as it was when the value was wrong.
void read_ppm(params::ParamReader& reader, std::string_view name, const params::Problems& problems,
              std::int64_t& ppm) {
  const std::size_t before = problems.size();
  const double factor = reader.number(name);
  if (problems.size() == before) ppm = std::llround(factor * static_cast<double>(sim::kPpmOne));
}

const char* mode_name(Expiry expiry) {
  return expiry == Expiry::store ? "store" : "client";
}

}  // namespace

LeaseConfig default_config(Expiry expiry) {
  LeaseConfig c;
  c.expiry = expiry;
  if (expiry == Expiry::store) {
    // etcd's concurrency.Session keeps its lease alive every TTL/3; the deadline leaves the last
    // third of the TTL as a margin for latency and clock drift.
    c.ttl = std::chrono::seconds(2);
    c.renew_interval = c.ttl / 3;
    c.renew_deadline = c.ttl * 2 / 3;
    c.retry_interval = c.ttl / 3;
    c.jitter_ppm = 0;
  } else {
    // client-go leaderelection: LeaseDuration 15s, RenewDeadline 10s, RetryPeriod 2s, and
    // wait.JitterUntil(..., RetryPeriod, JitterFactor = 1.2, ...) for the followers' polling
    // (tools/leaderelection/leaderelection.go), so a poll comes 2s to 4.4s after the last.
    c.ttl = std::chrono::seconds(15);
    c.renew_interval = std::chrono::seconds(2);
    c.renew_deadline = std::chrono::seconds(10);
    c.retry_interval = std::chrono::seconds(2);
    c.jitter_ppm = 1'200'000;
  }
  return c;
}

std::span<const params::ParamSpec> lease_params() {
  return specs();
}

std::span<const params::ParamSpec> kubernetes_params() {
  return kubernetes_specs();
}

LeaseConfig config_for_node(const LeaseConfig& cluster, sim::NodeId node) {
  LeaseConfig c = cluster;
  c.per_node.clear();
  for (const NodeTimings& t : cluster.per_node) {
    if (t.node != node) continue;
    c.ttl = t.ttl;
    c.renew_interval = t.renew_interval;
    c.renew_deadline = t.renew_deadline;
    c.retry_interval = t.retry_interval;
  }
  return c;
}

namespace {

// Reads ttl, renew_interval, renew_deadline and retry_interval of one object over the values `c`
// already holds, and cross-checks them. `origin` says where a value the object does not give
// came from ("the default in client mode", "the cluster-wide value"). Store mode derives the
// other three from a given ttl, as etcd's session does. Cross-field problems are reported at the
// dependent field, one per mistake.
void read_timings(params::ParamReader& reader, const nlohmann::json& object, Expiry expiry,
                  const std::string& origin, LeaseConfig& c, params::Problems& problems) {
  const auto given_ttl = reader.timer_opt("ttl");
  const auto given_renew_interval = reader.timer_opt("renew_interval");
  const auto given_renew_deadline = reader.timer_opt("renew_deadline");
  const auto given_retry_interval = reader.timer_opt("retry_interval");
  const bool ttl_ok = given_ttl || !reader.has("ttl");
  const bool renew_interval_ok = given_renew_interval || !reader.has("renew_interval");
  const bool renew_deadline_ok = given_renew_deadline || !reader.has("renew_deadline");
  if (given_ttl) {
    c.ttl = *given_ttl;
    if (expiry == Expiry::store) {
      c.renew_interval = c.ttl / 3;
      c.renew_deadline = c.ttl * 2 / 3;
      c.retry_interval = c.ttl / 3;
    }
  }
  if (given_renew_interval) c.renew_interval = *given_renew_interval;
  if (given_renew_deadline) c.renew_deadline = *given_renew_deadline;
  if (given_retry_interval) c.retry_interval = *given_retry_interval;

  // "3s", or "2s (the default in client mode)" when the object does not give the field.
  const auto shown = [&](const char* name, sim::Duration value) {
    if (reader.has(name)) return params::json_excerpt(object.at(std::string(name)));
    return fmt::format("{} ({})", sim::format_duration(value), origin);
  };
  const std::string ttl_text = sim::format_duration(c.ttl);
  bool renew_interval_fits = true;
  if (ttl_ok && renew_interval_ok && c.renew_interval >= c.ttl) {
    renew_interval_fits = false;
    params::add_problem(problems, reader.pointer_of("renew_interval"),
                        fmt::format("a duration shorter than ttl ({})", ttl_text),
                        shown("renew_interval", c.renew_interval),
                        "renew_interval must be shorter than ttl");
  }
  if (ttl_ok && renew_deadline_ok && c.renew_deadline >= c.ttl) {
    params::add_problem(
        problems, reader.pointer_of("renew_deadline"),
        fmt::format("a duration shorter than ttl ({})", ttl_text),
        shown("renew_deadline", c.renew_deadline),
        "renew_deadline must be shorter than ttl, or the holder would still believe it "
        "leads after its claim expired");
  } else if (renew_interval_ok && renew_interval_fits && renew_deadline_ok &&
             c.renew_deadline < c.renew_interval) {
    params::add_problem(
        problems, reader.pointer_of("renew_deadline"),
        fmt::format("a duration of at least renew_interval ({})",
                    sim::format_duration(c.renew_interval)),
        shown("renew_deadline", c.renew_deadline),
        "renew_deadline must be at least renew_interval, or the holder gives up before "
        "it has renewed once");
  }
}

// A node id written the one way std::to_string writes it ("2", never "02" or "+2"), so that no
// two keys name the same node.
std::optional<sim::NodeId> parse_node_key(const std::string& key, std::size_t node_count) {
  sim::NodeId id = sim::kNoNode;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
  if (ec != std::errc() || end != key.data() + key.size()) return std::nullopt;
  if (id < 0 || static_cast<std::size_t>(id) >= node_count || std::to_string(id) != key) {
    return std::nullopt;
  }
  return id;
}

// per_node: {"<id>": {timings}}; each entry is read over the cluster-wide values and checked
// like them.
void read_per_node(const nlohmann::json& per_node, const std::string& pointer,
                   std::size_t node_count, LeaseConfig& c, params::Problems& problems) {
  if (!per_node.is_object()) {
    params::add_problem(problems, pointer,
                        "an object from node id to timings, such as {\"2\": {\"ttl\": \"30s\"}}",
                        params::json_excerpt(per_node), "");
    return;
  }
  // nlohmann::json keeps object keys sorted: problems come out in a stable order.
  for (const auto& [key, entry] : per_node.items()) {
    const std::string entry_pointer = params::child_pointer(pointer, key);
    const auto id = parse_node_key(key, node_count);
    if (!id) {
      params::add_problem(
          problems, entry_pointer,
          fmt::format("a node id written in decimal, below the cluster size ({})", node_count),
          fmt::format("the key {}", nlohmann::json(key).dump()), "");
      continue;
    }
    if (!entry.is_object()) {
      params::add_problem(problems, entry_pointer,
                          "the node's timings, such as {\"ttl\": \"30s\", \"renew_deadline\": "
                          "\"20s\"}",
                          params::json_excerpt(entry), "");
      continue;
    }
    params::ParamReader reader(entry, entry_pointer, node_timing_specs(), problems);
    LeaseConfig node = c;
    read_timings(reader, entry, Expiry::client, "the cluster-wide value", node, problems);
    c.per_node.push_back(
        NodeTimings{*id, node.ttl, node.renew_interval, node.renew_deadline, node.retry_interval});
  }
  std::sort(c.per_node.begin(), c.per_node.end(),
            [](const NodeTimings& a, const NodeTimings& b) { return a.node < b.node; });
}

}  // namespace

std::optional<LeaseConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                       params::Problems& problems, const ReadOptions& options) {
  const std::size_t problems_before = problems.size();
  const bool kubernetes = options.flavor == Flavor::kubernetes;
  // The kubernetes entry is client mode: `expiry` there is a mistake of its own, not an unknown
  // key to find a near name for.
  nlohmann::json without_expiry;
  const nlohmann::json* object = &params;
  if (kubernetes && params.is_object() && params.contains("expiry")) {
    params::add_problem(
        problems, params::child_pointer(pointer, "expiry"),
        "no expiry: the kubernetes protocol is client mode, where followers judge expiry "
        "(the lease protocol offers \"expiry\": \"store\")",
        params::json_excerpt(params.at("expiry")), "");
    without_expiry = params;
    without_expiry.erase("expiry");
    object = &without_expiry;
  }
  params::ParamReader reader(*object, pointer, kubernetes ? kubernetes_specs() : specs(), problems);

  Expiry expiry = Expiry::client;
  if (!kubernetes) expiry = static_cast<Expiry>(reader.choice_index("expiry"));
  LeaseConfig c = default_config(expiry);
  c.fencing = reader.boolean("fencing");
  c.recheck_before_write = reader.boolean("recheck_before_write");

  const std::string origin =
      kubernetes ? "client-go's default" : fmt::format("the default in {} mode", mode_name(expiry));
  read_timings(reader, *object, expiry, origin, c, problems);

  if (reader.has("jitter_factor")) read_ppm(reader, "jitter_factor", problems, c.jitter_ppm);

  c.random_keepalive_phase = reader.choice_index("keepalive_phase") == 1;
  if (const auto cap = reader.timer_opt("backoff_max")) {
    c.backoff_max = *cap;
    if (c.backoff_max < c.retry_interval) {
      reader.problem("backoff_max",
                     fmt::format("at least retry_interval ({}), the first backed-off wait",
                                 sim::format_duration(c.retry_interval)),
                     params::json_excerpt(object->at("backoff_max")));
    }
  }
  {
    read_ppm(reader, "backoff_factor", problems, c.backoff_factor_ppm);
    if (reader.has("backoff_factor") && !reader.has("backoff_max")) {
      reader.problem("backoff_factor",
                     "backoff_factor only beside backoff_max, the cap that turns backoff on",
                     params::json_excerpt(object->at("backoff_factor")));
    }
  }

  if (reader.has("key")) {
    const nlohmann::json& key = object->at("key");
    const std::string text = reader.text("key");
    if (key.is_string() && (text.empty() || text.size() > kKeyLengthMax)) {
      reader.problem("key",
                     fmt::format("a non-empty string of at most {} characters, such as "
                                 "\"/electsim/leader\"",
                                 kKeyLengthMax),
                     params::json_excerpt(key));
    } else if (key.is_string()) {
      c.key = text;
    }
  }

  if (expiry == Expiry::store) {
    c.race_jitter = reader.duration("race_jitter");
    // Nothing in etcd's election corresponds to these: the store judges expiry.
    for (const char* name : {"lease_duration_from", "expiry_judged_by", "per_node"}) {
      if (!reader.has(name)) continue;
      reader.problem(name,
                     fmt::format("no {} with \"expiry\": \"store\" (it applies to client mode, "
                                 "where followers judge expiry)",
                                 name),
                     params::json_excerpt(object->at(name)));
    }
  } else {
    if (!kubernetes && reader.has("race_jitter")) {
      // Client mode's followers poll and never see a deletion as it happens: jitter_factor
      // spreads their polls.
      reader.problem("race_jitter",
                     "no race_jitter in client mode (followers poll the record; jitter_factor "
                     "spreads their polls)",
                     params::json_excerpt(object->at("race_jitter")));
    }
    c.lease_duration_from = static_cast<DurationFrom>(reader.choice_index("lease_duration_from"));
    c.expiry_judged_by = static_cast<ExpiryJudge>(reader.choice_index("expiry_judged_by"));
    // Overrides are checked against the cluster-wide values only once those are right.
    if (reader.has("per_node") && problems.size() == problems_before) {
      read_per_node(object->at("per_node"), reader.pointer_of("per_node"), options.node_count, c,
                    problems);
    }
  }

  if (problems.size() != problems_before) return std::nullopt;
  return c;
}

}  // namespace electsim::protocols::lease
