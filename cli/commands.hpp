// The electsim command line as a library, so tests run it exactly as users do:
//   electsim run [SCENARIO]    electsim validate FILE...    electsim list    electsim check TRACE
// Exit codes: 0 fine, 1 an expectation broke, 2 bad input (or a file that could not be written).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace electsim::cli {

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace electsim::cli
