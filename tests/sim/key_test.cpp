// The store key: it reads as the text it was given, in place up to Key::kInline bytes and on the
// heap past them; a copy is equal and independent, a moved-from key is empty, assigning a key
// its own text (or a part of it) keeps that text, and keys order as their texts do.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>

#include "sim/key.hpp"

using namespace electsim::sim;

namespace {

// Texts on both sides of the inline room, and the empty one.
std::string text_of(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + i % 26));
  return s;
}

}  // namespace

TEST_CASE("key: reads as its text, in place and past the inline room") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{16}, Key::kInline,
                              Key::kInline + 1, std::size_t{200}}) {
    const std::string text = text_of(n);
    const Key key(text);
    CHECK(key.view() == text);
    CHECK(key.size() == n);
    CHECK(key.empty() == (n == 0));
    CHECK(key.str() == text);
    CHECK(key == std::string_view(text));
    CHECK(std::string_view(key) == text);
  }
  CHECK(Key("/electsim/leader") == "/electsim/leader");
  CHECK(Key("/electsim/leader").starts_with("/electsim/"));
  CHECK_FALSE(Key("/electsim/leader").starts_with("/other/"));
}

TEST_CASE("key: a copy is equal and independent, a moved-from key is empty") {
  for (const std::size_t n : {std::size_t{5}, Key::kInline, Key::kInline + 9}) {
    const std::string text = text_of(n);
    Key original(text);
    Key copy(original);
    CHECK(copy == original);
    original = "changed";
    CHECK(copy == std::string_view(text));
    CHECK(original == "changed");

    Key assigned;
    assigned = copy;
    CHECK(assigned == std::string_view(text));

    Key moved(std::move(copy));
    CHECK(moved == std::string_view(text));
    CHECK(copy.empty());  // NOLINT: the moved-from state is part of the contract
    Key moved_into("x");
    moved_into = std::move(moved);
    CHECK(moved_into == std::string_view(text));
    CHECK(moved.empty());  // NOLINT
  }
}

TEST_CASE("key: assigning a key its own text keeps it") {
  for (const std::size_t n : {std::size_t{10}, Key::kInline + 30}) {
    const std::string text = text_of(n);
    Key key(text);
    const Key& same = key;
    key = same;
    CHECK(key == std::string_view(text));
    key = key.view();
    CHECK(key == std::string_view(text));
    key = key.view().substr(2);  // a part of its own bytes
    CHECK(key == std::string_view(text).substr(2));
  }
  // From the heap into the inline room, out of its own bytes.
  Key key(text_of(Key::kInline + 30));
  key = key.view().substr(0, 3);
  CHECK(key == "abc");
}

TEST_CASE("key: keys order and compare as their texts") {
  CHECK(Key("a") < std::string_view("b"));
  CHECK(Key("b") > Key("a"));
  CHECK(Key(text_of(Key::kInline + 1)) > Key(text_of(Key::kInline)));
  CHECK(Key("same") == Key("same"));
  CHECK(Key("same") != Key("other"));
  CHECK(std::string("same") == Key("same"));
}
