// Tests of what the server registry (servers/registry.hpp) says of each kind: the defaults of its
// settings, as the comparison page prints them, follow the kind's own configuration types and
// readers; and the kinds that answer requests say which, in the traits their servers carry.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "servers/postgres/database.hpp"
#include "servers/redis/redis.hpp"
#include "servers/registry.hpp"
#include "servers/store/store.hpp"
#include "servers/world.hpp"

namespace {

using namespace electsim;

std::string default_of(const char* kind, const char* key) {
  const servers::ServerKindInfo* info = servers::find_server_kind(kind);
  REQUIRE(info != nullptr);
  REQUIRE(info->setting_default);
  return info->setting_default(key);
}

}  // namespace

TEST_CASE("the store's defaults are what its reader leaves when the section is silent") {
  CHECK(default_of("store", "tick_time") == sim::format_duration(servers::StoreConfig{}.tick_time));
  CHECK(default_of("store", "members") == "1");
  // etcd's defaults for a replicated store: --election-timeout 1000ms, --heartbeat-interval
  // 100ms, the lessor's checks every 500ms, etcdctl's --command-timeout 5s.
  CHECK(default_of("store", "election_timeout") == "1s");
  CHECK(default_of("store", "heartbeat_interval") == "100ms");
  CHECK(default_of("store", "expiry_scan_interval") == "0s, 500ms when replicated");
  CHECK(default_of("store", "request_timeout") == "5s");
  CHECK(default_of("store", "lease_revoke_rate") == "1000");  // lessor.go's leaseRevokeRate
  CHECK(default_of("store", "pre_vote") == "true");
  CHECK(default_of("store", "no_such_setting").empty());
  // A choice's default is one of the words the section accepts.
  const std::string phase = default_of("store", "expiry_scan_phase");
  params::Problems problems;
  servers::Services services;
  servers::find_server_kind("store")->read(nlohmann::json{{"expiry_scan_phase", phase}},
                                           servers::SectionContext{}, problems, services);
  CHECK(problems.empty());
  CHECK(services.store.random_scan_phase == servers::StoreConfig{}.random_scan_phase);
}

TEST_CASE("the database's and the Redis masters' defaults follow their configurations") {
  CHECK(servers::PostgresConfig{}.tcp_keepalives_idle.count() == 0);
  CHECK(default_of("postgres", "tcp_keepalives_idle") == "Linux default");
  CHECK(default_of("postgres", "idle_in_transaction_session_timeout") == "disabled");
  CHECK(default_of("redis", "masters") == std::to_string(servers::RedisConfig{}.masters));
  CHECK(default_of("redis", "appendfsync") == "everysec");
  CHECK(default_of("sink", "fencing") == "the protocol's fencing");
  CHECK(default_of("postgres", "masters").empty());
}

TEST_CASE("the kinds that answer requests list their operations in their servers' traits") {
  for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
    INFO(kind.name);
    for (const servers::ServerForm& form : kind.forms) {
      // Exactly the database and the Redis masters take server_request traffic.
      const bool answers = kind.name == "postgres" || kind.name == "redis";
      CHECK(form.traits.requests.empty() == !answers);
    }
  }
  const servers::ServerKindInfo* redis = servers::find_server_kind("redis");
  REQUIRE(redis != nullptr);
  REQUIRE_FALSE(redis->forms.empty());
  CHECK(redis->forms[0].traits.requests == sim::redis_op_names());
  CHECK(redis->forms[0].traits.requests.back() == "incr");
  const servers::ServerKindInfo* postgres = servers::find_server_kind("postgres");
  REQUIRE(postgres != nullptr);
  CHECK(postgres->forms[0].traits.requests.front() == "try_advisory_lock");
}
