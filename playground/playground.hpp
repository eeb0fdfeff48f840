// The playground's simulator: what the browser page calls, compiled to WebAssembly
// (playground/exports.cpp) and built natively too, so that its tests run beside every other.
// It is the command line's own machinery: a scenario document is loaded by the loader, run by
// runner::Session in slices (one per animation frame, so the page never freezes) and reported
// by the summary and the replay page, exactly as `electsim run --html` would. Everything goes in
// and out as JSON text, the one thing the page and a C++ test both read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runner/run.hpp"
#include "runner/scenario.hpp"

namespace electsim::playground {

class Playground {
 public:
  Playground();
  ~Playground();
  Playground(const Playground&) = delete;
  Playground& operator=(const Playground&) = delete;

  // Loads a scenario document and starts its run. {"ok": true, "nodes": N, "protocol": ...,
  // "end_ns": ..., "servers": [names], "seed": ...} or {"ok": false, "problems": [messages]},
  // each message as `electsim run` prints it.
  // With `variant`, the file's variant of that name, as `electsim run --variant` loads it.
  std::string open(std::string_view document, std::string_view variant = {},
                   std::string_view source = "playground");
  // Runs at most `max_steps` more kernel steps. {"done": bool, "now_ns": ..., "end_ns": ...,
  // "steps": ...}; {"done": true, ...} at once when nothing is open.
  std::string run(std::uint64_t max_steps);
  // The finished run (the rest run first): {"hash": ..., "summary": text as `electsim run`
  // prints it, "verdict": "PASS" or "FAIL", "errors": [...], "page": the replay page as
  // `electsim run --html` writes it}.
  std::string result();

  // A trace (JSON Lines, as `electsim run --trace` writes it) checked as `electsim check` checks
  // it and drawn as its run drew it: {"ok": true, "hash", "summary", "verdict", "nodes",
  // "end_ns", "servers", "fleet", "errors", "page"} or {"ok": false, "problems"}. The page is the
  // one `electsim run --html` wrote for that run (the header carries the clocks and the lease it
  // needs); a fleet's trace has none, as a fleet's run has none.
  static std::string replay_trace(std::string_view trace, std::string_view source);
  // A document with one of its variants written into it (runner::document_of_variant), for the
  // page's chooser and for saving what was played: {"ok": true, "document": {...}} or
  // {"ok": false, "problems": [...]}.
  static std::string variant_document(std::string_view document, std::string_view variant);
  // What the page offers: every protocol with its parameters (type, default, range, meaning,
  // choices), as `electsim list protocols` prints them.
  static std::string catalog();

 private:
  struct Open;
  std::unique_ptr<Open> open_;
};

}  // namespace electsim::playground
