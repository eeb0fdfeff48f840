// electsim: a deterministic discrete-event simulator of leader-election protocols.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return electsim::cli::run_cli(args, std::cout, std::cerr);
}
