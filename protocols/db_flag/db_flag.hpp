// The interview's weak answer to leader election: a flag row in a database.
//   UPDATE leader SET holder = $me WHERE holder IS NULL
// The node whose UPDATE changes the row leads; the flag is cleared only on a clean shutdown. There
// is no TTL, no renewal, no fencing token: a crashed holder blocks election forever (until a
// person clears the row: the operator_clear fault), and a slow or paused holder is never noticed.
// The row lives in the database server (servers/postgres).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "protocols/registry.hpp"
#include "protocols/workload.hpp"
#include "sim/protocol.hpp"

namespace electsim::protocols::db_flag {

struct DbFlagConfig {
  sim::Duration retry_interval = std::chrono::seconds(1);
  WorkloadConfig workload;  // the cluster's, copied in by the registry
};

std::span<const params::ParamSpec> db_flag_params();
std::optional<DbFlagConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                        params::Problems& problems);

// The registry entry: name "db-flag".
ProtocolInfo protocol_info();

// The token every write carries: there is none, so writes carry this constant and the sink can
// tell no leader's write from another's. Fencing cannot help.
inline constexpr sim::Token kNoToken = 0;

class DbFlagNode final : public sim::Protocol {
 public:
  explicit DbFlagNode(std::shared_ptr<const DbFlagConfig> config);

  void on_start(sim::Context& ctx) override;
  void on_message(sim::Context& ctx, sim::NodeId from, const sim::Message& message) override;
  void on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_store_reply(sim::Context& /*ctx*/, const sim::StoreReply& /*reply*/) override {}
  void on_watch(sim::Context& /*ctx*/, const sim::WatchEvent& /*event*/) override {}
  void on_sink_reply(sim::Context& /*ctx*/, const sim::SinkReply& /*reply*/) override {}
  void on_db_reply(sim::Context& ctx, const sim::DbReply& reply) override;
  void on_command(sim::Context& ctx, sim::Command command) override;

  bool leads() const { return leads_; }
  const Writer& writer() const { return writer_; }

  static constexpr sim::TimerTag kPollTag = 1;

 private:
  void poll(sim::Context& ctx);

  std::shared_ptr<const DbFlagConfig> config_;
  Writer writer_;
  bool leads_ = false;
  bool stopped_ = false;
  sim::TimerId poll_timer_ = sim::kNoTimer;
};

}  // namespace electsim::protocols::db_flag
