// libFuzzer target: any bytes as a scenario file, loaded as `electsim validate` loads it (the
// scenario, each of its first variants, the sweep section). Nothing is run: loading is the
// target. A crash, leak, hang or abort here is a bug in the loader, and so is an exception the
// loader only caught at its outermost level ("an internal error"): it would reach a user as a
// message that names no field.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (electsim::runner::check_scenario_file(text, "<fuzz>").internal_error) __builtin_trap();
  return 0;
}
