// The whole-file check every command shares (runner/validate.hpp).
#include "runner/validate.hpp"

#include <fmt/format.h>

#include "io/input.hpp"
#include "runner/sweep.hpp"

namespace electsim::runner {

FileCheck check_scenario_file(std::string_view text, const std::string& source,
                              const LoadOptions& options) {
  FileCheck check;
  LoadOptions base_options = options;
  base_options.variant.reset();
  check.base = load_scenario_text(text, source, base_options);
  check.internal_error = check.base.internal_error;
  if (!check.base.scenario) {
    check.problems = check.base.messages();
    return check;
  }
  const nlohmann::json& document = check.base.scenario->document;
  check.variants = variant_names(document);
  for (const std::string& name : check.variants) {
    LoadOptions o = options;
    o.variant = name;
    const LoadResult loaded = load_scenario_text(text, source, o);
    check.internal_error = check.internal_error || loaded.internal_error;
    if (!loaded.scenario) {
      for (const std::string& m : loaded.messages()) {
        check.problems.push_back(fmt::format("{} (variant {})", m, name));
      }
    }
  }
  std::vector<std::string> sweep_problems;
  read_sweep_defaults(document, sweep_problems);
  for (const std::string& p : sweep_problems) check.problems.push_back(source + ": " + p);
  return check;
}

}  // namespace electsim::runner
