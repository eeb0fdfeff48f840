// The sink's process: see servers/sink/sink_server.hpp.
#include "servers/sink/sink_server.hpp"

#include "sim/assert.hpp"
#include "sim/events.hpp"

namespace electsim::servers {

void SinkServer::on_message(sim::ProcessContext& /*ctx*/, sim::Endpoint /*from*/,
                            const sim::Message& /*message*/) {
  ELECTSIM_ASSERT(false, "the sink speaks only its write payloads");
}

void SinkServer::on_payload(sim::ProcessContext& ctx, sim::Endpoint from,
                            std::uint32_t from_incarnation, sim::Payload&& payload) {
  const auto* write = payload.get_if<SinkWrite>();
  ELECTSIM_ASSERT(write != nullptr, "the sink receives writes");
  const Token highest_before = sink_.highest_accepted(write->resource);
  // Decisions are stamped with the sink's own clock, which is perfect: its reading is true time.
  const SinkReply reply = sink_.write(Time(ctx.now().ns), from, write->id, write->token,
                                      write->payload, write->resource);
  if (ctx.traced()) {
    ctx.trace(sim::events::sink_write(from, write->token, write->payload, reply.accepted,
                                      highest_before));
  }
  ctx.reply(from, from_incarnation, sim::Payload(reply));
}

}  // namespace electsim::servers
