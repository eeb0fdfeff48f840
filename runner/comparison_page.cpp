// The measured comparison page: five shipped scenarios, each run under every protocol with one
// seed and one fault schedule (runner/compare.hpp), condensed into the textbook's table. Every
// cell comes from a run; the words in a cell are chosen by the measured figures.
#include "runner/comparison_page.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "drawing/timeline_svg.hpp"
#include "protocols/registry.hpp"
#include "runner/compare.hpp"
#include "runner/loader.hpp"

namespace electsim::runner {
namespace {

struct Experiment {
  std::string file;  // in the scenarios directory
  std::string title;
  std::vector<Override> sets;
  bool picture = true;
};

std::optional<std::string> read_file(const std::string& path) {
  io::ReadResult read = read_scenario_file(path);
  if (!read.ok()) return std::nullopt;
  return std::move(read.text);
}

std::uint64_t election_messages(const RunResult& r) {
  return r.report.election_messages_sent;
}

std::string seconds(sim::Duration d) {
  return sim::format_seconds(d);
}

std::optional<sim::Duration> failover_max(const RunResult& r) {
  std::optional<sim::Duration> longest;
  for (const analysis::Failover& f : r.report.failovers) {
    if (f.failover && (!longest || *f.failover > *longest)) longest = f.failover;
  }
  return longest;
}

std::uint64_t coordinator_requests(const RunResult& r) {
  return r.report.store_requests_total + r.report.server_requests_total;
}

// The coordinator a protocol elects through, as the page names it.
std::string coordinator_name(const RunResult& r) {
  if (r.report.store_requests_total > 0) return "store";
  return r.report.store.database ? "database" : "Redis";
}

// Messages of the protocol's election types per election or, for a protocol that elects through
// a coordinator, the requests it sent to the coordinator before the first leader.
std::string messages_cell(const RunResult& r) {
  if (r.report.elections == 0) return "no election";
  const auto elections = static_cast<double>(r.report.elections);
  const std::uint64_t messages = election_messages(r);
  if (messages == 0 && coordinator_requests(r) > 0) {
    return fmt::format("{} {} requests", r.report.requests_before_first_leader,
                       coordinator_name(r));
  }
  return fmt::format("{}", std::round(static_cast<double>(messages) / elections * 10) / 10);
}

std::string partition_cell(const RunResult& r) {
  const sim::Duration split = r.report.split_brain_time;
  if (split == sim::Duration(0) && !failover_max(r)) {
    // The database protocols: the partition leaves the database on no side, so the old leader
    // keeps its session and its lock.
    return "the old leader keeps leading (it still reaches its coordinator)";
  }
  if (split == sim::Duration(0)) return "one leader, on the side that can reach the store";
  if (split < std::chrono::seconds(1)) {
    return fmt::format("majority side only ({} of overlap while the old leader notices)",
                       seconds(split));
  }
  return fmt::format("**both sides lead** ({} of split-brain, {} stale writes accepted)",
                     seconds(split), r.report.stale_writes_accepted);
}

std::string pause_cell(const RunResult& r) {
  const sim::Duration split = r.report.split_brain_time;
  std::string cell =
      split == sim::Duration(0)
          ? std::string("no split-brain")
          : fmt::format("{} of split-brain (the frozen leader still believes)", seconds(split));
  cell += fmt::format("; stale writes: {} rejected by fencing, {} overwrote newer data",
                      r.report.stale_writes_rejected, r.report.stale_writes_overwriting);
  return cell;
}

std::string quorum_loss_cell(const RunResult& r) {
  if (r.report.store_requests_total == 0) return "not affected (it does not use the store)";
  return fmt::format("{} of stall, {} of split-brain", seconds(r.report.stall_time),
                     seconds(r.report.split_brain_time));
}

std::string crash_cell(const RunResult& r) {
  const auto f = failover_max(r);
  if (!f) return "no failover";
  return fmt::format("{}; {} per election", seconds(*f), messages_cell(r));
}

// The row's failure mode in words, from the partition and pause runs.
std::string failure_mode(const RunResult& partition, const RunResult& pause) {
  std::string mode = partition.report.split_brain_time >= std::chrono::seconds(1)
                         ? "splits under partition (no majority rule)"
                         : "one side leads under partition";
  if (pause.report.split_brain_time > sim::Duration(0)) {
    mode += "; a paused leader overlaps its successor";
  }
  return mode;
}

// The textbook's table, one row per protocol: its strategy, what an election costs, how it
// fails, and the safety and cost figures of the four fault runs (leader crash, partition,
// pause, store quorum loss) summed.
std::string family_table(const std::vector<std::string>& protocols,
                         const std::vector<CompareResult>& results) {
  std::string out =
      "\n## The family, one row per protocol\n\n"
      "Stall, split-brain, stale writes and overwrites are summed over the four fault runs "
      "above (leader crash, partition, pause, store quorum loss). Coordinator requests count every "
      "request to the "
      "store, the database or a Redis master: per second while exactly one node leads and no "
      "failover waits, and in the busiest second of the leader-crash failover (the thundering "
      "herd).\n\n"
      "| protocol | strategy | election messages, 8 nodes | failure mode | partition behaviour | "
      "stall | split-brain | stale writes accepted | overwrites | coordinator requests/s, "
      "steady | coordinator requests, busiest second after the leader dies |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < protocols.size(); ++i) {
    const protocols::ProtocolInfo* info = protocols::find_protocol(protocols[i]);
    const RunResult& crash = results[2].runs[i];
    const RunResult& partition = results[3].runs[i];
    const RunResult& pause = results[4].runs[i];
    const RunResult& quorum_loss = results[5].runs[i];
    sim::Duration stall{0};
    sim::Duration split{0};
    std::uint64_t stale = 0;
    std::uint64_t overwrites = 0;
    for (const RunResult* r : {&crash, &partition, &pause, &quorum_loss}) {
      stall += r->report.stall_time;
      split += r->report.split_brain_time;
      stale += r->report.stale_writes_accepted;
      overwrites += r->report.stale_writes_overwriting;
    }
    std::string steady = "no coordinator";
    std::string herd = "no coordinator";
    if (coordinator_requests(crash) > 0) {
      steady = fmt::format("{:.1f}", crash.report.steady_requests_per_second);
      herd = failover_max(crash) ? fmt::format("{}", crash.report.failover_requests_peak)
                                 : std::string("no failover");
    }
    out += fmt::format("| **{}** | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       protocols[i], info != nullptr ? info->description : std::string(),
                       messages_cell(results[0].runs[i]), failure_mode(partition, pause),
                       partition_cell(partition), seconds(stall), seconds(split), stale, overwrites,
                       steady, herd);
  }
  return out;
}

}  // namespace

