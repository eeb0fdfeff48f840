// Tests of typed parameter reading (params/params.hpp): every reader with good and bad values,
// the located problems it reports, unknown keys with suggestions, probabilities to ppm and
// distribution objects.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "params/params.hpp"

namespace {

using electsim::params::closest_name;
using electsim::params::json_excerpt;
using electsim::params::ParamReader;
using electsim::params::ParamSpec;
using electsim::params::ParamType;
using electsim::params::Problem;
using electsim::params::Problems;
using electsim::sim::Distribution;
using electsim::sim::DistributionKind;
using electsim::sim::Duration;
using nlohmann::json;
using namespace std::chrono_literals;

std::string all_messages(const Problems& problems) {
  std::string out;
  for (const Problem& p : problems) out += p.format() + "\n";
  return out;
}

// One parameter of every type, with literal defaults, plus one without a literal default.
const std::vector<ParamSpec>& specs() {
  static const std::vector<ParamSpec> table = {
      {.name = "ttl", .default_value = Duration(2s), .meaning = "how long a claim lasts"},
      {.name = "renew_interval", .default_note = "ttl/3", .meaning = "renew period"},
      {.name = "fencing",
       .type = ParamType::boolean,
       .default_value = true,
       .meaning = "fence the sink"},
      {.name = "retries",
       .type = ParamType::integer,
       .default_value = std::int64_t{3},
       .meaning = "attempts"},
      {.name = "jitter", .type = ParamType::number, .default_value = 0.5, .meaning = "jitter"},
      {.name = "loss",
       .type = ParamType::probability,
       .default_value = std::int64_t{250'000},
       .meaning = "loss"},
      {.name = "expiry",
       .type = ParamType::choice,
       .default_value = std::string("store"),
       .meaning = "who judges",
       .choices = {"store", "client"}},
      {.name = "work",
       .type = ParamType::distribution,
       .default_value = Duration(1ms),
       .meaning = "work time"},
  };
  return table;
}

}  // namespace

TEST_CASE("params: a problem formats as pointer, expected, found and the hint") {
  Problem p{"/protocol/ttl", "a duration such as \"150ms\" or \"5s\"", "\"ten\"", {}, {}};
  CHECK(p.format() ==
        "at /protocol/ttl: expected a duration such as \"150ms\" or \"5s\", found "
        "\"ten\"");
  p.hint = "did you mean \"renew_interval\"?";
  CHECK(p.format() ==
        "at /protocol/ttl: expected a duration such as \"150ms\" or \"5s\", found "
        "\"ten\"; did you mean \"renew_interval\"?");
  p.context = "--set protocol.ttl=ten";
  CHECK(p.format().rfind("--set protocol.ttl=ten: at /protocol/ttl: expected", 0) == 0);
}

TEST_CASE("params: a problem about the whole document leaves out the pointer") {
  const Problem p{"", "valid JSON", "a syntax error at line 2, column 1", {}, {}};
  CHECK(p.format() == "expected valid JSON, found a syntax error at line 2, column 1");
}

TEST_CASE("params: closest_name suggests a name within a small edit distance") {
  const std::vector<std::string> names = {"ttl", "renew_interval", "renew_deadline", "fencing"};
  const auto [wrong, expected] = GENERATE(table<std::string, std::string>({
      {"tll", "ttl"},
      {"TTL", ""},  // three substitutions in a three-letter word: too far
      {"renew_intervl", "renew_interval"},
      {"renewinterval", "renew_interval"},
      {"renew_dedline", "renew_deadline"},
      {"fenceing", "fencing"},
      {"fencin", "fencing"},
      {"xyz", ""},
      {"completely_different", ""},
      // The first word of a longer name, however far: the first such name listed.
      {"renew", "renew_interval"},
      {"fen", ""},  // a prefix that is not a whole word is no suggestion
      {"renew_", ""},
  }));
  INFO("wrong=" << wrong);
  const auto got = closest_name(wrong, names);
  if (expected.empty()) {
    CHECK_FALSE(got.has_value());
  } else {
    REQUIRE(got.has_value());
    CHECK(*got == expected);
  }
}

TEST_CASE("params: closest_name breaks ties in favour of the name listed first") {
  const std::vector<std::string> ab = {"cat", "car"};
  const std::vector<std::string> ba = {"car", "cat"};
  CHECK(closest_name("caz", ab) == std::optional<std::string>("cat"));
  CHECK(closest_name("caz", ba) == std::optional<std::string>("car"));
}

TEST_CASE("params: json_excerpt shows short values whole and cuts long ones") {
  CHECK(json_excerpt(json("ten")) == "\"ten\"");
  CHECK(json_excerpt(json(5)) == "5");
  const json long_array = json(std::vector<int>(100, 7));
  const std::string excerpt = json_excerpt(long_array);
  CHECK(excerpt.size() < long_array.dump().size());
  CHECK(excerpt.substr(excerpt.size() - 3) == "...");
}

TEST_CASE("params: read_duration accepts strings with units and a bare zero") {
  const auto [text, allow_negative, expected_ns] = GENERATE(table<std::string, bool, std::int64_t>({
      {R"("150ms")", false, 150'000'000},
      {R"("5s")", false, 5'000'000'000},
      {R"("1.5s")", false, 1'500'000'000},
      {R"("250us")", false, 250'000},
      {R"("0s")", false, 0},
      {"0", false, 0},
      {R"("-500ms")", true, -500'000'000},
  }));
  INFO(text);
  Problems problems;
  const auto d = electsim::params::read_duration(json::parse(text), "/x", problems, allow_negative);
  INFO(all_messages(problems));
  REQUIRE(d.has_value());
  CHECK(d->count() == expected_ns);
  CHECK(problems.empty());
}

TEST_CASE("params: read_duration rejects what is not a duration, with what it found") {
  const auto [text, allow_negative, found, hint_part] =
      GENERATE(table<std::string, bool, std::string, std::string>({
          {R"("ten")", false, R"("ten")", ""},
          {"5", false, "5", "durations need a unit"},
          {"1.5", false, "1.5", "durations need a unit"},
          {R"("-1s")", false, R"("-1s")", ""},
          {"true", false, "true", ""},
          {"null", true, "null", ""},
          {R"({"ms": 5})", true, R"({"ms":5})", ""},
      }));
  INFO(text);
  Problems problems;
  const auto d =
      electsim::params::read_duration(json::parse(text), "/protocol/ttl", problems, allow_negative);
  CHECK_FALSE(d.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/ttl");
  CHECK(problems[0].found == found);
  CHECK_THAT(problems[0].expected, Catch::Contains("duration"));
  CHECK_THAT(problems[0].hint, Catch::Contains(hint_part));
  if (!allow_negative) CHECK_THAT(problems[0].expected, Catch::Contains("non-negative"));
}

TEST_CASE("params: probabilities become integer ppm once, rounded to nearest") {
  const auto [text, ppm] = GENERATE(table<std::string, std::uint32_t>({
      {"0", 0},
      {"1", 1'000'000},
      {"0.5", 500'000},
      {"0.01", 10'000},
      {"1e-6", 1},
      {"0.0000006", 1},
      {"0.0000004", 0},
      {"0.1234564", 123'456},
      {"0.1234566", 123'457},
  }));
  INFO(text);
  Problems problems;
  const auto p = electsim::params::read_probability(json::parse(text), "/network/loss", problems);
  REQUIRE(p.has_value());
  CHECK(*p == ppm);
  CHECK(problems.empty());
}

TEST_CASE("params: a probability outside [0, 1] or not a number is a problem") {
  const auto text = GENERATE(as<std::string>{}, "1.5", "-0.1", "2", R"("0.5")", "true", "null");
  INFO(text);
  Problems problems;
  const auto p = electsim::params::read_probability(json::parse(text), "/network/loss", problems);
  CHECK_FALSE(p.has_value());
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/network/loss");
  CHECK_THAT(problems[0].expected, Catch::Contains("probability from 0 to 1"));
  CHECK(problems[0].found == json_excerpt(json::parse(text)));
}

TEST_CASE("params: distributions are a duration or an object of one of six kinds") {
  Problems problems;
  auto read = [&](const char* text) {
    return electsim::params::read_distribution(json::parse(text), "/network/latency", problems);
  };

  const auto constant = read(R"("5ms")");
  REQUIRE(constant);
  CHECK(constant->kind == DistributionKind::constant);
  CHECK(constant->value == 5ms);

  const auto constant_object = read(R"({"dist": "constant", "value": "7ms"})");
  REQUIRE(constant_object);
  CHECK(constant_object->kind == DistributionKind::constant);
  CHECK(constant_object->value == 7ms);

  const auto uniform = read(R"({"dist": "uniform", "min": "1ms", "max": "10ms", "step": "1ms"})");
  REQUIRE(uniform);
  CHECK(uniform->kind == DistributionKind::uniform);
  CHECK(uniform->min == 1ms);
  CHECK(uniform->max == 10ms);
  CHECK(uniform->step == 1ms);

  const auto normal = read(R"({"dist": "normal", "mean": "20ms", "stddev": "5ms"})");
  REQUIRE(normal);
  CHECK(normal->kind == DistributionKind::normal);
  CHECK(normal->mean == 20ms);
  CHECK(normal->stddev == 5ms);
  CHECK(normal->step == Duration(0));

  const auto exponential = read(R"({"dist": "exponential", "mean": "3ms"})");
  REQUIRE(exponential);
  CHECK(exponential->kind == DistributionKind::exponential);
  CHECK(exponential->mean == 3ms);

  const auto lognormal = read(R"({"dist": "lognormal", "median": "200ms", "sigma": 0.5})");
  REQUIRE(lognormal);
  CHECK(lognormal->kind == DistributionKind::lognormal);
  CHECK(lognormal->median == 200ms);
  CHECK(lognormal->sigma == 0.5);

  const auto pareto = read(R"({"dist": "pareto", "scale": "1ms", "shape": 1.5})");
  REQUIRE(pareto);
  CHECK(pareto->kind == DistributionKind::pareto);
  CHECK(pareto->scale == 1ms);
  CHECK(pareto->shape == 1.5);

  CHECK(problems.empty());
}

TEST_CASE("params: a bad distribution is reported at the offending field") {
  const auto [text, pointer, part] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"dist": "uniform", "min": "10ms", "max": "1ms"})", "/d/max", "at least the min"},
      {R"({"dist": "uniform", "min": "1ms"})", "/d/max", "needs \"max\""},
      {R"({"dist": "unifrom", "min": "1ms", "max": "2ms"})", "/d/dist",
       "did you mean \"uniform\"?"},
      {R"({"min": "1ms", "max": "2ms"})", "/d/dist", "needs \"dist\""},
      {R"({"dist": 3})", "/d/dist", "one of \"constant\""},
      {R"({"dist": "normal", "mean": "1ms", "stddev": "1ms", "median": "1ms"})", "/d/median",
       "unknown key \"median\""},
      {R"({"dist": "normal", "mean": "1ms", "stdev": "1ms"})", "/d/stdev",
       "did you mean \"stddev\"?"},
      {R"({"dist": "lognormal", "median": "1ms", "sigma": 0})", "/d/sigma", "above 0"},
      {R"({"dist": "pareto", "scale": "1ms", "shape": -1})", "/d/shape", "above 0"},
      {R"({"dist": "exponential", "mean": "-1ms"})", "/d/mean", "non-negative"},
      {R"({"dist": "uniform", "min": "1ms", "max": "2ms", "step": 5})", "/d/step",
       "durations need a unit"},
      {R"({"dist": "constant", "value": "fast"})", "/d/value", "\"fast\""},
      {R"("-5ms")", "/d", "non-negative"},
      {"[1, 2]", "/d", "distribution object"},
  }));
  INFO(text);
  Problems problems;
  const auto d = electsim::params::read_distribution(json::parse(text), "/d", problems);
  CHECK_FALSE(d.has_value());
  INFO(all_messages(problems));
  // A misspelt key is two problems (unknown key, required key missing); find the one named.
  const std::string wanted = pointer;  // lambdas cannot capture a structured binding in C++20
  const auto it = std::find_if(problems.begin(), problems.end(),
                               [&](const Problem& p) { return p.pointer == wanted; });
  REQUIRE(it != problems.end());
  CHECK_THAT(it->format(), Catch::Contains(part));
  CHECK(problems.size() <= 2);
}

TEST_CASE("params: the unknown-key message names the kind of distribution") {
  Problems problems;
  electsim::params::read_distribution(
      json::parse(R"({"dist": "exponential", "mean": "1ms", "max": "2ms"})"), "/d", problems);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].expected, Catch::Contains("\"exponential\" distribution"));
  CHECK_THAT(problems[0].expected, Catch::Contains("mean"));
}

TEST_CASE("params: reject_unknown_keys reports each unknown key with the closest valid name") {
  const std::vector<std::string> allowed = {"latency", "loss", "duplicate"};
  Problems problems;
  electsim::params::reject_unknown_keys(
      json::parse(R"({"latency": "1ms", "lattency": "2ms", "zzz": 1, "a/b": 2})"), "/network",
      allowed, problems);
  REQUIRE(problems.size() == 3);
  // Object keys come in sorted order; '/' in a key is escaped in the pointer.
  CHECK(problems[0].pointer == "/network/a~1b");
  CHECK(problems[1].pointer == "/network/lattency");
  CHECK(problems[1].hint == "did you mean \"latency\"?");
  CHECK(problems[2].pointer == "/network/zzz");
  CHECK(problems[2].hint.empty());
}

TEST_CASE("params: a reader reports an unknown key once, at construction, with a suggestion") {
  const json params = json::parse(R"({"tll": "3s", "fencing": false})");
  Problems problems;
  ParamReader reader(params, "/protocol", specs(), problems);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/tll");
  CHECK(problems[0].hint == "did you mean \"ttl\"?");
  CHECK(reader.duration("ttl") == 2s);  // the default: "tll" is not "ttl"
  CHECK(reader.boolean("fencing") == false);
  CHECK(problems.size() == 1);
}

TEST_CASE("params: absent parameters give the typed default") {
  Problems problems;
  const json params = json::object();
  ParamReader reader(params, "/protocol", specs(), problems);
  CHECK(reader.duration("ttl") == 2s);
  CHECK(reader.boolean("fencing") == true);
  CHECK(reader.integer("retries") == 3);
  CHECK(reader.number("jitter") == 0.5);
  CHECK(reader.probability("loss") == 250'000u);
  CHECK(reader.choice("expiry") == "store");
  const Distribution work = reader.distribution("work");
  CHECK(work.kind == DistributionKind::constant);
  CHECK(work.value == 1ms);
  CHECK_FALSE(reader.has("ttl"));
  CHECK(problems.empty());
}

TEST_CASE("params: *_opt readers return nothing for absent keys, even with a literal default") {
  Problems problems;
  const json params = json::parse(R"({"renew_interval": "500ms"})");
  ParamReader reader(params, "/protocol", specs(), problems);
  CHECK_FALSE(reader.duration_opt("ttl").has_value());
  CHECK_FALSE(reader.distribution_opt("work").has_value());
  CHECK(reader.duration_opt("renew_interval") == std::optional<Duration>(500ms));
  CHECK(problems.empty());
}

TEST_CASE("params: present parameters of every type are read") {
  Problems problems;
  const json params = json::parse(R"({"ttl": "10s", "renew_interval": "3s", "fencing": false,
      "retries": 7, "jitter": 1.25, "loss": 0.125, "expiry": "client",
      "work": {"dist": "uniform", "min": "1ms", "max": "3ms"}})");
  ParamReader reader(params, "/protocol", specs(), problems);
  CHECK(reader.duration("ttl") == 10s);
  CHECK(reader.duration_opt("renew_interval") == std::optional<Duration>(3s));
  CHECK(reader.boolean("fencing") == false);
  CHECK(reader.integer("retries") == 7);
  CHECK(reader.number("jitter") == 1.25);
  CHECK(reader.probability("loss") == 125'000u);
  CHECK(reader.choice("expiry") == "client");
  const auto work = reader.distribution_opt("work");
  REQUIRE(work.has_value());
  CHECK(work->kind == DistributionKind::uniform);
  CHECK(work->max == 3ms);
  CHECK(reader.has("ttl"));
  CHECK(problems.empty());
}

TEST_CASE("params: a value of the wrong type is a problem at its pointer showing what was found") {
  const auto [key, value, part] = GENERATE(table<std::string, std::string, std::string>({
      {"ttl", R"("ten")", "a non-negative duration"},
      {"ttl", "5", "durations need a unit"},
      {"ttl", R"("-2s")", "a non-negative duration"},
      {"fencing", R"("yes")", "true or false"},
      {"fencing", "1", "true or false"},
      {"retries", "2.5", "a whole number"},
      {"retries", R"("3")", "a whole number"},
      {"retries", "18446744073709551615", "below 2^63"},
      {"jitter", R"("fast")", "a number"},
      {"loss", "1.5", "probability from 0 to 1"},
      {"expiry", R"("clinet")", "did you mean \"client\"?"},
      {"expiry", "true", "one of \"store\", \"client\""},
      {"work", R"({"dist": "uniform", "min": "1ms"})", "needs \"max\""},
  }));
  INFO(key << " = " << value);
  const json params = json::object({{key, json::parse(value)}});
  Problems problems;
  ParamReader reader(params, "/protocol", specs(), problems);
  if (key == "ttl") reader.duration(key);
  if (key == "fencing") reader.boolean(key);
  if (key == "retries") reader.integer(key);
  if (key == "jitter") reader.number(key);
  if (key == "loss") reader.probability(key);
  if (key == "expiry") reader.choice(key);
  if (key == "work") reader.distribution(key);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].pointer, Catch::StartsWith("/protocol/" + key));
  CHECK_THAT(problems[0].format(), Catch::Contains(part));
  if (key != "work") CHECK(problems[0].found == json_excerpt(params.at(key)));
}

TEST_CASE("params: a required parameter that is missing is reported at construction") {
  const std::vector<ParamSpec> table = {
      {.name = "peers",
       .type = ParamType::integer,
       .default_note = "none",
       .meaning = "how many",
       .required = true},
  };
  Problems problems;
  const json params = json::object();
  ParamReader reader(params, "/protocol", table, problems);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/peers");
  CHECK_THAT(problems[0].found, Catch::Contains("required"));
  CHECK(reader.integer("peers") == 0);
  CHECK(problems.size() == 1);
}

TEST_CASE("params: parameters that are not an object are one problem") {
  Problems problems;
  const json params = json::parse("[1, 2]");
  ParamReader reader(params, "/protocol", specs(), problems);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol");
  CHECK(problems[0].found == "[1,2]");
  CHECK_FALSE(reader.has("ttl"));
}

TEST_CASE("params: cross-field problems are recorded at the named field") {
  Problems problems;
  const json params = json::parse(R"({"ttl": "1s", "renew_interval": "2s"})");
  ParamReader reader(params, "/protocol", specs(), problems);
  if (*reader.duration_opt("renew_interval") >= reader.duration("ttl")) {
    reader.problem("renew_interval", "a duration shorter than ttl (1s)",
                   json_excerpt(params.at("renew_interval")));
  }
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].pointer == "/protocol/renew_interval");
  CHECK(reader.pointer_of("a/b") == "/protocol/a~1b");
  CHECK(problems[0].format() ==
        "at /protocol/renew_interval: expected a duration shorter than ttl (1s), found \"2s\"");
}

