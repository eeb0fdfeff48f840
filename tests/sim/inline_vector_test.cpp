// The inline vector that carries a Raft append's entries: the same elements in the same order as
// a std::vector, inline or spilled; a copy is equal and independent; a moved-from one is empty.
#include <catch2/catch.hpp>

#include <memory>
#include <span>
#include <vector>

#include "sim/inline_vector.hpp"

using namespace electsim::sim;

namespace {

template <std::size_t N>
std::vector<int> values_of(const InlineVector<std::shared_ptr<const int>, N>& v) {
  std::vector<int> out;
  for (const auto& p : std::span<const std::shared_ptr<const int>>(v)) out.push_back(*p);
  return out;
}

}  // namespace

TEST_CASE("inline vector: holds what a vector holds, inline and past its inline room") {
  for (int n : {0, 1, 3, 4, 5, 9, 70}) {
    InlineVector<std::shared_ptr<const int>, 4> v;
    std::vector<int> expected;
    for (int i = 0; i < n; ++i) {
      v.push_back(std::make_shared<const int>(i * 7));
      expected.push_back(i * 7);
    }
    CHECK(v.size() == static_cast<std::size_t>(n));
    CHECK(v.empty() == (n == 0));
    CHECK(values_of(v) == expected);
    CHECK(static_cast<std::size_t>(v.end() - v.begin()) == v.size());
    if (n > 0) CHECK(*v[static_cast<std::size_t>(n - 1)] == (n - 1) * 7);
  }
}

TEST_CASE("inline vector: a copy is equal and shares the elements, a moved-from one is empty") {
  for (int n : {2, 6}) {
    InlineVector<std::shared_ptr<const int>, 4> v;
    for (int i = 0; i < n; ++i) v.push_back(std::make_shared<const int>(i));
    const auto copy = v;
    CHECK(values_of(copy) == values_of(v));
    CHECK(v[0].use_count() == 2);  // the same element, held twice
    auto moved = std::move(v);
    CHECK(v.empty());  // NOLINT(bugprone-use-after-move): what a move leaves is the point
    CHECK(values_of(v).empty());
    CHECK(values_of(moved) == values_of(copy));
    CHECK(moved[0].use_count() == 2);  // moved, not copied
    InlineVector<std::shared_ptr<const int>, 4> assigned;
    assigned.push_back(std::make_shared<const int>(99));
    assigned = std::move(moved);
    CHECK(moved.empty());  // NOLINT(bugprone-use-after-move)
    CHECK(values_of(assigned) == values_of(copy));
  }
}
