// The playground module's door for the page (WebAssembly only): C functions over one Playground,
// each taking and returning UTF-8 text. A returned pointer stays valid until the next call; the
// page copies the text out at once (playground/page.inc).
#include <cstdint>
#include <exception>
#include <string>

#include <emscripten/emscripten.h>

#include "playground/playground.hpp"

namespace {

electsim::playground::Playground& the_playground() {
  static electsim::playground::Playground playground;
  return playground;
}

std::string& reply() {
  static std::string text;
  return text;
}

// Exceptions never cross into the page: a failure inside is a reply the page shows.
template <typename F>
const char* answer(F&& f) {
  try {
    reply() = f();
  } catch (const std::exception& e) {
    reply() = std::string(R"({"ok": false, "problems": ["internal error: )") + e.what() + "\"]}";
  }
  return reply().c_str();
}

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* pg_open(const char* document, const char* variant) {
  return answer([&] { return the_playground().open(document, variant); });
}

EMSCRIPTEN_KEEPALIVE const char* pg_run(double max_steps) {
  return answer([&] {
    const double clamped = max_steps < 1 ? 1 : max_steps > 1e12 ? 1e12 : max_steps;
    return the_playground().run(static_cast<std::uint64_t>(clamped));
  });
}

EMSCRIPTEN_KEEPALIVE const char* pg_result() {
  return answer([&] { return the_playground().result(); });
}

EMSCRIPTEN_KEEPALIVE const char* pg_trace(const char* trace, const char* source) {
  return answer([&] { return electsim::playground::Playground::replay_trace(trace, source); });
}

EMSCRIPTEN_KEEPALIVE const char* pg_variant(const char* document, const char* variant) {
  return answer(
      [&] { return electsim::playground::Playground::variant_document(document, variant); });
}

EMSCRIPTEN_KEEPALIVE const char* pg_catalog() {
  return answer([&] { return electsim::playground::Playground::catalog(); });
}

}  // extern "C"
