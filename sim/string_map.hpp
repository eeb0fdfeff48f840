// A hash map keyed by strings that is looked up with a std::string_view (an event's text, a
// request's key) without building a string for the lookup. Only for maps that are looked up and
// never iterated: its order depends on the hash, so no outcome may depend on it. Its keys are
// store keys (sim/key.hpp), kept in place up to Key::kInline bytes: a fleet's keys
// ("/electsim/leader/svc-1234") are longer than a std::string keeps in place, and a lookup would
// otherwise miss the cache once more to compare the text.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sim/key.hpp"

namespace electsim::sim {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
};

template <typename Value>
using StringMap = std::unordered_map<Key, Value, StringHash, std::equal_to<>>;

}  // namespace electsim::sim
