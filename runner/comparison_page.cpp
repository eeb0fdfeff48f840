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
#include <map>
#include <sstream>

#include "analysis/expect.hpp"
#include "drawing/timeline_svg.hpp"
#include "protocols/registry.hpp"
#include "runner/compare.hpp"
#include "runner/loader.hpp"
#include "servers/registry.hpp"

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

// The parameters that keep a silent leader in place (the registry's detection knob), as a run of
// `text` under `protocol` sets them: the file's value, or the default in parentheses.
std::string timing_cell(const std::string& text, const std::string& source,
                        const std::string& protocol, const std::vector<Override>& sets) {
  const protocols::ProtocolInfo* info = protocols::find_protocol(protocol);
  if (info == nullptr) return {};
  if (info->detection.timing_params.empty()) return "none (" + info->detection.what + ")";
  LoadOptions load;
  load.protocol = protocol;
  load.overrides = sets;
  load.all_protocols_run = true;
  const LoadResult loaded = load_scenario_text(text, source, load);
  if (!loaded.scenario) return "?";
  const nlohmann::json& doc = loaded.scenario->document;
  nlohmann::json params = nlohmann::json::object();
  if (doc.contains("protocol") && doc["protocol"].is_object() &&
      doc["protocol"].value("name", std::string()) == protocol) {
    params = doc["protocol"];
  } else if (doc.contains("protocols") && doc["protocols"].contains(protocol)) {
    params = doc["protocols"][protocol];
  }
  std::string cell;
  for (const std::string& name : info->detection.timing_params) {
    // A server's setting ("postgres.tcp_keepalives_idle", "store.tick_time") lives in the
    // server's own section of the file.
    const servers::ServerKindInfo* server_kind = nullptr;
    for (const servers::ServerKindInfo& kind : servers::all_server_kinds()) {
      if (!kind.section.empty() && name.rfind(kind.section + ".", 0) == 0) server_kind = &kind;
    }
    const bool server = server_kind != nullptr;
    const std::string key = server ? name.substr(server_kind->section.size() + 1) : name;
    const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json& holder =
        server ? (doc.contains(server_kind->section) ? doc[server_kind->section] : empty) : params;
    std::string value;
    if (holder.is_object() && holder.contains(key)) {
      value = holder[key].is_string() ? holder[key].get<std::string>() : holder[key].dump();
    } else if (server) {
      const std::string text =
          server_kind->setting_default ? server_kind->setting_default(key) : std::string();
      value = text.empty() ? "?" : "(" + text + ")";
    } else {
      const auto spec = std::find_if(info->params.begin(), info->params.end(),
                                     [&](const params::ParamSpec& s) { return s.name == key; });
      value = spec == info->params.end() ? "?" : "(" + params::default_text(*spec) + ")";
    }
    cell += (cell.empty() ? "" : ", ") + key + " " + value;
  }
  return cell;
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
                         const std::vector<CompareResult>& results,
                         const std::vector<std::string>& timings) {
  std::string out =
      "\n## The family, one row per protocol\n\n"
      "Leaderless time, stall, unresolved failovers, split-brain, stale writes and overwrites are "
      "summed over the four fault runs above (leader crash, partition, pause, store quorum loss); "
      "the longest service outage is the longest time, in any of them, the service could not "
      "write (\"never again\": it never wrote again). Stall is the part of the leaderless time "
      "the coordinator could not grant; a protocol that never recovers shows it in leaderless "
      "time and unresolved failovers, never as a low stall. Each row runs at its own defaults, "
      "named in the timing column: the matched comparison below sets one knob alike for all. "
      "Coordinator requests count every request to the store, the database or a Redis master: "
      "per second while exactly one node leads and no failover waits, and in the busiest second "
      "of the leader-crash failover (the thundering herd).\n\n"
      "| protocol | strategy | timing, as run | election messages, 8 nodes | failure mode | "
      "partition behaviour | leaderless | stall | unresolved failovers | longest service outage "
      "| split-brain | stale writes accepted | overwrites | coordinator requests/s, steady | "
      "coordinator requests, busiest second after the leader dies |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < protocols.size(); ++i) {
    const protocols::ProtocolInfo* info = protocols::find_protocol(protocols[i]);
    const RunResult& crash = results[2].runs[i];
    const RunResult& partition = results[3].runs[i];
    const RunResult& pause = results[4].runs[i];
    const RunResult& quorum_loss = results[5].runs[i];
    sim::Duration stall{0};
    sim::Duration split{0};
    sim::Duration leaderless{0};
    std::uint64_t unresolved = 0;
    std::optional<sim::Duration> outage;
    bool never_again = false;
    std::uint64_t stale = 0;
    std::uint64_t overwrites = 0;
    for (const RunResult* r : {&crash, &partition, &pause, &quorum_loss}) {
      leaderless += r->report.leaderless_time;
      unresolved +=
          static_cast<std::uint64_t>(*analysis::metric_value(r->report, "failovers_unresolved"));
      if (r->report.outage_max && (!outage || *r->report.outage_max > *outage)) {
        outage = r->report.outage_max;
      }
      never_again = never_again || r->report.outages_unresolved > 0;
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
    const std::string outage_cell =
        !outage ? std::string("none")
                : seconds(*outage) + (never_again ? " (never again)" : std::string());
    out += fmt::format(
        "| **{}** | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        protocols[i], info != nullptr ? info->description : std::string(), timings[i],
        messages_cell(results[0].runs[i]), failure_mode(partition, pause),
        partition_cell(partition), seconds(leaderless), seconds(stall), unresolved, outage_cell,
        seconds(split), stale, overwrites, steady, herd);
  }
  return out;
}