TEST_CASE("params: node ids are read in order, each bad or repeated one at its own pointer") {
  using electsim::params::read_node_ids;
  using electsim::sim::NodeId;
  Problems problems;
  CHECK(read_node_ids(json::parse("[4, 0, 2]"), "/p", 5, problems) == std::vector<NodeId>{4, 0, 2});
  CHECK(read_node_ids(json::array(), "/p", 0, problems) == std::vector<NodeId>{});
  REQUIRE(problems.empty());

  CHECK_FALSE(read_node_ids(json::parse("[3, 3, 3, 9, -2, true, \"1\", 2.5]"), "/p", 5, problems));
  CHECK(all_messages(problems) ==
        "at /p/1: expected each node id once, found node 3 again (first at /p/0)\n"
        "at /p/2: expected each node id once, found node 3 again (first at /p/0)\n"
        "at /p/3: expected a node id from 0 to 4, found 9\n"
        "at /p/4: expected a node id from 0 to 4, found -2\n"
        "at /p/5: expected a node id from 0 to 4, found true\n"
        "at /p/6: expected a node id from 0 to 4, found \"1\"\n"
        "at /p/7: expected a node id from 0 to 4, found 2.5\n");

  problems.clear();
  CHECK_FALSE(read_node_ids(json::parse("[18446744073709551615, 0]"), "/p", 1, problems));
  CHECK_FALSE(read_node_ids(json::parse("[0]"), "/q", 0, problems));
  CHECK(all_messages(problems) ==
        "at /p/0: expected a node id from 0 to 0, found 18446744073709551615\n"
        "at /q/0: expected a node id, but the cluster has no nodes, found 0\n");
}

