// Durable state of a node: the few values that survive a crash and restart.
#include "sim/protocol.hpp"

namespace electsim::sim {

std::int64_t DurableState::get(std::string_view name, std::int64_t fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

void DurableState::set(std::string_view name, std::int64_t value) {
  auto it = values_.find(name);
  if (it == values_.end()) {
    values_.emplace(std::string(name), value);
    ++version_;
  } else if (it->second != value) {
    it->second = value;
    ++version_;
  }
}

}  // namespace electsim::sim
