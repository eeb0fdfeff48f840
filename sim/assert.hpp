// Always-on assertions for invariants. They stay in release builds: a simulator that silently
// continues after breaking an invariant produces traces nobody can trust.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

namespace electsim::sim {

// What a broken invariant throws instead of aborting, on a thread that asked for it with
// ThrowOnBrokenInvariant: a search turns it into a finding of its run and keeps its other
// findings. The run it was thrown from is abandoned.
class InvariantBroken : public std::exception {
 public:
  explicit InvariantBroken(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

namespace detail {
inline thread_local bool throw_on_broken_invariant = false;

[[noreturn]] inline void assert_failed(const char* condition, const char* context, const char* file,
                                       int line) {
  if (throw_on_broken_invariant) {
    throw InvariantBroken(std::string(condition) + " (" + context + ")");
  }
  std::fprintf(stderr, "electsim: invariant broken at %s:%d: %s (%s)\n", file, line, condition,
               context);
  std::abort();
}
}  // namespace detail

// While one lives, a broken invariant on this thread throws InvariantBroken.
class ThrowOnBrokenInvariant {
 public:
  ThrowOnBrokenInvariant() : before_(detail::throw_on_broken_invariant) {
    detail::throw_on_broken_invariant = true;
  }
  ~ThrowOnBrokenInvariant() { detail::throw_on_broken_invariant = before_; }
  ThrowOnBrokenInvariant(const ThrowOnBrokenInvariant&) = delete;
  ThrowOnBrokenInvariant& operator=(const ThrowOnBrokenInvariant&) = delete;

 private:
  bool before_;
};

}  // namespace electsim::sim

// One condition each, with a short context string saying what was expected.
#define ELECTSIM_ASSERT(condition, context)                                            \
  do {                                                                                 \
    if (!(condition)) [[unlikely]]                                                     \
      ::electsim::sim::detail::assert_failed(#condition, context, __FILE__, __LINE__); \
  } while (false)