TEST_CASE("params: a name or an array of node ids, with a hint for a misspelt name") {
  using electsim::params::NameOrNodeIds;
  using electsim::params::read_name_or_node_ids;
  using electsim::sim::NodeId;
  const std::vector<std::string> names = {"all", "none"};
  const std::string expected = "\"all\", \"none\" or an array of node ids";
  Problems problems;
  CHECK(read_name_or_node_ids(json("none"), "/p", names, expected, 3, problems) ==
        NameOrNodeIds(std::string("none")));
  CHECK(read_name_or_node_ids(json::parse("[2, 0]"), "/p", names, expected, 3, problems) ==
        NameOrNodeIds(std::vector<NodeId>{2, 0}));
  REQUIRE(problems.empty());

  CHECK_FALSE(read_name_or_node_ids(json("nne"), "/p", names, expected, 3, problems));
  CHECK_FALSE(read_name_or_node_ids(json("first"), "/p", names, expected, 3, problems));
  CHECK_FALSE(read_name_or_node_ids(json::parse("{\"a\": 1}"), "/p", names, expected, 3, problems));
  CHECK_FALSE(read_name_or_node_ids(json::parse("[1, 1]"), "/p", names, expected, 3, problems));
  CHECK(all_messages(problems) ==
        "at /p: expected \"all\", \"none\" or an array of node ids, found \"nne\"; did you mean "
        "\"none\"?\n"
        "at /p: expected \"all\", \"none\" or an array of node ids, found \"first\"\n"
        "at /p: expected \"all\", \"none\" or an array of node ids, found {\"a\":1}\n"
        "at /p/1: expected each node id once, found node 1 again (first at /p/0)\n");
}

