// The playground's WebAssembly module, embedded at build time (ELECTSIM_PLAYGROUND_MODULE, built
// by scripts/playground): `electsim play` writes it into its pages. Empty in a build without it.
#pragma once

#include <string>
#include <string_view>

namespace electsim::cli {

std::string playground_module();

}  // namespace electsim::cli
