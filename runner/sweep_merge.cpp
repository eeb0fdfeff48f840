// Sweep shards (runner/sweep.hpp): a shard's part file, and merging parts into the result one
// process would have given.
#include "runner/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/stats.hpp"
#include "io/input.hpp"

namespace electsim::runner {

namespace {

using json = nlohmann::json;

constexpr int kPartFormat = 1;

}  // namespace

// ---- Shards --------------------------------------------------------------------------------

std::string sweep_part(const SweepResult& result, const Shard& shard) {
  json header;
  header["electsim_sweep_part"] = kPartFormat;
  header["definition"] = result.definition.to_json();
  header["shard"] = fmt::format("{}/{}", shard.index, shard.count);
  header["runs_expected"] = result.runs_expected;
  header["interrupted"] = result.interrupted;
  if (!result.plot_metrics.empty()) header["metrics"] = result.plot_metrics;
  std::string out = header.dump() + "\n";
  for (const RunRecord& r : result.records) out += r.to_json().dump() + "\n";
  return out;
}

MergeOutcome merge_parts(const std::vector<PartText>& parts) {
  MergeOutcome outcome;
  if (parts.empty()) {
    outcome.problems.emplace_back("expected at least one part to merge");
    return outcome;
  }
  std::optional<json> definition_json;
  std::optional<SweepDefinition> definition;
  std::map<std::uint64_t, RunRecord> records;
  std::map<std::uint64_t, std::string> owner;
  std::vector<std::string> interrupted;
  std::vector<std::string> plot_metrics;
  for (const PartText& part : parts) {
    bool header_seen = false;
    Shard shard;
    std::uint64_t owned = 0;
    std::uint64_t in_part = 0;
    bool part_interrupted = false;
    for_each_part_line(part.text, [&](std::size_t line_number, std::string_view line) {
      const io::JsonParse parsed = io::parse_json(line, 8);
      const json& j = parsed.value;
      const std::string where = fmt::format("{}:{}", part.name, line_number);
      if (!parsed.ok() || !j.is_object()) {
        outcome.problems.push_back(where + ": expected a JSON object on every line of a part");
        return false;
      }
      if (!header_seen) {
        header_seen = true;
        if (!j.contains("electsim_sweep_part") || j["electsim_sweep_part"] != kPartFormat ||
            !j.contains("definition")) {
          outcome.problems.push_back(
              where +
              ": expected a sweep part written by `electsim sweep --shard` (its first line "
              "names the sweep)");
          return false;
        }
        if (!definition_json) {
          std::string error;
          definition = SweepDefinition::from_json(j["definition"], error);
          if (!definition) {
            outcome.problems.push_back(where + ": " + error);
            return false;
          }
          definition_json = j["definition"];
        } else if (j["definition"] != *definition_json) {
          outcome.problems.push_back(fmt::format(
              "{}: this part comes from a different sweep than {} (scenario, grid, seeds, "
              "protocols or --set differ)",
              where, parts.front().name));
          return false;
        }
        const json* shard_text = j.contains("shard") ? &j["shard"] : nullptr;
        const auto parsed_shard = shard_text != nullptr && shard_text->is_string()
                                      ? parse_shard(shard_text->get<std::string>())
                                      : Parsed<Shard>{};
        if (!parsed_shard.value || !j.contains("runs_expected") ||
            !j["runs_expected"].is_number_unsigned() || !j.contains("interrupted") ||
            !j["interrupted"].is_boolean()) {
          outcome.problems.push_back(
              where +
              ": expected the part header's \"shard\" (\"i/n\"), \"runs_expected\" and "
              "\"interrupted\"");
          return false;
        }
        shard = *parsed_shard.value;
        const std::uint64_t total = definition->run_count();
        owned = shard.runs_of(total);
        if (j["runs_expected"].get<std::uint64_t>() != owned) {
          outcome.problems.push_back(fmt::format(
              "{}: shard {}/{} of this sweep owns {} runs, but the header says {}", where,
              shard.index, shard.count, owned, j["runs_expected"].get<std::uint64_t>()));
          return false;
        }
        part_interrupted = j["interrupted"].get<bool>();
        if (j.contains("metrics")) {
          std::vector<std::string> metrics;
          const json& list = j["metrics"];
          bool valid = list.is_array();
          for (std::size_t i = 0; valid && i < list.size(); ++i) {
            valid = list[i].is_string() && find_point_metric(list[i].get<std::string>()) != nullptr;
            if (valid) metrics.push_back(list[i].get<std::string>());
          }
          if (!valid) {
            outcome.problems.push_back(where + ": expected \"metrics\" to list sweep metrics");
            return false;
          }
          if (plot_metrics.empty()) plot_metrics = std::move(metrics);
        }
        if (part_interrupted) interrupted.push_back(part.name);
        return true;
      }
      std::string error;
      auto record = RunRecord::from_json(j, error);
      if (!record) {
        outcome.problems.push_back(where + ": " + error);
        return false;
      }
      if (record->run >= definition->run_count() ||
          record->seed != definition->seeds.first + record->run % definition->seeds.count()) {
        outcome.problems.push_back(fmt::format("{}: run {} with seed {} is not a run of this sweep",
                                               where, record->run, record->seed));
        return false;
      }
      if (!shard.owns(record->run)) {
        outcome.problems.push_back(fmt::format("{}: run {} does not belong to shard {}/{}", where,
                                               record->run, shard.index, shard.count));
        return false;
      }
      ++in_part;
      const auto [it, inserted] = owner.emplace(record->run, part.name);
      if (!inserted) {
        outcome.problems.push_back(fmt::format("{}: run {} (seed {}) is also in {}", where,
                                               record->run, record->seed, it->second));
        return false;
      }
      const std::uint64_t run = record->run;
      records.emplace(run, std::move(*record));
      return true;
    });
    if (!header_seen && outcome.problems.empty()) {
      outcome.problems.push_back(part.name + ": expected a sweep part, found an empty file");
    }
    if (header_seen && outcome.problems.empty() &&
        (in_part > owned || (!part_interrupted && in_part != owned))) {
      outcome.problems.push_back(
          fmt::format("{}: holds {} runs, but shard {}/{} {} {}", part.name, in_part, shard.index,
                      shard.count, part_interrupted ? "owns only" : "finished and owns", owned));
    }
  }
  if (!outcome.problems.empty()) return outcome;
  const std::uint64_t total = definition->run_count();
  if (records.size() != total) {
    std::string first_missing;
    for (std::uint64_t run = 0; run < total; ++run) {
      if (records.count(run) == 0) {
        first_missing = fmt::format("run {} (seed {})", run,
                                    definition->seeds.first + run % definition->seeds.count());
        break;
      }
    }
    std::string message = fmt::format("the parts hold {} of the sweep's {} runs; missing {} first",
                                      records.size(), total, first_missing);
    if (!interrupted.empty()) {
      message += "; interrupted parts: ";
      for (std::size_t i = 0; i < interrupted.size(); ++i) {
        message += (i == 0 ? "" : ", ") + interrupted[i];
      }
    } else {
      message += "; is a shard's part missing?";
    }
    outcome.problems.push_back(message);
    return outcome;
  }
  SweepResult result;
  result.definition = std::move(*definition);
  result.runs_expected = total;
  result.plot_metrics = std::move(plot_metrics);
  result.records.reserve(records.size());
  for (auto& [run, record] : records) result.records.push_back(std::move(record));
  outcome.result = std::move(result);
  return outcome;
}

}  // namespace electsim::runner