TEST_CASE("params: a stated range is enforced with the range in words") {
  const std::vector<ParamSpec> bounded = {
      {.name = "timeout",
       .default_value = Duration(1s),
       .min = electsim::params::kShortestTimer,
       .meaning = "a timer"},
      {.name = "delay",
       .default_value = Duration(0s),
       .min = Duration(0s),
       .max = Duration(60s),
       .meaning = "bounded"},
      {.name = "tries",
       .type = ParamType::integer,
       .default_value = std::int64_t{32},
       .min = std::int64_t{1},
       .max = std::int64_t{10'000},
       .meaning = "attempts"},
      {.name = "factor",
       .type = ParamType::number,
       .default_value = 1.2,
       .min = 0.0,
       .max = 10.0,
       .meaning = "jitter"},
  };
  CHECK(electsim::params::range_text(bounded[0]) == "at least 1ms");
  CHECK(electsim::params::range_text(bounded[1]) == "0s to 1m");
  CHECK(electsim::params::range_text(bounded[2]) == "1 to 10000");
  CHECK(electsim::params::range_text(bounded[3]) == "0 to 10");
  CHECK(electsim::params::default_text(bounded[3]) == "1.2");

  const auto [params, expected] = GENERATE(table<std::string, std::string>({
      {R"({"timeout": "999us"})",
       "at /p/timeout: expected a duration of at least \"1ms\" (the shortest protocol timer), "
       "found \"999us\""},
      {R"({"delay": "61s"})",
       "at /p/delay: expected a duration from \"0s\" to \"1m\", found "
       "\"61s\""},
      {R"({"tries": 0})", "at /p/tries: expected a whole number from 1 to 10000, found 0"},
      {R"({"tries": 10001})", "at /p/tries: expected a whole number from 1 to 10000, found 10001"},
      {R"({"factor": 10.5})", "at /p/factor: expected a number from 0 to 10, found 10.5"},
  }));
  INFO(params);
  Problems problems;
  const json object = json::parse(params);
  ParamReader reader(object, "/p", bounded, problems);
  reader.timer("timeout");
  reader.duration("delay");
  reader.integer("tries");
  reader.number("factor");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].format() == expected);
}

