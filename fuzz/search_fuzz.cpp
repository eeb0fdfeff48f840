// libFuzzer target: the search's own inputs. The first three lines are `--kinds`, `--intensity`
// and `--property` texts, the rest a `search` section as JSON; each is read as `electsim search`
// reads it. Nothing is run: reading is the target. A crash, leak, hang or abort here is a bug in
// the search's configuration readers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "params/params.hpp"
#include "runner/search.hpp"

namespace {

// The next line of `text` from `at` (without its newline); `at` moves past it.
std::string_view next_line(std::string_view text, std::size_t& at) {
  if (at >= text.size()) return {};
  const std::size_t end = text.find('\n', at);
  const std::string_view line =
      text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
  at = end == std::string_view::npos ? text.size() : end + 1;
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using electsim::runner::SearchConfig;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t at = 0;
  const std::string_view kinds = next_line(text, at);
  const std::string_view intensity = next_line(text, at);
  const std::string_view properties = next_line(text, at);
  SearchConfig config = SearchConfig::defaults();
  electsim::runner::parse_kinds(kinds, config);
  electsim::runner::parse_intensity(intensity, config);
  electsim::runner::parse_properties(properties, config);
  const nlohmann::json section =
      nlohmann::json::parse(text.substr(at), nullptr, /*allow_exceptions=*/false);
  if (!section.is_discarded()) {
    SearchConfig from_file = SearchConfig::defaults();
    electsim::params::Problems problems;
    electsim::runner::read_search_section(section, from_file, problems);
  }
  return 0;
}
