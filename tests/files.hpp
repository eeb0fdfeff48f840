// Test helpers for reading files: a whole file, a file of the source tree (ELECTSIM_SOURCE_DIR,
// which every test gets), and the block of a page that starts with a given line (a generated
// table that a test compares with what electsim prints).
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace electsim::testing {

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  INFO(path.string());
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string source_file(const std::string& relative) {
  const char* dir = std::getenv("ELECTSIM_SOURCE_DIR");
  REQUIRE(dir != nullptr);
  return slurp(std::filesystem::path(dir) / relative);
}

// From the line that starts with `head` to the first blank line after it, newline included.
inline std::string block_at(const std::string& doc, const std::string& head) {
  const auto start = doc.find(head);
  INFO(head);
  REQUIRE(start != std::string::npos);
  const auto end = doc.find("\n\n", start);
  REQUIRE(end != std::string::npos);
  return doc.substr(start, end + 1 - start);
}

}  // namespace electsim::testing