TEST_CASE("params: values at a range's ends are accepted") {
  const std::vector<ParamSpec> bounded = {
      {.name = "tries",
       .type = ParamType::integer,
       .default_value = std::int64_t{32},
       .min = std::int64_t{1},
       .max = std::int64_t{10'000},
       .meaning = "attempts"},
  };
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{10'000}}) {
    Problems problems;
    const json object = {{"tries", n}};
    ParamReader reader(object, "/p", bounded, problems);
    CHECK(reader.integer("tries") == n);
    CHECK(problems.empty());
  }
}

TEST_CASE("params: a table is markdown with its defaults, ranges and choices") {
  const std::string md = electsim::params::param_table_markdown(specs());
  CHECK(
      md.starts_with("| parameter | type | default | range | meaning |\n|---|---|---|---|---|\n"));
  CHECK_THAT(md, Catch::Contains("| `ttl` | duration | 2s |  | how long a claim lasts |\n"));
  CHECK_THAT(md, Catch::Contains("| `renew_interval` | duration | ttl/3 |  | renew period |\n"));
  CHECK_THAT(md, Catch::Contains("| `loss` | probability | 0.25 | 0 to 1 | loss |\n"));
  CHECK_THAT(md, Catch::Contains("| `expiry` | `store`, `client` | store |  | who judges |\n"));
}
