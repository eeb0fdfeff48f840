// The scenario loader (runner/loader_detail.hpp): `faults` and `random_faults`.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runner/loader_detail.hpp"
#include "servers/registry.hpp"

namespace electsim::runner::detail {

namespace {

using Need = sim::FaultNeed;

// What a fault of `kind` takes, from the fault catalogue (sim/fault.hpp).
struct FaultShape {
  Need target = Need::no;
  bool store_target = false;  // clock faults may target the store's clock
  Need duration = Need::no;
  std::vector<std::string> keys;  // kind-specific keys, each required
};

FaultShape shape_of(sim::FaultKind kind) {
  const sim::FaultKindInfo& info = sim::fault_info(kind);
  FaultShape shape{info.target, info.store_target, info.duration, {}};
  for (const char* key : info.keys) {
    if (key != nullptr) shape.keys.emplace_back(key);
  }
  return shape;
}

// "\"a\", \"b\" or \"c\"".
std::string quoted_or(std::vector<std::string> names) {
  for (std::string& name : names) name = json_quoted(name);
  return or_list(names);
}

// The registered kinds besides the store whose servers keep a record a person can clear, for a
// world that has none of them: "\"postgres\" where the world has one: <the kind's hint>".
std::string absent_keepers() {
  std::vector<std::string> parts;
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    if (kind.name == sim::server_kind::store) continue;
    const bool keeps = std::any_of(kind.forms.begin(), kind.forms.end(), [](const auto& form) {
      return (form.traits.faults & sim::fault_bit(sim::FaultKind::operator_clear)) != 0;
    });
    if (!keeps) continue;
    std::string part = json_quoted(kind.name) + " where the world has one";
    if (!kind.absent_hint.empty()) part += ": " + kind.absent_hint;
    parts.push_back(std::move(part));
  }
  return parts.empty() ? "no other kind keeps one" : fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<std::string> fault_kind_names() {
  std::vector<std::string> names;
  for (int k = 0; k < sim::kFaultKindCount; ++k) {
    names.emplace_back(sim::fault_kind_name(static_cast<sim::FaultKind>(k)));
  }
  return names;
}

// What a fault of `kind` acts on, as messages say it: "an election node", then the forms of
// every registered server kind that take it, joined ("an election node or a store member").
std::string targets_text(sim::FaultKind kind) {
  std::vector<std::string> nouns;
  if (sim::fault_info(kind).nodes_obey) nouns.emplace_back("an election node");
  for (std::string& noun : servers::nouns_taking(kind)) nouns.push_back(std::move(noun));
  if (nouns.empty()) return "no target";
  std::string out;
  for (std::size_t i = 0; i < nouns.size(); ++i) {
    if (i > 0) out += i + 1 == nouns.size() ? " or " : ", ";
    out += nouns[i];
  }
  return out;
}

}  // namespace

// What a target is, as messages say it: "an election node", "a store member", "the database".
std::string Loader::target_noun(const sim::Target& target) const {
  switch (target.kind) {
    case sim::TargetKind::none:
      return "no target";
    case sim::TargetKind::leader:
    case sim::TargetKind::follower:
    case sim::TargetKind::random:
    case sim::TargetKind::service_leader:
    case sim::TargetKind::service_follower:
      return "an election node";
    case sim::TargetKind::store:
      return servers::server_noun(topology_, topology_.store_member(0));
    case sim::TargetKind::group_leader:
    case sim::TargetKind::group_follower:
      return servers::server_noun(topology_, topology_.group_member(target.group, 0));
    case sim::TargetKind::node:
      return target.node >= 0 ? "an election node" : servers::server_noun(topology_, target.node);
  }
  return "no target";
}

// A store pause's target: none (the world's one store), "store", or a shard's server of a sharded
// store ("store-2", or a replicated shard's member "store-2:0"), which a sharded store requires.
void Loader::read_paused_shard(const json& v, const std::string& pointer, sim::FaultSpec& fault) {
  const std::vector<std::string> shards = topology_.store_shards();
  const std::string members =
      store_members_ > 1 ? fmt::format(" (or one of its members, \"{}:0\" to \"{}:{}\")",
                                       shards.empty() ? "" : shards.back(),
                                       shards.empty() ? "" : shards.back(), store_members_ - 1)
                         : "";
  const std::string expected = shards.empty()
                                   ? std::string("\"store\" (the world's one store), or no target")
                                   : fmt::format("the shard that stalls: \"{}\" to \"{}\"{}",
                                                 shards.front(), shards.back(), members);
  const json* target = get(v, "target");
  if (target == nullptr) {
    if (!shards.empty()) {
      problem(child(pointer, "target"), expected,
              "nothing (a sharded store has no one store to stall)");
    }
    return;
  }
  const std::string text = target->is_string() ? target->get<std::string>() : std::string();
  if (shards.empty() && text == "store") return;
  std::optional<sim::Endpoint> server = topology_.find(text);
  if (!server && store_members_ > 1 &&
      std::find(shards.begin(), shards.end(), text) != shards.end()) {
    server = topology_.find(text + ":0");  // a replicated shard stalls at its first member
  }
  if (!shards.empty() && server && *server < 0 &&
      topology_.kind_of(*server) == sim::server_kind::store) {
    fault.target = sim::Target{sim::TargetKind::node, *server, {}};
    return;
  }
  problem(child(pointer, "target"), expected, json_excerpt(*target));
}

// A fault of `faults`, or with `generator` the fault part of a `random_faults` entry: the same keys
// and messages, except that `at` is replaced by the generator's keys (read by the caller) and
// `duration` may be a distribution, stored in the generator.
std::optional<sim::FaultSpec> Loader::read_fault(const json& v, const std::string& pointer,
                                                 RandomFault* generator) {
  if (!v.is_object()) {
    problem(pointer,
            "a fault object such as {\"at\": \"5s\", \"kind\": \"crash\", \"target\": "
            "\"leader\"}",
            json_excerpt(v));
    return std::nullopt;
  }
  const std::size_t before = problems_.size();
  const std::vector<std::string> kinds = fault_kind_names();
  const json* kind_value = get(v, "kind");
  if (kind_value == nullptr) {
    problem(child(pointer, "kind"), "one of the fault kinds " + joined(kinds, true), kRequired);
    return std::nullopt;
  }
  std::optional<sim::FaultKind> kind;
  if (kind_value->is_string()) {
    for (int k = 0; k < sim::kFaultKindCount; ++k) {
      if (*kind_value == kinds[static_cast<std::size_t>(k)]) kind = static_cast<sim::FaultKind>(k);
    }
  }
  if (!kind) {
    problem(child(pointer, "kind"), "one of the fault kinds " + joined(kinds, true),
            json_excerpt(*kind_value),
            kind_value->is_string() ? did_you_mean(kind_value->get_ref<const std::string&>(), kinds)
                                    : std::string());
    return std::nullopt;
  }
  const FaultShape shape = shape_of(*kind);
  std::vector<std::string> keys = {"at", "kind"};
  if (generator != nullptr) keys = {"kind", "every", "from", "until", "max"};
  // A store pause stalls the world's store, or in a sharded store the shard its target names.
  const bool shard_pause = *kind == sim::FaultKind::store_pause && generator == nullptr;
  if (shape.target != Need::no || shard_pause) keys.emplace_back("target");
  if (shape.duration != Need::no) keys.emplace_back("duration");
  keys.insert(keys.end(), shape.keys.begin(), shape.keys.end());
  const std::string kind_name = sim::fault_kind_name(*kind);
  if (generator == nullptr) {
    check_object(v, pointer, keys, "a " + json_quoted(kind_name) + " fault");
  } else {
    // `at` gets a message of its own below rather than "unknown key".
    json without_at = v;
    without_at.erase("at");
    check_object(without_at, pointer, keys, "a " + json_quoted(kind_name) + " random fault");
  }

  sim::FaultSpec fault;
  fault.kind = *kind;
  auto required = [&](const char* key, const std::string& expected) -> const json* {
    const json* field = get(v, key);
    if (field == nullptr) {
      problem(
          child(pointer, key), expected,
          fmt::format("nothing (a {} fault needs {})", json_quoted(kind_name), json_quoted(key)));
    }
    return field;
  };

  if (generator != nullptr) {
    if (const json* at = get(v, "at")) {
      problem(child(pointer, "at"), "no \"at\" (random faults draw their times from \"every\")",
              json_excerpt(*at));
    }
  } else if (const json* at = required("at", "when the fault happens, such as \"5s\"")) {
    if (auto t = read_time(*at, child(pointer, "at"))) fault.at = *t;
  }
  if (shape.target == Need::required) {
    // The servers that keep a leadership record: the world's other keepers, then the store.
    std::string keepers_text;
    if (*kind == sim::FaultKind::operator_clear) {
      std::vector<std::string> keepers = record_keepers_;
      keepers.emplace_back("store");
      keepers_text = quoted_or(std::move(keepers));
    }
    const std::string expected_target =
        *kind == sim::FaultKind::operator_clear
            ? keepers_text + " (the server that keeps the leadership record)"
            : node_expected() + " or \"leader\", \"follower\", \"random\"";
    if (const json* target = required("target", expected_target)) {
      if (auto t = read_target(*target, child(pointer, "target"), shape.store_target)) {
        fault.target = *t;
        // A person clears a record that a server keeps: the database's flag row and locks, or
        // the single store's leader key.
        const bool on_keeper = t->kind == sim::TargetKind::node && t->node < 0 &&
                               std::find(record_keepers_.begin(), record_keepers_.end(),
                                         topology_.name_of(t->node)) != record_keepers_.end();
        const bool on_store = t->kind == sim::TargetKind::store && store_members_ <= 1;
        if (*kind != sim::FaultKind::operator_clear && !sim::obeys(*kind, *t, topology_)) {
          // A target outside the kind's set would silently do nothing (sim/fault.hpp).
          problem(child(pointer, "target"),
                  fmt::format("a target that a {} fault acts on: {}", json_quoted(kind_name),
                              targets_text(*kind)),
                  fmt::format("{}, {}, on which {} does nothing", json_excerpt(*target),
                              target_noun(*t), kind_name));
        } else if (*kind == sim::FaultKind::operator_clear && on_store && !store_keeps_record_) {
          problem(child(pointer, "target"),
                  "a server that keeps a leadership record to clear: \"store\" with a protocol "
                  "that keeps a leader key in it" +
                      (record_keepers_.empty() ? "" : ", or " + quoted_or(record_keepers_)),
                  fmt::format("{}, where this scenario's protocol keeps no key",
                              json_excerpt(*target)));
        } else if (*kind == sim::FaultKind::operator_clear && !on_keeper && !on_store) {
          problem(child(pointer, "target"),
                  record_keepers_.empty()
                      ? "\"store\" (the server that keeps the leadership record; " +
                            absent_keepers() + ")"
                      : keepers_text + " (the server that keeps the leadership record)",
                  json_excerpt(*target),
                  store_members_ > 1 && t->kind == sim::TargetKind::store
                      ? "operator_clear acts on a single store only"
                      : "");
        }
      }
    }
  }
  if (shard_pause) read_paused_shard(v, pointer, fault);
  if (shape.duration != Need::no) {
    const json* duration = shape.duration == Need::required
                               ? required("duration", "how long it lasts, such as \"6s\"")
                               : get(v, "duration");
    if (duration != nullptr && generator != nullptr && duration->is_object()) {
      // Each generated fault draws its own duration.
      generator->duration =
          params::read_distribution(*duration, child(pointer, "duration"), problems_);
    } else if (duration != nullptr) {
      if (auto d = read_positive_duration(*duration, child(pointer, "duration"))) {
        fault.duration = *d;
      }
    }
  }
  for (const std::string& key : shape.keys) {
    const std::string key_pointer = child(pointer, key);
    if (key == "groups") {
      const json* groups = required("groups", "an array of at least two groups of endpoints");
      if (groups == nullptr) continue;
      if (!groups->is_array() || groups->size() < 2) {
        problem(key_pointer,
                "an array of at least two groups, each an array of node ids, \"store\", "
                "\"sink\", \"leader\", \"follower\" or \"rest\", such as "
                "[[\"leader\", \"follower\"], [\"rest\", \"store\"]]",
                json_excerpt(*groups));
        continue;
      }
      std::set<sim::Endpoint> seen;
      for (std::size_t g = 0; g < groups->size(); ++g) {
        const json& group = (*groups)[g];
        const std::string group_pointer = child(key_pointer, g);
        if (!group.is_array() || group.empty()) {
          problem(group_pointer, "a non-empty array of node ids, \"store\" or \"sink\"",
                  json_excerpt(group));
          continue;
        }
        std::vector<sim::Endpoint> members;
        for (std::size_t i = 0; i < group.size(); ++i) {
          // Role members, resolved when the fault fires: "leader" and "rest" at most once in the
          // whole fault, "follower" as often as wanted (a different follower each time).
          if (group[i].is_string()) {
            const auto& text = group[i].get_ref<const std::string&>();
            const sim::Endpoint role = text == "leader"     ? sim::kLeaderMember
                                       : text == "follower" ? sim::kFollowerMember
                                       : text == "rest"     ? sim::kRestMember
                                                            : sim::kNoNode;
            if (role != sim::kNoNode && services_ > 0) {
              problem(child(group_pointer, i),
                      "node ids or servers: in a fleet a role names no one node (each service "
                      "has its own leader)",
                      json_excerpt(group[i]));
              continue;
            }
            if (role != sim::kNoNode) {
              if (role != sim::kFollowerMember && !seen.insert(role).second) {
                problem(child(group_pointer, i), "each endpoint in at most one group",
                        json_excerpt(group[i]) + " again");
                continue;
              }
              members.push_back(role);
              continue;
            }
          }
          const auto e = read_endpoint(group[i], child(group_pointer, i));
          if (!e) continue;
          if (!seen.insert(*e).second) {
            problem(child(group_pointer, i), "each endpoint in at most one group",
                    json_excerpt(group[i]) + " again");
            continue;
          }
          members.push_back(*e);
        }
        fault.groups.push_back(std::move(members));
      }
    } else if (key == "from" || key == "to") {
      const json* end = required(key.c_str(), node_expected() + ", \"store\" or \"sink\"");
      if (end == nullptr) continue;
      if (auto e = read_endpoint(*end, key_pointer)) (key == "from" ? fault.from : fault.to) = *e;
    } else if (key == "probability") {
      const json* p = required("probability", "a probability from 0 to 1, such as 0.2");
      if (p == nullptr) continue;
      if (auto ppm = params::read_probability(*p, key_pointer, problems_)) {
        fault.probability = *ppm;
      }
    } else if (key == "extra") {
      const json* extra = required("extra", "the extra latency, a duration or a distribution");
      if (extra == nullptr) continue;
      if (auto d = params::read_distribution(*extra, key_pointer, problems_)) {
        fault.extra_latency = *d;
      }
    } else if (key == "offset" || key == "by") {
      const json* amount =
          required(key.c_str(), "a duration that may be negative, such as \"-500ms\"");
      if (amount == nullptr) continue;
      if (auto d = params::read_duration(*amount, key_pointer, problems_, true)) {
        fault.clock_amount = *d;
      }
    } else if (key == "drift_ppm") {
      const json* drift = required("drift_ppm", "a drift in ppm, such as 50");
      if (drift == nullptr) continue;
      if (auto ppb = read_drift_ppb(*drift, key_pointer)) fault.drift_ppb = *ppb;
    }
  }
  if (*kind == sim::FaultKind::cut && problems_.size() == before && fault.from == fault.to) {
    problem(child(pointer, "to"), "an endpoint other than \"from\"", json_excerpt(v.at("to")));
  }
  if (problems_.size() != before) return std::nullopt;
  return fault;
}

std::vector<sim::FaultSpec> Loader::read_faults(const json& v) {
  std::vector<sim::FaultSpec> faults;
  if (!v.is_array()) {
    problem("/faults", "an array of faults", json_excerpt(v));
    return faults;
  }
  const std::size_t limit = options_.limits.max_faults;
  if (v.size() > limit) {
    problem("/faults", fmt::format("at most {} faults (the limit on faults)", limit),
            fmt::format("{} faults", v.size()));
    return faults;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pointer = child("/faults", i);
    if (std::optional<std::vector<json>> many = fleet_faults(v[i], pointer)) {
      if (faults.size() + many->size() > limit) {
        problem(pointer,
                fmt::format("at most {} faults in all (the limit on faults), counting each "
                            "node or service a fleet's fault stands for",
                            limit),
                fmt::format("{} more", many->size()));
        return faults;
      }
      for (const json& one : *many) {
        // Each stands for the file's fault: a problem in it is the file's, said once.
        const std::size_t before = problems_.size();
        if (auto fault = read_fault(one, pointer)) faults.push_back(std::move(*fault));
        if (problems_.size() != before) break;
      }
      continue;
    }
    if (auto fault = read_fault(v[i], pointer)) faults.push_back(std::move(*fault));
  }
  return faults;
}

std::optional<std::vector<json>> Loader::fleet_faults(const json& v, const std::string& pointer) {
  if (services_ == 0 || !v.is_object()) return std::nullopt;
  const json* share = get(v, "services");
  const json* target = get(v, "target");
  const std::string text =
      target != nullptr && target->is_string() ? target->get<std::string>() : std::string();
  // One whole service: "svc-K" without a role.
  std::optional<std::size_t> whole;
  if (share == nullptr && text.starts_with("svc-") && text.find(':') == std::string::npos) {
    whole = service_index(text);
    if (!whole) {
      problem(child(pointer, "target"),
              fmt::format("a service, \"svc-K\" with K from 0 to {}, or one of its roles "
                          "(\"svc-K:leader\", \"svc-K:follower\")",
                          services_ - 1),
              json_excerpt(*target));
      return std::vector<json>{};
    }
  }
  if (share == nullptr && !whole) return std::nullopt;
  std::vector<std::size_t> chosen;
  std::string role = "service";
  if (whole) {
    chosen.push_back(*whole);
  } else {
    if (!share->is_number() || !(share->get<double>() > 0.0) || share->get<double>() > 1.0) {
      problem(child(pointer, "services"),
              "the share of the fleet's services the fault strikes, a number above 0 and at most "
              "1",
              json_excerpt(*share));
      return std::vector<json>{};
    }
    if (text != "leader" && text != "follower" && text != "service") {
      problem(child(pointer, "target"),
              "with \"services\", the role it strikes in each: \"leader\", \"follower\" or "
              "\"service\" (every node of the service)",
              target == nullptr ? std::string(kRequired) : json_excerpt(*target));
      return std::vector<json>{};
    }
    role = text;
    // ceil(share x count) services, spread evenly: services floor(i x count / n).
    const double exact = share->get<double>() * static_cast<double>(services_);
    const auto n =
        std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(exact - 1e-9)), 1, services_);
    for (std::size_t i = 0; i < n; ++i) chosen.push_back(i * services_ / n);
  }
  std::vector<json> out;
  json base = v;
  base.erase("services");
  for (const std::size_t k : chosen) {
    if (role == "service") {
      const std::size_t first = first_node_of(k);
      for (std::size_t r = 0; r < class_of(k).replicas; ++r) {
        json one = base;
        one["target"] = first + r;
        out.push_back(std::move(one));
      }
    } else {
      json one = base;
      one["target"] = service_name(k) + ":" + role;
      out.push_back(std::move(one));
    }
  }
  return out;
}

