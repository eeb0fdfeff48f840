// libFuzzer target: any bytes as sweep parts and as search parts for `electsim merge`: once as one
// part, and split at the first form feed into two parts, so that headers, runs and shards can
// disagree. A merge that succeeds is also summarised (a sweep's) or reported (a search's), as
// merge does before writing. A crash, leak, hang or abort here is a bug in a part reader, the
// summary or the report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runner/search.hpp"
#include "runner/sweep.hpp"

namespace {

void merge_and_summarise(const std::vector<electsim::runner::PartText>& parts) {
  const electsim::runner::MergeOutcome merged = electsim::runner::merge_parts(parts);
  if (merged.result) {
    const auto points = electsim::runner::summarise(*merged.result);
    electsim::runner::sweep_points_csv(*merged.result, points);
  }
  const electsim::runner::SearchMerge search = electsim::runner::merge_search_parts(parts);
  if (search.result) electsim::runner::format_search_report(*search.result, search.config);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  merge_and_summarise({{"a.part", text}});
  const std::size_t split = text.find('\f');
  if (split != std::string::npos) {
    merge_and_summarise({{"a.part", text.substr(0, split)}, {"b.part", text.substr(split + 1)}});
  }
  return 0;
}