ComparisonPage comparison_page(const ComparisonPageOptions& options) {
  ComparisonPage page;
  const std::vector<std::string> protocols = protocols::protocol_names();
  const std::vector<Experiment> experiments = {
      {"ring-all-start.json", "Every node starts an election at once (8 nodes)", {}, true},
      {"ring-all-start.json",
       "Every node starts an election at once (16 nodes)",
       {{"nodes", "16"}},
       false},
      {"leader-crash.json", "The leader crashes", {}, true},
      {"partition-minority-leader.json",
       "The leader is cut off with one follower for 40 s",
       {},
       true},
      {"lease-gc-pause-fence.json", "The leader freezes in a 6 s GC pause", {}, true},
      {"store-quorum-loss.json", "The store loses its quorum for 15 s", {}, true},
  };

  std::vector<CompareResult> results;
  for (const Experiment& e : experiments) {
    const std::string path = (std::filesystem::path(options.scenarios_dir) / e.file).string();
    const auto text = read_file(path);
    if (!text) {
      page.problems.push_back(fmt::format("{}: cannot read the file", path));
      continue;
    }
    LoadOptions load;
    load.overrides = e.sets;
    RunOptions run;
    run.timeline = e.picture;
    CompareOutcome outcome = compare_protocols(*text, "scenarios/" + e.file, load, protocols, run);
    if (!outcome.result) {
      page.problems.insert(page.problems.end(), outcome.problems.begin(), outcome.problems.end());
      continue;
    }
    results.push_back(std::move(*outcome.result));
  }
  if (!page.problems.empty()) return page;

  const std::filesystem::path page_dir = std::filesystem::path(options.page_path).parent_path();
  const std::filesystem::path pictures = std::filesystem::path(options.pictures_dir);
  std::string out;
  out +=
      "# Leader election protocols, measured\n\n"
      "The table every textbook prints, filled in by running the scenarios in `scenarios/` under "
      "every protocol, with one seed and one fault schedule per row (a fault aimed at the leader "
      "hits each protocol's own leader). Nothing here is typed by hand: the page and its "
      "pictures are written by\n\n"
      "```sh\n"
      "electsim comparison -o docs/comparison.md --pictures docs/img\n"
      "```\n\n"
      "and the test suite fails when they differ from what electsim measures today. Each row "
      "names the run behind it; `electsim compare FILE` prints its full table, and the pictures "
      "below show every run.\n\n";

  auto header_row = [&] {
    std::string h = "| |";
    std::string rule = "|---|";
    for (const std::string& p : protocols) {
      h += " " + p + " |";
      rule += "---|";
    }
    return h + "\n" + rule + "\n";
  };
  auto row = [&](const std::string& label, const CompareResult& c,
                 const std::function<std::string(const RunResult&)>& cell) {
    std::string line = "| " + label + " |";
    for (const RunResult& r : c.runs) line += " " + cell(r) + " |";
    return line + "\n";
  };

  out += header_row();
  out += row("**Election messages, all start, 8 nodes** (`ring-all-start`)", results[0],
             messages_cell);
  out += row("**Election messages, all start, 16 nodes** (`ring-all-start --set nodes=16`)",
             results[1], messages_cell);
  out += row("**Leader crash: failover; election cost** (`leader-crash`)", results[2], crash_cell);
  out += row("**Partition, leader + 1 follower cut off: who leads** (`partition-minority-leader`)",
             results[3], partition_cell);
  out +=
      row("**Process pause of the leader (6 s)** (`lease-gc-pause-fence`)", results[4], pause_cell);
  out += row("**The store loses quorum for 15 s** (`store-quorum-loss`)", results[5],
             quorum_loss_cell);
  out += row("**Same-epoch leaders, any row**", results[3], [&](const RunResult& r) {
    std::uint64_t total = 0;
    for (const CompareResult& c : results) {
      for (const RunResult& other : c.runs) {
        if (other.info.protocol == r.info.protocol) total += other.report.same_epoch_leaders_total;
      }
    }
    return total == 0 ? std::string("never")
                      : fmt::format("{} pair{}", total, total == 1 ? "" : "s");
  });
  out += row("**Failure mode, as measured**", results[3], [&](const RunResult& r) {
    // The partition row says whether a minority keeps a leader; the pause row whether a leader
    // that does not know it was deposed overlaps its successor.
    for (const RunResult& p : results[4].runs) {
      if (p.info.protocol == r.info.protocol) return failure_mode(r, p);
    }
    return std::string();
  });
  out += family_table(protocols, results);
  out +=
      "\nElection messages count the protocol's own election messages (Bully: Election, Answer, "
      "Coordinator; Ring: Election, Elected, Ack; Raft: RequestVote and its replies) per "
      "election, not the heartbeats every protocol pays to stay elected. A protocol that elects "
      "through a coordinator (the store, the database, the Redis masters) pays in requests "
      "instead: the requests sent before the first leader led. A stale write is one whose token is "
      "below "
      "the newest epoch already granted; it *overwrote newer data* when the sink had already "
      "accepted a higher token (fencing rejects exactly those). Definitions: "
      "[metrics.md](metrics.md).\n";

  for (std::size_t i = 0; i < experiments.size(); ++i) {
    const Experiment& e = experiments[i];
    if (!e.picture) continue;
    const std::string stem = std::filesystem::path(e.file).stem().string();
    const std::string svg_name = "compare-" + stem + ".svg";
    const std::filesystem::path svg_path = pictures / svg_name;
    std::vector<const drawing::Timeline*> timelines;
    std::vector<std::string> titles;
    for (const RunResult& r : results[i].runs) {
      timelines.push_back(r.timeline ? &*r.timeline : nullptr);
      titles.push_back(r.info.protocol);
    }
    page.files.push_back({svg_path.string(), drawing::render_timelines_svg(timelines, titles)});
    out += fmt::format("\n## {}\n\n", e.title);
    out += fmt::format("`electsim compare scenarios/{} --svg {}` (seed {})\n\n", e.file, svg_name,
                       results[i].runs.front().info.seed);
    out += fmt::format("![{}]({})\n", e.title,
                       svg_path.lexically_relative(page_dir.empty() ? "." : page_dir).string());
  }
  page.files.insert(page.files.begin(), io::OutputFile{options.page_path, out});
  return page;
}

}  // namespace electsim::runner