std::optional<RandomFault> Loader::read_random_fault(const json& v, const std::string& pointer) {
  if (!v.is_object()) {
    problem(pointer,
            "a random fault object such as {\"every\": {\"dist\": \"exponential\", \"mean\": "
            "\"20s\"}, \"kind\": \"pause\", \"target\": \"leader\", \"duration\": \"2s\"}",
            json_excerpt(v));
    return std::nullopt;
  }
  const std::size_t before = problems_.size();
  RandomFault out;
  if (auto fault = read_fault(v, pointer, &out)) out.fault = std::move(*fault);

  if (const json* every = get(v, "every")) {
    if (auto d = params::read_distribution(*every, child(pointer, "every"), problems_)) {
      out.every = *d;
    }
  } else {
    problem(child(pointer, "every"),
            "the time between faults, a duration or a distribution such as {\"dist\": "
            "\"exponential\", \"mean\": \"20s\"}",
            kRequired);
  }
  bool from_ok = true;
  if (const json* from = get(v, "from")) {
    const auto t = read_time(*from, child(pointer, "from"));
    if (t) out.from = *t;
    from_ok = t.has_value();
  }
  if (duration_) out.until = sim::Time(*duration_);
  if (const json* until = get(v, "until")) {
    const std::string until_pointer = child(pointer, "until");
    if (auto d = params::read_duration(*until, until_pointer, problems_)) {
      if (duration_ && *d > *duration_) {
        problem(until_pointer,
                fmt::format("a time no later than the end of the run ({})",
                            sim::format_duration(*duration_)),
                json_excerpt(*until));
      } else if (from_ok && *d <= out.from.since_start()) {
        problem(
            until_pointer,
            fmt::format("a time after \"from\" ({})", sim::format_duration(out.from.since_start())),
            json_excerpt(*until));
      } else {
        out.until = sim::Time(*d);
      }
    }
  }
  if (const json* max = get(v, "max")) {
    const std::size_t limit = options_.limits.max_faults;
    const auto n = as_unsigned(*max);
    if (!n || *n < 1 || *n > limit) {
      problem(child(pointer, "max"),
              fmt::format("a whole number of faults from 1 to {} (the limit on faults)", limit),
              json_excerpt(*max));
    } else {
      out.max = static_cast<std::size_t>(*n);
    }
  }
  if (problems_.size() != before) return std::nullopt;
  return out;
}

