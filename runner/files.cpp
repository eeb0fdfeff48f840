// Whole-or-nothing output files (temporary name, then rename).
#include "runner/files.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace electsim::runner {

std::optional<std::string> write_files_whole(const std::vector<OutputFile>& files) {
  std::vector<std::string> written;
  auto discard = [&] {
    for (const std::string& tmp : written) std::remove(tmp.c_str());
  };
  for (const OutputFile& file : files) {
    const std::string tmp = file.path + ".tmp";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      discard();
      return fmt::format("cannot write {}: {}", file.path, std::strerror(errno));
    }
    written.push_back(tmp);
    out.write(file.content.data(), static_cast<std::streamsize>(file.content.size()));
    out.close();
    if (!out) {
      discard();
      return fmt::format("cannot write {}: {}", file.path, std::strerror(errno));
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::rename(written[i].c_str(), files[i].path.c_str()) != 0) {
      const std::string reason = std::strerror(errno);
      for (std::size_t j = i; j < written.size(); ++j) std::remove(written[j].c_str());
      return fmt::format("cannot rename {} to {}: {}", written[i], files[i].path, reason);
    }
  }
  return std::nullopt;
}

}  // namespace electsim::runner
