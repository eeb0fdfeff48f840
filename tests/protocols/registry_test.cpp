// Tests of the protocols' parameter tables (protocols/registry.hpp, params/params.hpp): every
// default a table shows is the value the reader applies, every range it shows is the range the
// protocol enforces, and docs/scenario-format.md carries the tables as the registry prints them.
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "params/params.hpp"
#include "protocols/registry.hpp"
#include "tests/files.hpp"

namespace {

using electsim::params::ParamReader;
using electsim::params::ParamSpec;
using electsim::params::ParamType;
using electsim::params::ParamValue;
using electsim::params::Problems;
using electsim::protocols::ClusterInfo;
using electsim::protocols::ProtocolInfo;
using electsim::sim::Duration;
using nlohmann::json;

// The value a user writes for `text` in a parameter of this type: durations, choices and texts
// are strings, the rest JSON literals.
json written(const ParamSpec& spec, const std::string& text) {
  switch (spec.type) {
    case ParamType::duration:
    case ParamType::distribution:
    case ParamType::choice:
    case ParamType::text:
      return json(text);
    case ParamType::boolean:
    case ParamType::integer:
    case ParamType::number:
    case ParamType::probability:
    case ParamType::object:
      return json::parse(text);
  }
  return json();
}

// What the reader makes of the parameter in `params`, typed as the spec's default.
ParamValue read_back(const ParamSpec& spec, std::span<const ParamSpec> table, const json& params,
                     Problems& problems) {
  ParamReader reader(params, "/protocol", table, problems);
  switch (spec.type) {
    case ParamType::duration:
      return reader.duration(spec.name);
    case ParamType::distribution:
      return reader.distribution(spec.name).value;
    case ParamType::boolean:
      return reader.boolean(spec.name);
    case ParamType::integer:
      return reader.integer(spec.name);
    case ParamType::probability:
      return std::int64_t{reader.probability(spec.name)};
    case ParamType::number:
      return reader.number(spec.name);
    case ParamType::choice:
      return reader.choice(spec.name);
    case ParamType::text:
      return reader.text(spec.name);
    case ParamType::object:
      break;
  }
  return {};
}

ClusterInfo cluster() {
  ClusterInfo c;
  c.node_count = 3;
  return c;
}

}  // namespace

TEST_CASE("registry: every protocol runs with no parameters given") {
  for (const ProtocolInfo& p : electsim::protocols::all_protocols()) {
    INFO(p.name);
    Problems problems;
    CHECK(p.prepare(json::object(), "/protocol", cluster(), problems).has_value());
    CHECK(problems.empty());
  }
}

TEST_CASE("registry: the default a table shows is the one the reader applies, and in range") {
  std::size_t typed = 0;
  for (const ProtocolInfo& p : electsim::protocols::all_protocols()) {
    for (const ParamSpec& spec : p.params) {
      if (spec.default_value.index() == 0) {
        // A default that depends on other values is described, never left blank.
        CHECK_FALSE(spec.default_note.empty());
        continue;
      }
      ++typed;
      const std::string text = electsim::params::default_text(spec);
      INFO(p.name << "." << spec.name << " = " << text);
      Problems problems;
      const ParamValue absent = read_back(spec, p.params, json::object(), problems);
      const json given = json{{spec.name, written(spec, text)}};
      const ParamValue shown = read_back(spec, p.params, given, problems);
      CHECK(problems.empty());
      CHECK(absent == spec.default_value);
      CHECK(shown == spec.default_value);
    }
  }
  CHECK(typed >= 40);
}

TEST_CASE("registry: a value past a parameter's stated range is refused at its pointer") {
  std::size_t bounds = 0;
  for (const ProtocolInfo& p : electsim::protocols::all_protocols()) {
    for (const ParamSpec& spec : p.params) {
      const std::string range = electsim::params::range_text(spec);
      // Just outside each bound, written as a user would.
      std::vector<json> outside;
      for (int side : {-1, 1}) {
        const ParamValue& bound = side < 0 ? spec.min : spec.max;
        if (const auto* d = std::get_if<Duration>(&bound); d != nullptr) {
          const Duration past = *d + side * Duration(1);
          if (past >= Duration(0)) outside.emplace_back(electsim::sim::format_duration(past));
        } else if (const auto* n = std::get_if<std::int64_t>(&bound); n != nullptr) {
          outside.emplace_back(*n + side);
        } else if (const auto* x = std::get_if<double>(&bound); x != nullptr) {
          outside.emplace_back(*x + side * 0.5);
        }
      }
      for (const json& value : outside) {
        ++bounds;
        INFO(p.name << "." << spec.name << " = " << value.dump() << ", range " << range);
        Problems problems;
        CHECK_FALSE(p.prepare(json{{spec.name, value}}, "/protocol", cluster(), problems));
        REQUIRE_FALSE(problems.empty());
        CHECK(problems[0].pointer == "/protocol/" + spec.name);
        CHECK(problems[0].found == value.dump());
      }
    }
  }
  CHECK(bounds >= 30);
}

TEST_CASE("registry: docs/scenario-format.md carries every protocol's parameter table") {
  // On a difference, `electsim list protocols --markdown` prints the tables to paste.
  const std::string doc = electsim::testing::source_file("docs/scenario-format.md");
  const std::string tables = electsim::protocols::protocol_params_markdown();
  CHECK(doc.find(tables) != std::string::npos);
  for (const ProtocolInfo& p : electsim::protocols::all_protocols()) {
    const std::string head = "Parameters of `" + p.name + "`:\n\n";
    INFO(p.name);
    const auto at = doc.find(head);
    REQUIRE(at != std::string::npos);
    const auto table_at = at + head.size();
    const auto end = doc.find("\n\n", table_at);
    REQUIRE(end != std::string::npos);
    CHECK(doc.substr(table_at, end + 1 - table_at) ==
          electsim::params::param_table_markdown(p.params));
  }
}
