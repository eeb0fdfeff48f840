// The axes of a parameter sweep, as a user writes them on the command line: a scenario path and
// its values (`protocol.ttl=1s,2s,5s`, `protocol.ttl=1s..30s:1s`), the seeds (`200`, `1..200`)
// and a shard of the runs (`3/16`). Each value is a `--set` value, so any scenario value can be an
// axis and every run of a sweep is a run `electsim run --set ... --seed ...` makes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace electsim::runner {

// Upper bounds on a sweep; each error message names the one it hit.
inline constexpr std::size_t kMaxGridValues = 10'000;        // values on one axis
inline constexpr std::uint64_t kMaxSweepRuns = 100'000'000;  // protocols x points x seeds

// What the values of an axis are, for plotting and sorting: all durations, all numbers, or
// anything else (strings, booleans, objects), shown as categories in the order given.
enum class AxisKind { duration, number, category };

struct GridAxis {
  std::string path;                 // dotted scenario path, as for --set
  std::vector<std::string> values;  // each as --set value text, in order
  AxisKind kind = AxisKind::category;
  std::vector<double> numeric;  // durations in ns or numbers, one per value (empty for category)
};

// Either the parsed thing or a message saying what was expected and what was found.
template <typename T>
struct Parsed {
  std::optional<T> value;
  std::string error;
};

// "path=v1,v2,..." where each element is a value or an inclusive range "from..to:step" of
// durations ("1s..30s:1s") or numbers ("1..9:2", "0.1..0.5:0.1"; whole numbers may omit the
// step, which is then 1). Commas inside brackets, braces or quotes do not split, so JSON values
// work: `faults.0.groups=[[0],[1,2]],[[0,1],[2]]`. A value may not repeat on one axis.
Parsed<GridAxis> parse_grid_axis(std::string_view text);

// Sets `kind` and `numeric` from `values` (parse_grid_axis does it; a definition read back from a
// file needs it again).
void classify_axis(GridAxis& axis);

// Seeds: "N" is seeds 1 to N; "A..B" is A to B inclusive.
struct SeedRange {
  std::uint64_t first = 1;
  std::uint64_t last = 1;
  std::uint64_t count() const { return last - first + 1; }
};
Parsed<SeedRange> parse_seed_range(std::string_view text);

// "i/n", 1 <= i <= n: run i of every n runs (runs i-1, i-1+n, ... in sweep order).
struct Shard {
  std::uint64_t index = 1;
  std::uint64_t count = 1;
  bool owns(std::uint64_t run) const { return run % count == index - 1; }
  // How many of runs 0 to total - 1 this shard owns.
  std::uint64_t runs_of(std::uint64_t total) const {
    const std::uint64_t first = index - 1;
    return first < total ? (total - first + count - 1) / count : 0;
  }
  // The shard's j-th run, as an index of the whole.
  std::uint64_t run_at(std::uint64_t j) const { return index - 1 + j * count; }
};
Parsed<Shard> parse_shard(std::string_view text);

// A shard's part file as read, for a merge: its name (for messages) and its text.
struct PartText {
  std::string name;
  std::string text;
};

// Calls `each(line_number, line)` on each non-empty line of a part's text (JSON Lines, numbered
// from 1) while it returns true.
template <typename Each>
void for_each_part_line(std::string_view text, Each each) {
  std::size_t start = 0;
  std::size_t number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && !each(number, line)) return;
  }
}

}  // namespace electsim::runner
