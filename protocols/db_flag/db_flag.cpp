// The db-flag protocol: see protocols/db_flag/db_flag.hpp.
#include "protocols/db_flag/db_flag.hpp"

#include <utility>
#include <vector>

#include "sim/assert.hpp"

namespace electsim::protocols::db_flag {
namespace {

const std::vector<params::ParamSpec>& specs() {
  static const std::vector<params::ParamSpec> table = [] {
    const DbFlagConfig d;
    return std::vector<params::ParamSpec>{
        {.name = "retry_interval",
         .default_value = d.retry_interval,
         .min = params::kShortestTimer,
         .meaning = "followers run the UPDATE this often while the flag is set"},
    };
  }();
  return table;
}

}  // namespace

std::span<const params::ParamSpec> db_flag_params() {
  return specs();
}

std::optional<DbFlagConfig> read_config(const nlohmann::json& params, const std::string& pointer,
                                        params::Problems& problems) {
  const std::size_t before = problems.size();
  params::ParamReader reader(params, pointer, specs(), problems);
  DbFlagConfig c;
  if (auto retry = reader.timer("retry_interval")) c.retry_interval = *retry;
  if (problems.size() != before) return std::nullopt;
  return c;
}

DbFlagNode::DbFlagNode(std::shared_ptr<const DbFlagConfig> config)
    : config_(std::move(config)), writer_(config_->workload) {}

void DbFlagNode::on_start(sim::Context& ctx) {
  ctx.announce(sim::Belief::follower(sim::kNoNode, 0));
  poll(ctx);
}

void DbFlagNode::on_message(sim::Context& /*ctx*/, sim::NodeId /*from*/,
                            const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "db-flag nodes talk only to the database");
}

void DbFlagNode::poll(sim::Context& ctx) {
  sim::DbRequest request;
  request.op = sim::DbOp::set_flag;
  ctx.db(request);
  poll_timer_ = ctx.set_timer(config_->retry_interval, kPollTag);
}

void DbFlagNode::on_timer(sim::Context& ctx, sim::TimerId id, sim::TimerTag tag) {
  if (writer_.on_timer(ctx, id, tag, [this](sim::Token) { return leads_; })) return;
  if (tag != kPollTag || id != poll_timer_) return;
  poll_timer_ = sim::kNoTimer;
  // The holder never looks again: nothing in this design can tell it that it lost the flag.
  if (leads_ || stopped_) return;
  poll(ctx);
}

void DbFlagNode::on_db_reply(sim::Context& ctx, const sim::DbReply& reply) {
  if (reply.op != sim::DbOp::set_flag || leads_ || stopped_) return;
  if (reply.ok) {
    // One row updated: this node leads. Epoch 0: the design has no epoch, so two tenures are
    // indistinguishable (the checkers report them as same-epoch leaders).
    leads_ = true;
    ctx.announce(sim::Belief::leader(0));
    writer_.start(ctx, kNoToken);
    return;
  }
  // No row updated: someone holds the flag. Taken literally, that includes this node's own
  // earlier life, whose flag its restart cannot take back.
  const auto holder = static_cast<sim::NodeId>(reply.token);
  ctx.announce(sim::Belief::follower(holder == ctx.self() ? sim::kNoNode : holder, 0));
}

void DbFlagNode::on_command(sim::Context& ctx, sim::Command command) {
  if (stopped_) return;
  if (leads_) {
    // The clean shutdown that is the design's only way to clear the flag.
    sim::DbRequest request;
    request.op = sim::DbOp::clear_flag;
    ctx.db(request);
    leads_ = false;
    writer_.stop(ctx);
    ctx.announce(sim::Belief::follower(sim::kNoNode, 0));
  }
  if (command == sim::Command::stop) {
    stopped_ = true;
    return;
  }
  if (poll_timer_ != sim::kNoTimer) ctx.cancel_timer(poll_timer_);
  poll_timer_ = ctx.set_timer(config_->retry_interval, kPollTag);
}

ProtocolInfo protocol_info() {
  ProtocolInfo info;
  info.name = "db-flag";
  info.description =
      "UPDATE leader SET holder = me WHERE holder IS NULL: no TTL, no token; a crashed holder "
      "blocks election until a person clears the row";
  const auto params = db_flag_params();
  info.params.assign(params.begin(), params.end());
  info.servers = {"postgres"};
  info.prepare = [](const nlohmann::json& params, const std::string& pointer,
                    const ClusterInfo& cluster,
                    params::Problems& problems) -> std::optional<PreparedProtocol> {
    std::optional<DbFlagConfig> config = read_config(params, pointer, problems);
    if (!config) return std::nullopt;
    config->workload = cluster.workload;
    PreparedProtocol prepared;
    prepared.uses_store = true;  // leadership depends on one coordinator: the database
    prepared.coordinator = sim::server_kind::postgres;
    prepared.tokens_ordered = false;  // every write carries token 0
    // Every write carries the same token, so the sink's fencing can reject nothing; it is left
    // off so that the report says so.
    prepared.fencing = false;
    prepared.factory = shared_config_factory<DbFlagNode>(std::move(*config));
    return prepared;
  };
  // Nothing detects a silent holder: the flag stays until a person clears it.
  info.detection.what = "nothing: a silent holder keeps the flag until a person clears it";
  info.detection.sets = [](sim::Duration, std::string& why) -> std::optional<std::vector<KnobSet>> {
    why = "the flag has no TTL: nothing detects a silent holder, whatever the knob";
    return std::nullopt;
  };
  return info;
}

}  // namespace electsim::protocols::db_flag
