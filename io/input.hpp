// Reading what a user hands electsim: files (regular, pipes, FIFOs, /dev/stdin) read once and
// never past a size limit, and JSON whose nesting is checked before it is parsed, so a hostile
// file costs at most the limit in memory and never a stack overflow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace electsim::io {

// The largest scenario file electsim reads (100000 faults at ~150 bytes each fit with room).
inline constexpr std::uint64_t kMaxScenarioBytes = 64ull << 20;  // 64 MiB
// The largest sweep part `merge` reads; merge holds every part in memory.
inline constexpr std::uint64_t kMaxPartBytes = 1ull << 30;  // 1 GiB
// The longest line of a sweep part (its header names the whole grid).
inline constexpr std::uint64_t kMaxPartLine = 16ull << 20;  // 16 MiB
// The deepest nesting of arrays and objects accepted in any JSON input; a scenario needs about 6.
inline constexpr int kMaxJsonDepth = 100;

struct ReadResult {
  std::string text;
  std::string error;  // empty on success: "cannot open: No such file or directory", "larger than"
  bool ok() const { return error.empty(); }
};

// Reads the whole of `path`, at most `max_bytes`: a regular file's size is checked before reading,
// and any other file (pipe, FIFO, character device) is read in pieces and refused as soon as it
// passes the limit. `what` names the kind of file in the message ("scenario file").
// With `max_line` above 0, a file whose lines are meant to be short is refused as soon as a line
// passes it (so /dev/zero costs max_line, not max_bytes).
ReadResult read_file_bounded(const std::string& path, std::uint64_t max_bytes,
                             std::string_view what, std::uint64_t max_line = 0);

// A message naming line and column when `text` nests arrays and objects deeper than `max_depth`,
// nullopt otherwise. Linear in the text; strings are skipped, so brackets inside them do not count.
std::optional<std::string> json_depth_problem(std::string_view text, int max_depth = kMaxJsonDepth);

struct JsonParse {
  nlohmann::json value;
  std::string error;  // "line 3, column 7: ..." when the text is not JSON or nests too deep
  bool ok() const { return error.empty(); }
};

// Parses `text` as one JSON document after the depth check. Never throws.
JsonParse parse_json(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace electsim::io
