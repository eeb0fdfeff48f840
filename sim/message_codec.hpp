// How a message family travels in the kernel's fixed sim::Message: the family's messages are the
// alternatives of one std::variant, and an alternative's index in it is its wire type. Election
// protocols and the store's Raft encode their messages this way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <variant>

#include "sim/message.hpp"

namespace electsim::sim {

// The index of T among the alternatives of Variant (the variant's size if T is not one of them).
template <typename T, typename Variant>
struct AlternativeIndex;
template <typename T, typename... Ts>
struct AlternativeIndex<T, std::variant<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool same[] = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i) {
      if (same[i]) return i;
    }
    return sizeof...(Ts);
  }();
};

// The wire type of message T in the family whose messages are Variant.
template <typename T, typename Variant>
constexpr MessageType wire_type() {
  constexpr std::size_t index = AlternativeIndex<T, Variant>::value;
  static_assert(index < std::variant_size_v<Variant>, "T is one of the family's messages");
  return static_cast<MessageType>(index);
}

// Message T of the family whose messages are Variant, with up to four fields. Each family's
// encode() says which field means what.
template <typename T, typename Variant>
Message pack(std::int64_t a, std::int64_t b = 0, std::int64_t c = 0, std::int64_t d = 0) {
  Message m;
  m.type = wire_type<T, Variant>();
  m.field = {a, b, c, d};
  return m;
}

}  // namespace electsim::sim
