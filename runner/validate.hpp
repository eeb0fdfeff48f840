// One check of a whole scenario file, shared by every command, so that `validate`, `run`,
// `compare` and `sweep` accept and refuse exactly the same files: the scenario itself, each of
// its variants (their `set` paths and values), and the `sweep` section.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runner/loader.hpp"

namespace electsim::runner {

struct FileCheck {
  LoadResult base;                    // the scenario without a variant
  std::vector<std::string> variants;  // the variant names, in name order
  std::vector<std::string> problems;  // every message, located; empty when the file is valid
  bool internal_error = false;        // a load failed inside the loader (LoadResult's)
  bool ok() const { return problems.empty(); }
};

// Loads `text` without a variant and then with each variant (at most 64), with `options`'
// overrides and seed applied to all, and reads the sweep section. Each variant is loaded once.
FileCheck check_scenario_file(std::string_view text, const std::string& source,
                              const LoadOptions& options = {});

}  // namespace electsim::runner
