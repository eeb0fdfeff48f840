// The database server as a process of the world (issue "the lease family": one PostgreSQL server
// that can crash, pause and be partitioned like any endpoint, and can also be the sink). Clients'
// statements arrive as payloads on their connections; each connection is a session (a backend).
// The server notices that a client is gone only through TCP keepalive, whose probes travel the
// network and are answered by the client's host (sim/kernel.cpp, answer_probe), or through
// idle_in_transaction_session_timeout. A crash of the server loses every session and lock; the
// rows and the transaction id counter are durable.
#pragma once

#include <utility>
#include <vector>

#include "servers/postgres/database.hpp"
#include "sim/process.hpp"

namespace electsim::servers {

class PostgresServer final : public sim::Process {
 public:
  explicit PostgresServer(PostgresConfig config) : config_(config) {}

  const Database& database() const { return db_; }
  const PostgresConfig& config() const { return config_; }

  void on_start(sim::ProcessContext& ctx) override;
  void on_message(sim::ProcessContext& ctx, sim::Endpoint from,
                  const sim::Message& message) override;
  void on_payload(sim::ProcessContext& ctx, sim::Endpoint from, std::uint32_t from_incarnation,
                  sim::Payload&& payload) override;
  void on_timer(sim::ProcessContext& ctx, sim::TimerId id, sim::TimerTag tag) override;
  void on_command(sim::ProcessContext& ctx, sim::Command command) override;
  // A crashed client's connection is not reset here: electsim's crash is its machine's (power
  // loss, kernel panic, a VM gone), which sends no FIN or RST. The server learns only by probing.
  void on_disconnect(sim::ProcessContext& /*ctx*/, sim::Endpoint /*peer*/) override {}

 private:
  static constexpr sim::TimerTag kDeadline = 1;

  // The clock the server's timers read (the monotonic one; see postgres_server.cpp).
  static LocalTime clock(const sim::ProcessContext& ctx);

  void deliver(sim::ProcessContext& ctx, const DbOutcome& outcome);
  void persist(sim::ProcessContext& ctx);
  void schedule(sim::ProcessContext& ctx);
  // The earliest moment something is due for `s`: a keepalive step or its idle timeout.
  LocalTime deadline_of(const Session& s) const;

  PostgresConfig config_;
  Database db_;
  sim::TimerId timer_ = sim::kNoTimer;
  std::vector<std::pair<std::int64_t, SessionEnd>> due_;  // reused: sessions to end, and why
};

}  // namespace electsim::servers
