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

namespace electsim::protocols::lease {
namespace {

// A bound on the jitter factor: beyond it retries would be too irregular to reason about.
constexpr double kJitterFactorMax = 10.0;
constexpr std::size_t kKeyLengthMax = 1024;

const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> table = {
      {"ttl",
       ParamType::duration,
       "2s (store) / 15s (client)",
       "duration",
       "how long a claim lasts without renewal (etcd lease TTL / Kubernetes LeaseDuration)",
       {},
       false},
      {"renew_interval",
       ParamType::duration,
       "ttl/3 (store) / 2s (client)",
       "duration",
       "the holder renews (keepalive or record update) this often",
       {},
       false},
      {"renew_deadline",
       ParamType::duration,
       "ttl*2/3 (store) / 10s (client)",
       "duration",
       "the holder stops believing it leads this long after its last confirmed renewal, by its "
       "own clock",
       {},
       false},
      {"retry_interval",
       ParamType::duration,
       "ttl/3 (store) / 2s (client)",
       "duration",
       "followers retry acquiring (store mode) or poll the record (client mode) this often",
       {},
       false},
      {"fencing",
       ParamType::boolean,
       "true",
       "",
       "the sink rejects writes whose token is lower than the highest it accepted",
       {},
       false},
      {"expiry",
       ParamType::choice,
       "store",
       "",
       "store: the store's clock expires a lease (etcd); client: followers judge expiry on their "
       "own clocks (Kubernetes Lease)",
       {"store", "client"},
       false},
      {"recheck_before_write",
       ParamType::boolean,
       "true",
       "",
       "the holder checks its deadline just before committing each write (false: the careless "
       "client); a pause in the workload's send_delay after the check still makes it write late",
       {},
       false},
      {"jitter_factor",
       ParamType::number,
       "0 (store) / 1.2 (client)",
       "factor",
       "a follower waits retry_interval * (1 + u) between tries, u drawn uniformly from "
       "[0, jitter_factor): client-go's wait.Jitter(RetryPeriod, JitterFactor)",
       {},
       false},
      {"keepalive_phase",
       ParamType::choice,
       "grant",
       "",
       "grant: the holder renews every renew_interval from its grant; random: the first renewal "
       "comes after a uniform draw from (0, renew_interval], then every renew_interval, so that "
       "renewals need not lock onto the store's expiry scans",
       {"grant", "random"},
       false},
      {"key",
       ParamType::text,
       "/electsim/leader",
       "key",
       "the store key the holder owns",
       {},
       false},
      {"lease_duration_from",
       ParamType::choice,
       "record",
       "",
       "client mode: record: a follower waits out the lease duration the holder wrote in the "
       "record (client-go since v0.27); own: its own ttl (older client-go, fabric8 before its "
       "fix), so a replica configured shorter takes over from a longer-configured holder",
       {"record", "own"},
       false},
      {"expiry_judged_by",
       ParamType::choice,
       "observed_time",
       "",
       "client mode: observed_time: the duration counts from the moment the follower saw the "
       "record change, on its monotonic clock (client-go); renew_time: from the record's "
       "renewTime, the holder's wall clock, against the follower's wall clock (fabric8), so "
       "skew or a clock step moves the expiry",
       {"observed_time", "renew_time"},
       false},
      {"per_node",
       ParamType::object,
       "none",
       "object",
       "client mode: timings of single nodes, {\"<id>\": {\"ttl\": \"30s\", "
       "\"renew_deadline\": \"20s\", ...}}; ttl, renew_interval, renew_deadline and "
       "retry_interval may be given, each checked like the cluster-wide value; others run with "
       "the cluster-wide values",
       {},
       false},
  };
  return table;
}

// The kubernetes entry's table: the lease table without `expiry` (always client mode), showing
// client-go's defaults and names.
const std::vector<ParamSpec>& kubernetes_specs() {
  static const std::vector<ParamSpec> table = [] {
    struct Shown {
      const char* name;
      const char* default_text;
      const char* meaning;
    };
    static const Shown kClientGo[] = {
        {"ttl", "15s",
         "LeaseDuration: how long followers wait, from seeing the record change, before they "
         "may take it over"},
        {"renew_interval", "2s", "the holder updates the record this often (RetryPeriod)"},
        {"renew_deadline", "10s",
         "RenewDeadline: the holder stops leading this long after its last successful renewal, "
         "by its monotonic clock"},
        {"retry_interval", "2s", "RetryPeriod: followers poll the record this often, jittered"},
        {"jitter_factor", "1.2",
         "JitterFactor: a follower waits retry_interval * (1 + u) between polls, u drawn "
         "uniformly from [0, jitter_factor) (wait.JitterUntil)"},
    };
    std::vector<ParamSpec> out;
    for (const ParamSpec& spec : specs()) {
      if (spec.name == "expiry") continue;
      ParamSpec copy = spec;
      // Always client mode here: the lease table's "client mode: " prefixes say nothing.
      constexpr std::string_view kClientMode = "client mode: ";
      if (copy.meaning.starts_with(kClientMode)) copy.meaning.erase(0, kClientMode.size());
      for (const Shown& shown : kClientGo) {
        if (copy.name != shown.name) continue;
        copy.default_text = shown.default_text;
        copy.meaning = shown.meaning;
      }
      out.push_back(std::move(copy));
    }
    return out;
  }();
  return table;
}

// What a per_node entry may give: the four timings.
const std::vector<ParamSpec>& node_timing_specs() {
  static const std::vector<ParamSpec> table = [] {
    std::vector<ParamSpec> out;
    for (const ParamSpec& spec : specs()) {
      if (spec.name == "ttl" || spec.name == "renew_interval" || spec.name == "renew_deadline" ||
          spec.name == "retry_interval") {
        out.push_back(spec);
      }
    }
    return out;
  }();
  return table;
}

void add_problem(Problems& problems, std::string pointer, std::string expected, std::string found,
                 std::string hint) {
  Problem p;
  p.pointer = std::move(pointer);
  p.expected = std::move(expected);
  p.found = std::move(found);
  p.hint = std::move(hint);
  problems.push_back(std::move(p));
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

std::span<const ParamSpec> lease_params() {
  return specs();
}

std::span<const ParamSpec> kubernetes_params() {
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
void read_timings(ParamReader& reader, const nlohmann::json& object, Expiry expiry,
                  const std::string& origin, LeaseConfig& c, Problems& problems) {
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
    if (reader.has(name)) return json_excerpt(object.at(std::string(name)));
    return fmt::format("{} ({})", sim::format_duration(value), origin);
  };
  const std::string ttl_text = sim::format_duration(c.ttl);
  bool renew_interval_fits = true;
  if (ttl_ok && renew_interval_ok && c.renew_interval >= c.ttl) {
    renew_interval_fits = false;
    add_problem(problems, reader.pointer_of("renew_interval"),
                fmt::format("a duration shorter than ttl ({})", ttl_text),
                shown("renew_interval", c.renew_interval),
                "renew_interval must be shorter than ttl");
  }
  if (ttl_ok && renew_deadline_ok && c.renew_deadline >= c.ttl) {
    add_problem(problems, reader.pointer_of("renew_deadline"),
                fmt::format("a duration shorter than ttl ({})", ttl_text),
                shown("renew_deadline", c.renew_deadline),
                "renew_deadline must be shorter than ttl, or the holder would still believe it "
                "leads after its claim expired");
  } else if (renew_interval_ok && renew_interval_fits && renew_deadline_ok &&
             c.renew_deadline < c.renew_interval) {
    add_problem(problems, reader.pointer_of("renew_deadline"),
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
                   std::size_t node_count, LeaseConfig& c, Problems& problems) {
  if (!per_node.is_object()) {
    add_problem(problems, pointer,
                "an object from node id to timings, such as {\"2\": {\"ttl\": \"30s\"}}",
                json_excerpt(per_node), "");
    return;
  }
  // nlohmann::json keeps object keys sorted: problems come out in a stable order.
  for (const auto& [key, entry] : per_node.items()) {
    const std::string entry_pointer = child_pointer(pointer, key);
    const auto id = parse_node_key(key, node_count);
    if (!id) {
      add_problem(
          problems, entry_pointer,
          fmt::format("a node id written in decimal, below the cluster size ({})", node_count),
          fmt::format("the key {}", nlohmann::json(key).dump()), "");
      continue;
    }
    if (!entry.is_object()) {
      add_problem(problems, entry_pointer,
                  "the node's timings, such as {\"ttl\": \"30s\", \"renew_deadline\": "
                  "\"20s\"}",
                  json_excerpt(entry), "");
      continue;
    }
    ParamReader reader(entry, entry_pointer, node_timing_specs(), problems);
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
                                       Problems& problems, const ReadOptions& options) {
  const std::size_t problems_before = problems.size();
  const bool kubernetes = options.flavor == Flavor::kubernetes;
  // The kubernetes entry is client mode: `expiry` there is a mistake of its own, not an unknown
  // key to find a near name for.
  nlohmann::json without_expiry;
  const nlohmann::json* object = &params;
  if (kubernetes && params.is_object() && params.contains("expiry")) {
    add_problem(problems, child_pointer(pointer, "expiry"),
                "no expiry: the kubernetes protocol is client mode, where followers judge expiry "
                "(the lease protocol offers \"expiry\": \"store\")",
                json_excerpt(params.at("expiry")), "");
    without_expiry = params;
    without_expiry.erase("expiry");
    object = &without_expiry;
  }
  ParamReader reader(*object, pointer, kubernetes ? kubernetes_specs() : specs(), problems);

  Expiry expiry = Expiry::client;
  if (!kubernetes) expiry = reader.choice("expiry") == "client" ? Expiry::client : Expiry::store;
  LeaseConfig c = default_config(expiry);
  c.fencing = reader.boolean("fencing");
  c.recheck_before_write = reader.boolean("recheck_before_write");

  const std::string origin =
      kubernetes ? "client-go's default" : fmt::format("the default in {} mode", mode_name(expiry));
  read_timings(reader, *object, expiry, origin, c, problems);

  if (reader.has("jitter_factor")) {
    const std::size_t before = problems.size();
    const double factor = reader.number("jitter_factor");
    if (problems.size() == before) {
      if (!(factor >= 0.0 && factor <= kJitterFactorMax)) {
        reader.problem("jitter_factor", fmt::format("a number from 0 to {}", kJitterFactorMax),
                       json_excerpt(object->at("jitter_factor")));
      } else {
        c.jitter_ppm = std::llround(factor * static_cast<double>(sim::kPpmOne));
      }
    }
  }

  c.random_keepalive_phase = reader.choice("keepalive_phase") == "random";

  if (reader.has("key")) {
    const nlohmann::json& key = object->at("key");
    const std::string text = reader.text("key");
    if (key.is_string() && (text.empty() || text.size() > kKeyLengthMax)) {
      reader.problem("key",
                     fmt::format("a non-empty string of at most {} characters, such as "
                                 "\"/electsim/leader\"",
                                 kKeyLengthMax),
                     json_excerpt(key));
    } else if (key.is_string()) {
      c.key = text;
    }
  }

  if (expiry == Expiry::store) {
    // Nothing in etcd's election corresponds to these: the store judges expiry.
    for (const char* name : {"lease_duration_from", "expiry_judged_by", "per_node"}) {
      if (!reader.has(name)) continue;
      reader.problem(name,
                     fmt::format("no {} with \"expiry\": \"store\" (it applies to client mode, "
                                 "where followers judge expiry)",
                                 name),
                     json_excerpt(object->at(name)));
    }
  } else {
    c.lease_duration_from =
        reader.choice("lease_duration_from") == "own" ? DurationFrom::own : DurationFrom::record;
    c.expiry_judged_by = reader.choice("expiry_judged_by") == "renew_time"
                             ? ExpiryJudge::renew_time
                             : ExpiryJudge::observed_time;
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
