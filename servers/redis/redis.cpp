// One Redis master's dataset and commands: see servers/redis/redis.hpp.
#include "servers/redis/redis.hpp"

namespace electsim::servers {

const char* appendfsync_name(Appendfsync mode) {
  switch (mode) {
    case Appendfsync::always:
      return "always";
    case Appendfsync::everysec:
      return "everysec";
    case Appendfsync::no:
      return "no";
  }
  return "?";
}

void Redis::expire_if_due(sim::LocalTime now) {
  if (data_.lock_set && now > data_.lock_expires_at) {
    data_.lock_set = false;
    data_.lock_value = 0;
    data_.lock_expires_at = sim::LocalTime{};
  }
}

Redis::Outcome Redis::execute(const sim::RedisRequest& request, sim::LocalTime now) {
  Outcome out;
  switch (request.op) {
    case sim::RedisOp::set_nx_px:
      // SET key value NX PX ttl: set only if the key does not exist (redis.io/commands/set).
      expire_if_due(now);
      if (!data_.lock_set) {
        data_.lock_set = true;
        data_.lock_value = request.value;
        data_.lock_expires_at = now + request.ttl;
        out.ok = true;
        out.wrote = true;
      }
      break;
    case sim::RedisOp::release:
      // redsync's deleteScript: if GET == value then DEL.
      expire_if_due(now);
      if (data_.lock_set && data_.lock_value == request.value) {
        data_.lock_set = false;
        data_.lock_value = 0;
        data_.lock_expires_at = sim::LocalTime{};
        out.ok = true;
        out.wrote = true;
      }
      break;
    case sim::RedisOp::extend:
      // redsync's touchScript: if GET == value then PEXPIRE key ttl.
      expire_if_due(now);
      if (data_.lock_set && data_.lock_value == request.value) {
        data_.lock_expires_at = now + request.ttl;
        out.ok = true;
        out.wrote = true;
      }
      break;
    case sim::RedisOp::incr:
      ++data_.counter;
      out.ok = true;
      out.value = data_.counter;
      out.wrote = true;
      break;
  }
  return out;
}

}  // namespace electsim::servers
