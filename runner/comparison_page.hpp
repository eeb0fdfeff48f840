// The comparison table every textbook prints (messages per election, what a crash costs, what a
// partition and a process pause do) for every protocol, measured by electsim runs of the shipped
// scenarios rather than typed by hand, with the timeline of each run behind it.
// `electsim comparison` writes it to docs/comparison.md; a test checks the page is up to date.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/output.hpp"

namespace electsim::runner {

struct ComparisonPageOptions {
  std::string scenarios_dir = "scenarios";  // where the shipped scenario files are
  std::string page_path = "docs/comparison.md";
  std::string pictures_dir = "docs/img";  // SVG timelines, linked relative to the page
};

// The page and its pictures (not yet written), or the problems that stopped it.
struct ComparisonPage {
  std::vector<io::OutputFile> files;  // the page first, then one SVG per scenario
  std::vector<std::string> problems;
};
ComparisonPage comparison_page(const ComparisonPageOptions& options);

}  // namespace electsim::runner
