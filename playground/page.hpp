// The playground page: one self-contained HTML file (no server, no network, opened from disk)
// holding the simulator compiled to WebAssembly (playground/exports.cpp, built by
// scripts/playground), the scenarios it offers and the guided experiments. The page loads a
// scenario into the module, runs it a slice per animation frame, and shows the run in the replay
// page of `electsim run --html`, embedded; every click is a fault at its true time, so the run
// on the page is the run `electsim run` makes of the file "Save as scenario" writes.
#pragma once

#include <string>
#include <vector>

namespace electsim::playground {

// A scenario the page offers: its file's text, and the name it is listed and linked by
// (#scenario=<id>).
struct PageScenario {
  std::string id;
  std::string title;
  std::string text;
};

struct PageInput {
  std::string module_js;                // the module, as scripts/playground builds it
  std::vector<PageScenario> scenarios;  // after the guided experiments, in this order
  std::string open;                     // the id to open first; "" for the first experiment
};

// Deterministic: the same input gives the same bytes.
std::string render_page(const PageInput& input);

}  // namespace electsim::playground
