// Scenario files to Scenarios: parse, apply --set overrides, validate every field with a located
// message, check cross-field rules and limits. Bad input never throws past this boundary; it comes
// back as a list of problems that the CLI prints and turns into exit code 2.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/input.hpp"
#include "params/params.hpp"
#include "runner/scenario.hpp"

namespace electsim::runner {

struct Override {
  std::string path;   // dotted: "protocol.ttl", "nodes", "network.latency.max", "faults.0.at"
  std::string value;  // text; parsed as JSON if it is valid JSON, else taken as a string
};
// Parses "path=value"; nullopt if there is no '=' or the path is empty.
std::optional<Override> parse_override(std::string_view text);

struct LoadResult {
  std::optional<Scenario> scenario;
  std::string source;
  params::Problems problems;  // empty when scenario is set
  // Overrides that are valid but change nothing in this run (a parameter of a protocol that does
  // not run), said next to the result instead of silently ignored.
  std::vector<std::string> warnings;
  // The loader failed inside, not on the file: an exception reached its outermost level, and the
  // problem it reports names no field. Always a bug (the scenario fuzzer fails on it).
  bool internal_error = false;
  // One line per problem: "<source>: at /protocol/ttl: expected ..., found ...".
  std::vector<std::string> messages() const;
};

// What to load besides the file itself. A variant (the file's "variants" section) applies its own
// `set` overrides and, if it has one, its own `expect` block; command-line overrides come after it.
struct LoadOptions {
  std::vector<Override> overrides;
  std::optional<std::uint64_t> seed;  // wins over the file's seed
  std::optional<std::string> variant;
  // Run this protocol instead of the file's `protocol`: its parameters come from the file's
  // `protocols` section (or from `protocol` when it names the same one), its bounds from `expect`
  // plus `expect_by_protocol`. This is how `compare` runs one file under every protocol.
  std::optional<std::string> protocol;
  // Set by commands that run every protocol in turn (compare), where protocols.<name> always
  // reaches one of the runs.
  bool all_protocols_run = false;
  Limits limits;
  // For tests only (no command-line option or file key reaches it): changes the loaded scenario
  // before it runs, to plant a bug that a search must find (tests/runner/search_test.cpp).
  std::function<void(Scenario&)> plant;
};

// Loads from text (source names it in messages).
LoadResult load_scenario_text(std::string_view text, std::string source,
                              const LoadOptions& options = {});
LoadResult load_scenario_file(const std::string& path, const LoadOptions& options = {});
// Reads a scenario file once, within the size limit (io::kMaxScenarioBytes): commands that load
// it several times (variants, protocols) read a pipe or FIFO only once.
io::ReadResult read_scenario_file(const std::string& path);
LoadResult load_scenario_json(const nlohmann::json& document, std::string source,
                              const LoadOptions& options = {});

// The names of the variants a document defines, in name order (JSON objects keep no order), empty
// if none.
std::vector<std::string> variant_names(const nlohmann::json& document);

// `document` with its variant `variant` written into it: the variant's `set` entries applied, its
// expect block and description in place of the file's, and no variants left. Loading the result
// runs exactly the variant (the playground saves such a file); nullopt if there is no such variant.
std::optional<nlohmann::json> document_of_variant(const nlohmann::json& document,
                                                  const std::string& variant);

// The built-in flagship scenario: a lease holder frozen by a GC pause longer than its TTL.
const char* flagship_scenario_text();

}  // namespace electsim::runner
