// One Redis master as Redlock uses it ("Distributed Locks with Redis",
// redis.io/docs/manual/patterns/distributed-locks): one lock key holding a client's random value
// with a PX expiry, and one counter for the optional fencing token. The masters of a Redlock world
// are independent: no replication, each its own machine, clock and disk.
//
// Expiry is judged on the master's own clock. Redis keeps a key's expiry as an absolute Unix time
// in milliseconds and compares it with its own clock, lazily on every access and actively in a
// periodic scan that only reclaims memory ("EXPIRE", redis.io/commands/expire, "How Redis expires
// keys"). A key is expired once the clock reads past that time (expire.c keyIsExpired: now > when).
// So a master whose clock jumps forward expires its keys early: the first of Kleppmann's two
// attacks on Redlock ("How to do distributed locking", 2016).
//
// Persistence ("Redis Persistence", redis.io/docs/management/persistence): every write is appended
// to the AOF; appendfsync says when it reaches the disk. The dataset a restart loads is the one at
// the last fsync (electsim's crash is the machine's, which loses the page cache):
//   always   fsync before the reply: nothing acknowledged is lost;
//   everysec fsync every second on the master's clock: up to a second of writes is lost;
//   no       the operating system flushes: Linux writes a page back once it has been dirty for
//            vm.dirty_expire_centisecs (3000, 30 s), so electsim flushes every 30 s and a restart
//            within that time forgets every write since the last flush.
// The AOF records expiries as absolute times (PEXPIREAT), so a reloaded key keeps its deadline on
// the master's clock, and a key whose deadline passed while the master was down is gone.
#pragma once

#include <cstdint>

#include "sim/ids.hpp"
#include "sim/time.hpp"
#include "sim/wire.hpp"

namespace electsim::servers {

enum class Appendfsync : std::uint8_t { always, everysec, no };
const char* appendfsync_name(Appendfsync mode);

struct RedisConfig {
  std::size_t masters = 5;  // the Redis docs' example, and redsync's examples
  // redis.conf's default when the AOF is on.
  Appendfsync appendfsync = Appendfsync::everysec;

  static constexpr sim::Duration kEverysec = std::chrono::seconds(1);
  // Linux vm.dirty_expire_centisecs default: 3000.
  static constexpr sim::Duration kOsFlush = std::chrono::seconds(30);
  // How often the dataset reaches the disk; zero for `always` (every write, before its reply).
  sim::Duration fsync_interval() const {
    switch (appendfsync) {
      case Appendfsync::always:
        return sim::Duration(0);
      case Appendfsync::everysec:
        return kEverysec;
      case Appendfsync::no:
        return kOsFlush;
    }
    return sim::Duration(0);
  }
};

// The master's dataset: what the AOF holds after an fsync.
struct RedisData {
  bool lock_set = false;
  std::int64_t lock_value = 0;
  sim::LocalTime lock_expires_at;  // on the master's clock (PEXPIREAT)
  std::int64_t counter = 0;        // INCR fence
  bool operator==(const RedisData&) const = default;
};

// The dataset and the commands, without a network or a disk: a pure state machine.
class Redis {
 public:
  explicit Redis(RedisData data = {}) : data_(data) {}

  struct Outcome {
    bool ok = false;
    std::int64_t value = 0;
    bool wrote = false;  // the command changed the dataset (an AOF append)
  };
  // Runs one command at `now` on the master's clock.
  Outcome execute(const sim::RedisRequest& request, sim::LocalTime now);

  // Whether the lock key exists at `now` (GET would find it).
  bool lock_live(sim::LocalTime now) const {
    return data_.lock_set && !(now > data_.lock_expires_at);
  }
  const RedisData& data() const { return data_; }

 private:
  // Lazy expiry: an expired key is deleted when a command touches it.
  void expire_if_due(sim::LocalTime now);

  RedisData data_;
};

}  // namespace electsim::servers
