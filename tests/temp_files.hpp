// Test helper: the temporaries an output writer left beside `path` ("<path>.XXXXXX.tmp", see
// io/output.hpp), so tests can assert that none survive a failure or a successful rename.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace electsim::testing {

inline std::vector<std::string> temporaries_of(const std::filesystem::path& path) {
  std::vector<std::string> found;
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const std::string prefix = path.filename().string() + ".";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > prefix.size() + 4 && name.compare(0, prefix.size(), prefix) == 0 &&
        name.compare(name.size() - 4, 4, ".tmp") == 0) {
      found.push_back(entry.path().string());
    }
  }
  return found;
}

inline bool has_temporary(const std::filesystem::path& path) {
  return !temporaries_of(path).empty();
}

}  // namespace electsim::testing
