// The scenario loader (runner/loader_detail.hpp): which protocol runs, with which parameters
// (`protocol`, `protocols`), and the bounds per protocol (`expect_by_protocol`).
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runner/loader_detail.hpp"

namespace electsim::runner::detail {

namespace {
std::string protocol_name_expected(const std::vector<std::string>& names) {
  return "the name of a protocol: one of " + joined(names, true);
}
}  // namespace

// Which protocol runs, with which parameters: the file's `protocol`, or the one LoadOptions names,
// whose parameters come from `protocols.<name>`. Every entry of `protocols` is validated even when
// another protocol runs, so a file is either valid for `compare` or says why not.
void Loader::read_protocol_choice(const json& document, Scenario& s) {
  const json* section = get(document, "protocols");
  const json* own = get(document, "protocol");
  const std::vector<std::string> names = protocols::protocol_names();
  // The protocol that runs: --protocol, else the one the file's `protocol` names.
  std::optional<std::string> running = options_.protocol;
  if (!running && own != nullptr && own->is_object() && own->contains("name") &&
      own->at("name").is_string()) {
    running = own->at("name").get<std::string>();
  }
  const json* entry = nullptr;  // protocols.<running>, when the file has it
  if (section != nullptr) {
    if (!section->is_object()) {
      problem("/protocols",
              "an object from protocol name to its parameters, such as "
              "{\"raft\": {\"election_timeout_min\": \"150ms\"}}",
              json_excerpt(*section));
    } else {
      for (const auto& [name, params] : section->items()) {
        const std::string pointer = child("/protocols", name);
        const protocols::ProtocolInfo* info = protocols::find_protocol(name);
        if (info == nullptr) {
          problem(pointer, protocol_name_expected(names), json_quoted(name),
                  did_you_mean(name, names));
          continue;
        }
        if (!params.is_object()) {
          problem(pointer, "an object of " + name + " parameters", json_excerpt(params));
          continue;
        }
        if (params.contains("name")) {
          problem(child(pointer, "name"), "parameters only (the key names the protocol)",
                  json_excerpt(params.at("name")));
          continue;
        }
        if (running && *running == name) {
          entry = &params;  // validated below, together with `protocol` when it names it too
        } else if (cluster_size_) {
          Scenario scratch;
          read_protocol_at(params, name, pointer, s.workload, scratch);
        }
      }
    }
  }
  if (!options_.protocol) {
    if (entry == nullptr) {
      read_protocol(own, s.workload, s);
      return;
    }
  } else if (protocols::find_protocol(*options_.protocol) == nullptr) {
    problem("", "a protocol to run: one of " + joined(names, true), json_quoted(*options_.protocol),
            did_you_mean(*options_.protocol, names));
    return;
  }
  // The running protocol's parameters: the `protocol` object when it names it, and
  // protocols.<name> on top. A key both give differently is an error, so that no value a user
  // wrote (or --set) is silently ignored.
  json params = json::object();
  std::string pointer = entry != nullptr ? child("/protocols", *running) : "/protocol";
  std::set<std::string> from_entry;
  if (own != nullptr && own->is_object() && own->contains("name") && own->at("name") == *running) {
    params = *own;
    params.erase("name");
    pointer = "/protocol";
  }
  if (entry != nullptr) {
    for (const auto& [key, value] : entry->items()) {
      if (params.contains(key) && params[key] != value) {
        problem(child(child("/protocols", *running), key),
                fmt::format("the value /protocol/{} gives, or no {} here: the parameter is given "
                            "twice for protocol {}",
                            key, json_quoted(key), *running),
                json_excerpt(value));
        continue;
      }
      params[key] = value;
      from_entry.insert(key);
    }
  }
  const std::size_t before = problems_.size();
  read_protocol_at(params, *running, pointer, s.workload, s);
  // A problem in a key that came from protocols.<name> is reported where the user wrote it.
  for (std::size_t i = before; i < problems_.size(); ++i) {
    std::string& where = problems_[i].pointer;
    for (const std::string& key : from_entry) {
      const std::string from = child(pointer, key);
      if (pointer != child("/protocols", *running) &&
          (where == from || starts_with(where, from + "/"))) {
        where = child(child("/protocols", *running), key) + where.substr(from.size());
      }
    }
  }
}

void Loader::read_expect_by_protocol(const json& v, Scenario& s) {
  const std::vector<std::string> names = protocols::protocol_names();
  if (!v.is_object()) {
    problem("/expect_by_protocol", "an object from protocol name to an expect block",
            json_excerpt(v));
    return;
  }
  for (const auto& [name, block] : v.items()) {
    const std::string pointer = child("/expect_by_protocol", name);
    if (protocols::find_protocol(name) == nullptr) {
      problem(pointer, protocol_name_expected(names), json_quoted(name), did_you_mean(name, names));
      continue;
    }
    std::vector<analysis::Expectation> extra = read_expect(block, pointer);
    if (name != s.protocol) continue;
    s.protocol_expect = extra;
    // A protocol's own bound on a metric replaces the common one.
    for (analysis::Expectation& e : extra) {
      std::erase_if(s.expect, [&](const analysis::Expectation& x) { return x.metric == e.metric; });
      s.expect.push_back(std::move(e));
    }
  }
}

void Loader::read_protocol(const json* v, const protocols::WorkloadConfig& workload, Scenario& s) {
  if (v == nullptr) {
    problem("/protocol", "a protocol object such as {\"name\": \"lease\"}", kRequired);
    return;
  }
  if (!v->is_object()) {
    problem("/protocol", "a protocol object such as {\"name\": \"lease\"}", json_excerpt(*v));
    return;
  }
  const json* name = get(*v, "name");
  if (name == nullptr) {
    problem("/protocol/name", protocol_name_expected(protocols::protocol_names()), kRequired);
    return;
  }
  const protocols::ProtocolInfo* info = read_protocol_name(*name, "/protocol/name");
  if (info == nullptr) return;
  json params = *v;
  params.erase("name");
  read_protocol_at(params, info->name, "/protocol", workload, s);
}

const protocols::ProtocolInfo* Loader::read_protocol_name(const json& name,
                                                          const std::string& pointer) {
  const protocols::ProtocolInfo* info =
      name.is_string() ? protocols::find_protocol(name.get_ref<const std::string&>()) : nullptr;
  if (info == nullptr) {
    const std::vector<std::string> names = protocols::protocol_names();
    problem(
        pointer, protocol_name_expected(names), json_excerpt(name),
        name.is_string() ? did_you_mean(name.get_ref<const std::string&>(), names) : std::string());
  }
  return info;
}

void Loader::read_protocol_at(const json& params, const std::string& name,
                              const std::string& pointer, const protocols::WorkloadConfig& workload,
                              Scenario& s) {
  const protocols::ProtocolInfo* info = protocols::find_protocol(name);
  s.protocol = info->name;
  s.protocol_params = params;
  // The protocol checks its parameters against the cluster's size; without a size at all (already
  // reported) its verdict would be noise.
  if (!cluster_size_) return;
  const std::size_t before = problems_.size();
  // How many servers of each kind it needs the world will hold (its section's count, or the
  // kind's default when the file gives none).
  protocols::ClusterInfo cluster{*cluster_size_, workload};
  for (const std::string& name : info->servers) {
    const servers::ServerKindInfo* kind = servers::find_server_kind(name);
    if (kind == nullptr) continue;
    servers::Services world = s.services;
    servers::require_servers(world, name);
    cluster.servers.emplace_back(name, servers::count_of(*kind, world));
  }
  try {
    auto prepared = info->prepare(s.protocol_params, pointer, cluster, problems_);
    if (prepared) {
      s.prepared = std::move(*prepared);
    } else if (problems_.size() == before) {
      problem(pointer, "parameters the " + info->name + " protocol accepts",
              "a refusal without a reason");
    }
  } catch (const std::exception& e) {
    problem(pointer, "parameters the " + info->name + " protocol accepts",
            std::string("an error: ") + e.what());
  }
}

}  // namespace electsim::runner::detail
