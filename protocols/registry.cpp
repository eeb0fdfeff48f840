// The protocol registry (protocols/registry.hpp): one static table in a fixed order, so that
// `electsim list`, the docs and comparisons always show the protocols the same way. Each entry
// comes from its protocol's folder; this file only orders them.
#include "protocols/registry.hpp"

#include <algorithm>

#include "protocols/bully/bully.hpp"
#include "protocols/consul/consul.hpp"
#include "protocols/db_flag/db_flag.hpp"
#include "protocols/lease/lease.hpp"
#include "protocols/postgres/postgres.hpp"
#include "protocols/raft/raft.hpp"
#include "protocols/redlock/redlock.hpp"
#include "protocols/ring/ring.hpp"
#include "protocols/zookeeper/zookeeper.hpp"

namespace electsim::protocols {
namespace {

const std::vector<ProtocolInfo>& table() {
  // Built once, on first use (thread-safe static initialisation): sweeps on threads share it.
  static const std::vector<ProtocolInfo> protocols = {
      bully_protocol_info(),
      ring_protocol_info(),
      raft_protocol_info(),
      lease::protocol_info(),
      lease::kubernetes_protocol_info(),
      postgres::protocol_info(),
      db_flag::protocol_info(),
      redlock::protocol_info(),
      zookeeper::protocol_info(),
      consul::protocol_info(),
  };
  return protocols;
}

}  // namespace

std::string fleet_resource(std::string_view base, std::string_view service) {
  std::string out(base);
  if (!out.empty() && out.back() == '/') {
    out.append(service);
    out.push_back('/');
  } else {
    out.push_back('/');
    out.append(service);
  }
  return out;
}

std::string knob_duration(sim::Duration d) {
  return sim::format_duration(d);
}

std::span<const ProtocolInfo> all_protocols() {
  return table();
}

const ProtocolInfo* find_protocol(std::string_view name) {
  const auto& protocols = table();
  const auto it = std::find_if(protocols.begin(), protocols.end(),
                               [&](const ProtocolInfo& p) { return p.name == name; });
  return it == protocols.end() ? nullptr : &*it;
}

std::vector<std::string> protocol_names() {
  std::vector<std::string> names;
  for (const ProtocolInfo& p : table()) names.push_back(p.name);
  return names;
}

std::string protocol_params_markdown() {
  std::string out;
  for (const ProtocolInfo& p : table()) {
    out += "Parameters of `" + p.name + "`:\n\n" + params::param_table_markdown(p.params) + "\n";
  }
  return out;
}

}  // namespace electsim::protocols
