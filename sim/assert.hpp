// Always-on assertions for invariants. They stay in release builds: a simulator that silently
// continues after breaking an invariant produces traces nobody can trust.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace electsim::sim::detail {
[[noreturn]] inline void assert_failed(const char* condition, const char* context, const char* file,
                                       int line) {
  std::fprintf(stderr, "electsim: invariant broken at %s:%d: %s (%s)\n", file, line, condition,
               context);
  std::abort();
}
}  // namespace electsim::sim::detail

// One condition each, with a short context string saying what was expected.
#define ELECTSIM_ASSERT(condition, context)                                            \
  do {                                                                                 \
    if (!(condition)) [[unlikely]]                                                     \
      ::electsim::sim::detail::assert_failed(#condition, context, __FILE__, __LINE__); \
  } while (false)
