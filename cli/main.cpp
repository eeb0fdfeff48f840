// electsim: a deterministic discrete-event simulator of leader-election protocols.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "io/huge_pages.hpp"
#include "io/output.hpp"

int main(int argc, char** argv) {
  electsim::io::prefer_huge_pages(argv);
  electsim::io::install_signal_cleanup();
  std::vector<std::string> args(argv + 1, argv + argc);
  int code = electsim::cli::run_cli(args, std::cout, std::cerr);
  // A full disk or a closed pipe must not pass for success with the output cut short: like
  // coreutils, report the failed write and exit with an error.
  errno = 0;
  std::cout.flush();
  const bool stdout_failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (stdout_failed) {
    const int saved = errno;
    std::fprintf(stderr, "electsim: cannot write to standard output%s%s\n", saved != 0 ? ": " : "",
                 saved != 0 ? std::strerror(saved) : "");
    if (code == 0 || code == 1) code = 2;
  }
  return code;
}
