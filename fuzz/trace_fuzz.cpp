// libFuzzer target: any bytes as a JSON Lines trace, read back as `electsim check` reads it,
// through the same analyzer. A crash, leak, hang or abort here is a bug in the reader, the stream
// checks or the analyzer.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "analysis/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  electsim::analysis::read_trace(in);
  return 0;
}
