// The kernel's open payload: it holds a value of any type, tells the type back only to a reader of
// that type, and constructs, copies, moves and destroys each value exactly once per object, inline
// or on the heap.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/payload.hpp"
#include "sim/wire.hpp"

using electsim::sim::Payload;

namespace {

// Counts the objects alive, so that a leak or a double destruction shows.
struct Counted {
  static inline int alive = 0;
  std::int64_t value = 0;
  explicit Counted(std::int64_t v) : value(v) { ++alive; }
  Counted(const Counted& o) : value(o.value) { ++alive; }
  Counted(Counted&& o) noexcept : value(o.value) { ++alive; }
  Counted& operator=(const Counted&) = default;
  Counted& operator=(Counted&&) = default;
  ~Counted() { --alive; }
};

// Too large for the inline room: kept on the heap.
struct Large {
  Counted counted{0};
  std::array<std::int64_t, 64> fill{};
};
static_assert(sizeof(Large) > Payload::kInline);

struct Other {
  std::int64_t value = 0;
};

}  // namespace

TEST_CASE("payload: an empty payload holds no type") {
  const Payload p;
  CHECK(p.empty());
  CHECK_FALSE(p.holds<Other>());
  CHECK(p.get_if<Other>() == nullptr);
}

TEST_CASE("payload: a value is read back only as its own type") {
  Payload p(electsim::sim::StoreRequest{});
  p.get<electsim::sim::StoreRequest>().key = "/election/leader";
  CHECK(p.holds<electsim::sim::StoreRequest>());
  CHECK_FALSE(p.holds<electsim::sim::StoreReply>());
  CHECK(p.get_if<electsim::sim::StoreReply>() == nullptr);
  REQUIRE(p.get_if<electsim::sim::StoreRequest>() != nullptr);
  CHECK(p.get_if<electsim::sim::StoreRequest>()->key == "/election/leader");
}

TEST_CASE("payload: inline and heap values live exactly as long as their payloads") {
  Counted::alive = 0;
  {
    Payload inline_value(Counted{7});
    Large large;
    large.counted.value = 9;
    large.fill[63] = 11;
    Payload heap_value(std::move(large));
    CHECK(Counted::alive == 3);  // the two held, and `large` moved from but alive
    Payload copy = inline_value;
    Payload heap_copy = heap_value;
    CHECK(Counted::alive == 5);
    CHECK(copy.get<Counted>().value == 7);
    CHECK(heap_copy.get<Large>().counted.value == 9);
    CHECK(heap_copy.get<Large>().fill[63] == 11);
    // A copy is its own object: changing it leaves the original as it was.
    heap_copy.get<Large>().fill[63] = 12;
    CHECK(heap_value.get<Large>().fill[63] == 11);

    Payload moved(std::move(heap_value));
    CHECK(heap_value.empty());  // NOLINT(bugprone-use-after-move): a moved payload is empty
    CHECK(moved.get<Large>().counted.value == 9);
    CHECK(Counted::alive == 5);

    moved = std::move(inline_value);  // the heap value it held goes
    CHECK(Counted::alive == 4);
    CHECK(moved.get<Counted>().value == 7);
    moved = Payload(Other{3});
    CHECK(Counted::alive == 3);
    CHECK(moved.get<Other>().value == 3);
    copy.reset();
    CHECK(copy.empty());
    CHECK(Counted::alive == 2);
  }
  CHECK(Counted::alive == 0);
}

TEST_CASE("payload: values move through a vector of payloads intact") {
  std::vector<Payload> bodies;
  for (std::int64_t i = 0; i < 100; ++i) {
    if (i % 2 == 0) {
      bodies.emplace_back(std::string(static_cast<std::size_t>(i), 'x'));
    } else {
      bodies.emplace_back(Other{i});
    }
  }
  for (std::int64_t i = 0; i < 100; ++i) {
    const Payload& p = bodies[static_cast<std::size_t>(i)];
    if (i % 2 == 0) {
      REQUIRE(p.holds<std::string>());
      CHECK(p.get<std::string>().size() == static_cast<std::size_t>(i));
    } else {
      REQUIRE(p.holds<Other>());
      CHECK(p.get<Other>().value == i);
    }
  }
}
