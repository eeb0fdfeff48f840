// Bounded reads and depth-checked JSON (io/input.hpp).
#include "io/input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace electsim::io {

namespace {

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) {
    return fmt::format("{} GiB", bytes >> 30);
  }
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  return fmt::format("{} bytes", bytes);
}

std::string too_large(std::string_view what, std::uint64_t max_bytes) {
  return fmt::format("the {} is larger than {} (the limit on a {})", what, size_text(max_bytes),
                     what);
}

// Line and column (both from 1) of byte `pos` in `text`.
std::string position_of(std::string_view text, std::size_t pos) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

}  // namespace

ReadResult read_file_bounded(const std::string& path, std::uint64_t max_bytes,
                             std::string_view what, std::uint64_t max_line) {
  ReadResult result;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    result.error = fmt::format("cannot open the {}: {}", what, std::strerror(errno));
    return result;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      result.error = fmt::format("cannot read the {}: it is a directory", what);
      return result;
    }
    if (S_ISREG(st.st_mode)) {
      if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        ::close(fd);
        result.error = too_large(what, max_bytes);
        return result;
      }
      result.text.reserve(static_cast<std::size_t>(st.st_size));
    }
  }
  char buffer[1 << 16];
  std::size_t line_start = 0;  // where the line in progress begins (with max_line)
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      result.error = fmt::format("cannot read the {}: {}", what, std::strerror(errno));
      result.text.clear();
      break;
    }
    if (n == 0) break;
    if (result.text.size() + static_cast<std::uint64_t>(n) > max_bytes) {
      result.error = too_large(what, max_bytes);
      result.text.clear();
      break;
    }
    const std::size_t before = result.text.size();
    result.text.append(buffer, static_cast<std::size_t>(n));
    if (max_line > 0) {
      // Only the new bytes are scanned for the end of the line in progress.
      const std::size_t newline = std::string_view(result.text).substr(before).find_last_of('\n');
      if (newline != std::string_view::npos) line_start = before + newline + 1;
      if (result.text.size() - line_start > max_line) {
        result.error = fmt::format("a line longer than {} (the limit on a line of a {})",
                                   size_text(max_line), what);
        result.text.clear();
        break;
      }
    }
  }
  ::close(fd);
  return result;
}

std::optional<std::string> json_depth_problem(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return fmt::format(
            "{}: arrays and objects nest deeper than {} levels (the limit on nesting)",
            position_of(text, i), max_depth);
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

JsonParse parse_json(std::string_view text, int max_depth) {
  JsonParse result;
  if (auto problem = json_depth_problem(text, max_depth)) {
    result.error = std::move(*problem);
    return result;
  }
  try {
    result.value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number beyond a double (1e400).
    // nlohmann's message is "[json.exception.parse_error.101] parse error at line 1, column 2:
    // ..."; keep from "line" on, which says where and what.
    std::string what = e.what();
    const std::size_t at = what.find("line ");
    result.error = at == std::string::npos ? what : what.substr(at);
  }
  return result;
}

}  // namespace electsim::io
