// Parameters of the lease protocol (protocols/lease/config.hpp). Store mode derives its timings
// from the TTL as etcd's concurrency.Session does (keepalive every TTL/3); client mode uses
// Kubernetes client-go leaderelection's defaults (LeaseDuration 15s, RenewDeadline 10s,
// RetryPeriod 2s, JitterFactor 1.2). Cross-field problems are reported at the dependent field.
#include "protocols/lease/config.hpp"

#include <cmath>
#include <string>
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
  };
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

std::optional<LeaseConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                       Problems& problems) {
  const std::size_t problems_before = problems.size();
  ParamReader reader(params, pointer, specs(), problems);

  const std::string expiry_text = reader.choice("expiry");
  const Expiry expiry = expiry_text == "client" ? Expiry::client : Expiry::store;
  LeaseConfig c = default_config(expiry);
  c.fencing = reader.boolean("fencing");
  c.recheck_before_write = reader.boolean("recheck_before_write");

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

  // "3s", or "2s (the default in client mode)" when the user did not write the field.
  const auto shown = [&](const char* name, sim::Duration value) {
    if (reader.has(name)) return json_excerpt(params.at(std::string(name)));
    return fmt::format("{} (the default in {} mode)", sim::format_duration(value),
                       mode_name(expiry));
  };
  const std::string ttl_text = sim::format_duration(c.ttl);
  // One problem per mistake: a renew_interval already reported against ttl is not compared with
  // renew_deadline too.
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

  if (reader.has("jitter_factor")) {
    const std::size_t before = problems.size();
    const double factor = reader.number("jitter_factor");
    if (problems.size() == before) {
      if (!(factor >= 0.0 && factor <= kJitterFactorMax)) {
        reader.problem("jitter_factor", fmt::format("a number from 0 to {}", kJitterFactorMax),
                       json_excerpt(params.at("jitter_factor")));
      } else {
        c.jitter_ppm = std::llround(factor * static_cast<double>(sim::kPpmOne));
      }
    }
  }

  c.random_keepalive_phase = reader.choice("keepalive_phase") == "random";

  if (reader.has("key")) {
    const nlohmann::json& key = params.at("key");
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

  if (problems.size() != problems_before) return std::nullopt;
  return c;
}

}  // namespace electsim::protocols::lease
