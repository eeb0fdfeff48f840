// The slab that holds the kernel's payloads in flight: element i is the i-th one added, new ones
// are default-made, and growing the slab moves nothing already in it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/chunked_slab.hpp"

using namespace electsim::sim;

TEST_CASE("chunked slab: elements keep their index and their address while the slab grows") {
  ChunkedSlab<std::string, 2> slab;  // chunks of four, so that 37 elements span ten of them
  std::vector<const std::string*> addresses;
  for (std::size_t i = 0; i < 37; ++i) {
    slab.emplace_back();
    REQUIRE(slab.size() == i + 1);
    CHECK(slab[i].empty());  // default-made
    slab[i] = "element " + std::to_string(i);
    addresses.push_back(&slab[i]);
  }
  for (std::size_t i = 0; i < 37; ++i) {
    CHECK(slab[i] == "element " + std::to_string(i));
    CHECK(&slab[i] == addresses[i]);
  }
  const ChunkedSlab<std::string, 2>& view = slab;
  CHECK(view[36] == "element 36");
}