// `fixed` is the file's `faults`, if any: its faults and every generator's `max` share the limit
// on faults, so a run never holds more than the limit whatever it draws.
std::vector<RandomFault> Loader::read_random_faults(const json& v, const json* fixed) {
  std::vector<RandomFault> generators;
  if (!v.is_array()) {
    problem("/random_faults", "an array of random faults", json_excerpt(v));
    return generators;
  }
  const std::size_t limit = options_.limits.max_faults;
  if (v.size() > limit) {
    problem("/random_faults", fmt::format("at most {} random faults (the limit on faults)", limit),
            fmt::format("{} random faults", v.size()));
    return generators;
  }
  const std::uint64_t fixed_count = fixed != nullptr && fixed->is_array() ? fixed->size() : 0;
  std::uint64_t max_sum = 0;  // at most limit * limit: no overflow
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto g = read_random_fault(v[i], child("/random_faults", i))) {
      max_sum += g->max;
      generators.push_back(std::move(*g));
    }
  }
  if (fixed_count + max_sum > limit) {
    problem("/random_faults",
            fmt::format("at most {} faults (the limit on faults), counting every generator's "
                        "\"max\" (1000 when not given) and the fixed faults",
                        limit),
            fmt::format("{} ({} fixed, {} from the generators' \"max\")", fixed_count + max_sum,
                        fixed_count, max_sum));
  }
  return generators;
}

}  // namespace electsim::runner::detail