// A safety cell of the matched comparison: split-brain, stale writes and overwrites of one run.
std::string harm_cell(const RunResult& r) {
  const analysis::Report& rep = r.report;
  std::string cell = rep.split_brain_time == sim::Duration(0)
                         ? std::string("no split-brain")
                         : fmt::format("**{} of split-brain**", seconds(rep.split_brain_time));
  cell += fmt::format("; stale writes {} accepted, {} rejected; {} overwrites",
                      rep.stale_writes_accepted, rep.stale_writes_rejected,
                      rep.stale_writes_overwriting);
  if (rep.equal_token_writes > 0) {
    cell += fmt::format("; {} equal-token writes", rep.equal_token_writes);
  }
  return cell;
}

std::string outage_text(const RunResult& r) {
  const analysis::Report& rep = r.report;
  if (!rep.outage_max) return "no outage";
  return fmt::format("longest outage {}{}", seconds(*rep.outage_max),
                     rep.outages_unresolved > 0 ? " (never wrote again)" : "");
}

// The matched comparison: the registry's detection knob set alike for every protocol, a crash
// and a pause once shorter and once longer than it.
struct MatchedRun {
  std::string file;
  std::vector<Override> sets;
};

std::string matched_section(const std::vector<std::string>& protocols,
                            const std::vector<CompareResult>& results,
                            const std::vector<std::string>& timings, const std::string& knob,
                            const std::string& below, const std::string& above) {
  std::string out = fmt::format(
      "\n## Matched: one knob alike for every design\n\n"
      "The rows above run each protocol at its own defaults, and defaults differ by an order of "
      "magnitude (a 2 s etcd lease, a 15 s Kubernetes LeaseDuration, a 40 s ZooKeeper session, "
      "Consul's 2 x 15 s + 15 s), so a 6 s pause threatens some and not others. Here the knob "
      "`detection` (how long a silent leader keeps the others from taking over) is set to {} "
      "for every protocol through its registry entry (`electsim compare FILE --set detection={}`"
      ", or `--grid detection=...` in a sweep): the lease TTL, Redlock's expiry, the ZooKeeper "
      "session timeout, Consul's 2 x TTL + lock-delay, client-go's LeaseDuration, PostgreSQL's "
      "keepalive budget, Raft's election timeout, the Bully and Ring failure timeouts. The "
      "database flag has no such time and runs as it is. The leader crashes for 60 s, then freezes "
      "once "
      "for {} (below the knob) and once for {} (above it), at 50 s; every run lasts 150 s.\n\n"
      "| protocol | the knob sets | timing, as run | leader crash (`leader-crash`) | {} pause, "
      "below (`lease-gc-pause-fence`) | {} pause, above |\n"
      "|---|---|---|---|---|---|\n",
      knob, knob, below, above, below, above);
  for (std::size_t i = 0; i < protocols.size(); ++i) {
    const protocols::ProtocolInfo* info = protocols::find_protocol(protocols[i]);
    const RunResult& crash = results[0].runs[i];
    const auto f = failover_max(crash);
    const std::string crash_cell =
        (f ? "failover " + seconds(*f) : std::string("no failover")) + "; " + outage_text(crash);
    out += fmt::format("| **{}** | {} | {} | {} | {}; {} | {}; {} |\n", protocols[i],
                       info != nullptr ? info->detection.what : std::string(), timings[i],
                       crash_cell, harm_cell(results[1].runs[i]), outage_text(results[1].runs[i]),
                       harm_cell(results[2].runs[i]), outage_text(results[2].runs[i]));
  }
  // The closing sentence counts what the runs showed.
  auto split = [&](const CompareResult& c) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < protocols.size(); ++i) {
      if (c.runs[i].report.split_brain_time > sim::Duration(0)) names.push_back(protocols[i]);
    }
    return names;
  };
  auto listed = [](const std::vector<std::string>& names) {
    if (names.empty()) return std::string("none");
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
      out += (i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ")) + names[i];
    }
    return out;
  };
  const auto below_split = split(results[1]);
  const auto above_split = split(results[2]);
  const bool postgres_held =
      std::find(protocols.begin(), protocols.end(), "postgres") != protocols.end() &&
      std::find(above_split.begin(), above_split.end(), "postgres") == above_split.end();
  out += fmt::format(
      "\nWith the knob matched, the pause below it splits {} of {} designs ({}); the pause above "
      "it splits {} ({}). Above the knob what tells the designs apart is what the woken leader "
      "can still do: fencing rejects its stale writes{}.\n",
      below_split.size(), protocols.size(), listed(below_split), above_split.size(),
      listed(above_split),
      postgres_held ? "; the PostgreSQL lock is never taken away, because the server still hears "
                      "the frozen client's kernel answer its keepalives, so it pays in outage "
                      "instead"
                    : "");
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
  std::map<std::string, std::string> texts;
  auto run_experiment = [&](const Experiment& e) -> std::optional<CompareResult> {
    const std::string path = (std::filesystem::path(options.scenarios_dir) / e.file).string();
    const auto text = read_file(path);
    if (!text) {
      page.problems.push_back(fmt::format("{}: cannot read the file", path));
      return std::nullopt;
    }
    texts[e.file] = *text;
    LoadOptions load;
    load.overrides = e.sets;
    load.all_protocols_run = true;
    RunOptions run;
    run.timeline = e.picture;
    CompareOutcome outcome = compare_protocols(*text, "scenarios/" + e.file, load, protocols, run);
    if (!outcome.result) {
      page.problems.insert(page.problems.end(), outcome.problems.begin(), outcome.problems.end());
      return std::nullopt;
    }
    return std::move(*outcome.result);
  };
  const std::string knob = "20s";
  const std::string below = "10s";
  const std::string above = "40s";
  const std::vector<Experiment> matched_experiments = {
      // The faults strike at 50 s, after even a 40 s Raft election timeout has elected.
      {"leader-crash.json",
       "",
       {{"detection", knob},
        {"duration", "150s"},
        {"faults.0.at", "50s"},
        {"faults.0.duration", "60s"}},
       false},
      {"lease-gc-pause-fence.json",
       "",
       {{"detection", knob},
        {"duration", "150s"},
        {"faults.0.at", "50.9633s"},
        {"faults.0.duration", below}},
       false},
      {"lease-gc-pause-fence.json",
       "",
       {{"detection", knob},
        {"duration", "150s"},
        {"faults.0.at", "50.9633s"},
        {"faults.0.duration", above}},
       false},
  };
  std::vector<CompareResult> matched;
  for (const Experiment& e : matched_experiments) {
    if (auto r = run_experiment(e)) matched.push_back(std::move(*r));
  }
  for (const Experiment& e : experiments) {
    if (auto r = run_experiment(e)) results.push_back(std::move(*r));
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
  // What keeps a silent leader in place, as the pause run set it (its file and defaults).
  std::vector<std::string> timings;
  std::vector<std::string> matched_timings;
  for (const std::string& p : protocols) {
    timings.push_back(timing_cell(texts["lease-gc-pause-fence.json"],
                                  "scenarios/lease-gc-pause-fence.json", p, experiments[4].sets));
    matched_timings.push_back(timing_cell(texts["lease-gc-pause-fence.json"],
                                          "scenarios/lease-gc-pause-fence.json", p,
                                          matched_experiments[1].sets));
  }
  out += row("**Timing, as the pause run sets it (defaults in parentheses)**", results[4],
             [&](const RunResult& r) {
               const auto it = std::find(protocols.begin(), protocols.end(), r.info.protocol);
               return it == protocols.end()
                          ? std::string()
                          : timings[static_cast<std::size_t>(it - protocols.begin())];
             });
  out += family_table(protocols, results, timings);
  out += matched_section(protocols, matched, matched_timings, knob, below, above);
  // The footnote names what each figure counts, from the registry the figures come from.
  std::string counted;
  for (const std::string& p : protocols) {
    const protocols::ProtocolInfo* info = protocols::find_protocol(p);
    if (info == nullptr || info->election_message_types.empty()) continue;
    std::string names;
    for (const std::string& t : info->election_message_types) {
      names += (names.empty() ? "" : ", ") + t;
    }
    counted += (counted.empty() ? "" : "; ") + p + ": " + names;
  }
  out +=
      "\nElection messages count the protocol's own election messages (" + counted +
      ") per election, not the heartbeats every protocol pays to stay elected, nor Ring's Acks, "
      "which detect crashed successors. A protocol that elects "
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
