// The playground's simulator, natively: what the page gets back for a scenario, a bad one, a
// variant and the catalogue, and that a run in the page's slices is the command line's run.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/summary.hpp"
#include "playground/playground.hpp"
#include "protocols/registry.hpp"
#include "runner/loader.hpp"
#include "runner/run.hpp"
#include "tests/files.hpp"

using namespace electsim;
using nlohmann::json;

namespace {

// The summary `electsim run` prints for the file (with --variant when given).
std::string native_summary(const std::string& text, const std::string& variant = "") {
  runner::LoadOptions options;
  if (!variant.empty()) options.variant = variant;
  runner::LoadResult loaded = runner::load_scenario_text(text, "native", options);
  REQUIRE(loaded.scenario);
  const runner::RunResult r = runner::run_scenario(*loaded.scenario, runner::RunOptions{});
  return analysis::format_summary(r.info, r.report, r.verdict);
}

json finish(playground::Playground& p, std::uint64_t slice) {
  int slices = 0;
  while (!json::parse(p.run(slice))["done"].get<bool>()) ++slices;
  INFO("slices " << slices);
  return json::parse(p.result());
}

}  // namespace

TEST_CASE("playground: a scenario run in the page's slices prints what electsim run prints") {
  const std::string text = testing::source_file("scenarios/lease-gc-pause-fence.json");
  playground::Playground p;
  const json opened = json::parse(p.open(text));
  REQUIRE(opened["ok"] == true);
  CHECK(opened["nodes"] == 5);
  CHECK(opened["protocol"] == "lease");
  CHECK(opened["end_ns"] == 30'000'000'000LL);
  CHECK(opened["lease_ttl_ns"] == 2'000'000'000LL);
  CHECK(opened["servers"][0]["name"] == "store");
  const json result = finish(p, 97);
  CHECK(result["summary"] == native_summary(text));
  CHECK(result["verdict"] == "PASS");
  CHECK(result["errors"].empty());
  // The replay page `electsim run --html` writes, with the run's hash in its summary.
  const std::string page = result["page"];
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find(result["hash"].get<std::string>()) != std::string::npos);
}

TEST_CASE("playground: a variant runs as --variant does, and written into the file as well") {
  const std::string text = testing::source_file("scenarios/lease-gc-pause-fence.json");
  playground::Playground p;
  REQUIRE(json::parse(p.open(text, "no-fencing"))["ok"] == true);
  const json by_variant = finish(p, 5000);
  CHECK(by_variant["summary"] == native_summary(text, "no-fencing"));
  CHECK(by_variant["verdict"] == "PASS");  // the variant's own expect block

  const json resolved = json::parse(playground::Playground::variant_document(text, "no-fencing"));
  REQUIRE(resolved["ok"] == true);
  CHECK_FALSE(resolved["document"].contains("variants"));
  CHECK(resolved["document"]["protocol"]["fencing"] == false);
  REQUIRE(json::parse(p.open(resolved["document"].dump()))["ok"] == true);
  const json from_file = finish(p, 5000);
  CHECK(from_file["hash"] == by_variant["hash"]);
  CHECK(from_file["verdict"] == "PASS");  // the variant's expect block came with it

  CHECK(json::parse(playground::Playground::variant_document(text, "nope"))["ok"] == false);
  CHECK(json::parse(playground::Playground::variant_document("{", "x"))["ok"] == false);
}

TEST_CASE("playground: a bad document gets the loader's located messages, and nothing runs") {
  playground::Playground p;
  const json bad =
      json::parse(p.open(R"({"nodes": 5, "protocol": {"name": "lease", "tll": "3s"}})"));
  REQUIRE(bad["ok"] == false);
  const std::string all = bad["problems"].dump();
  CHECK(all.find("playground: at /protocol/tll: expected one of the parameters") !=
        std::string::npos);
  CHECK(all.find("at /duration:") != std::string::npos);
  CHECK(all.find("did you mean \\\"ttl\\\"") != std::string::npos);
  CHECK(json::parse(p.run(10))["done"] == true);
  CHECK(json::parse(p.result())["ok"] == false);
  CHECK(json::parse(p.open("not json"))["ok"] == false);
}

TEST_CASE("playground: a fleet runs without a page, with the command line's summary") {
  const std::string text = testing::source_file("scenarios/fleet-store-pause.json");
  playground::Playground p;
  const json opened = json::parse(p.open(text));
  REQUIRE(opened["ok"] == true);
  CHECK(opened["fleet"] == true);
  const json result = finish(p, 100000);
  CHECK(result["summary"] == native_summary(text));
  CHECK_FALSE(result.contains("page"));
}

TEST_CASE("playground: the catalogue lists every protocol with every parameter") {
  const json catalog = json::parse(playground::Playground::catalog());
  const auto all = protocols::all_protocols();
  REQUIRE(catalog["protocols"].size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const json& entry = catalog["protocols"][i];
    CHECK(entry["name"] == all[i].name);
    REQUIRE(entry["params"].size() == all[i].params.size());
    for (std::size_t k = 0; k < all[i].params.size(); ++k) {
      CHECK(entry["params"][k]["name"] == all[i].params[k].name);
      CHECK(entry["params"][k]["default"] == params::default_text(all[i].params[k]));
    }
  }
}

namespace {

// The part of a replay page between `from` and the next `to`: what the page draws, apart from
// its verdict banner and summary (a trace loaded alone is not judged by its scenario).
constexpr const char* kData = "<script type=\"application/json\" id=\"replay-data\">";

std::string between(const std::string& page, const std::string& from, const std::string& to) {
  const auto start = page.find(from);
  INFO(from);
  REQUIRE(start != std::string::npos);
  const auto end = page.find(to, start);
  REQUIRE(end != std::string::npos);
  return page.substr(start, end - start);
}

}  // namespace

TEST_CASE("playground: a loaded trace is drawn as its run drew it, clocks and lease included") {
  // A lease with drifting clocks, a Redis clock jump on its masters' clocks, a Kubernetes lease
  // judged on the followers' clocks, a replicated store, and Raft without a lease.
  for (const char* name : {"lease-clock-drift", "redlock-clock-jump", "kubernetes-clock-jump",
                           "store-leader-change-stretches-lease", "raft-split-votes"}) {
    INFO(name);
    const std::string text = testing::source_file(std::string("scenarios/") + name + ".json");
    runner::LoadResult loaded = runner::load_scenario_text(text, name, {});
    REQUIRE(loaded.scenario);
    const std::string trace_path =
        (std::filesystem::temp_directory_path() / (std::string("electsim-pg-") + name + ".jsonl"))
            .string();
    const runner::RunResult run = runner::run_scenario(
        *loaded.scenario,
        runner::RunOptions{}.output("trace", trace_path).output("html", "unused.html"));
    REQUIRE(run.errors.empty());
    REQUIRE(run.pictures.size() == 1);
    const std::string& run_page = run.pictures[0].content;
    const std::string trace = testing::slurp(trace_path);
    std::remove(trace_path.c_str());

    const json replayed = json::parse(playground::Playground::replay_trace(trace, "t.jsonl"));
    REQUIRE(replayed["ok"] == true);
    CHECK(replayed["hash"] == run.trace_hash);
    CHECK(replayed["errors"].empty());
    REQUIRE(replayed.contains("page"));
    const std::string page = replayed["page"];
    // The events, the clocks' readings, the lease's draining and the timeline: the same, all but
    // the verdict (the run's own expect block judged it; the trace alone names its harm).
    const auto data = [](const std::string& html) {
      json d = json::parse(between(html, kData, "</script>").substr(std::string(kData).size()));
      d.erase("verdict");
      return d;
    };
    CHECK(data(page) == data(run_page));
    CHECK(between(page, "<section id=\"timeline\"", "</section>") ==
          between(run_page, "<section id=\"timeline\"", "</section>"));
    // Its banner says what a trace alone can say: the harm, never a PASS.
    CHECK(page.find("<b>Not judged</b>") != std::string::npos);
    CHECK(page.find("Verdict: PASS") == std::string::npos);
  }
}

TEST_CASE("playground: a bad trace gets the reader's located message and no page") {
  const json r =
      json::parse(playground::Playground::replay_trace("{\"electsim_trace\": 99}\n", "x.jsonl"));
  CHECK(r["ok"] == false);
  REQUIRE(r["problems"].size() == 1);
  CHECK(r["problems"][0].get<std::string>().rfind("x.jsonl: ", 0) == 0);
  CHECK_FALSE(r.contains("page"));
}
