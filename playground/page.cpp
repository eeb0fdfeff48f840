// The playground page: see playground/page.hpp.
#include "playground/page.hpp"

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "playground/experiments.hpp"

namespace electsim::playground {

namespace {

#include "playground/page.inc"

// JSON inside a <script> element: "</" would end the element early, so it is written "<\/",
// which JSON reads back as the same two characters.
std::string script_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string render_page(const PageInput& input) {
  nlohmann::json experiments = nlohmann::json::array();
  for (const Experiment& x : playground::experiments()) {
    experiments.push_back({{"id", x.id},
                           {"title", x.title},
                           {"family", x.family},
                           {"text", x.text},
                           {"question", x.question},
                           {"answer", x.answer},
                           {"scenario", x.scenario}});
  }
  nlohmann::json scenarios = nlohmann::json::array();
  for (const PageScenario& s : input.scenarios) {
    scenarios.push_back({{"id", s.id}, {"title", s.title}, {"text", s.text}});
  }
  const nlohmann::json data = {
      {"experiments", experiments}, {"scenarios", scenarios}, {"open", input.open}};

  std::string html;
  html.reserve(input.module_js.size() + 200'000);
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>electsim playground</title>\n<style>\n";
  for (const std::string_view part : kPlaygroundStyle) html += part;
  html += "</style>\n</head>\n<body>\n";
  for (const std::string_view part : kPlaygroundBody) html += part;
  html += "<script type=\"application/json\" id=\"pg-data\">";
  html += script_json(data);
  html += "</script>\n<script id=\"electsim-module\">\n";
  html += input.module_js;
  html += "\n</script>\n<script>\n";
  for (const std::string_view part : kPlaygroundScript) html += part;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace electsim::playground
