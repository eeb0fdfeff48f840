// Output files that appear whole or not at all: each is written under a temporary name beside its
// destination and renamed only when every file of the set has been written.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace electsim::runner {

struct OutputFile {
  std::string path;
  std::string content;
};

// Writes every file, or none: on any failure the temporary files are removed and the message
// says which file failed and why.
std::optional<std::string> write_files_whole(const std::vector<OutputFile>& files);

}  // namespace electsim::runner
