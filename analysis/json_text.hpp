// JSON string literals written straight into a text buffer, for the writers that must not build
// a JSON object per event (the JSON Lines trace, the Perfetto export, the replay page's data).
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <string_view>

namespace electsim::analysis {

// Appends `s` as a quoted JSON string: '"' and '\' escaped, control characters as \u00XX, every
// other byte as is (UTF-8 passes through). With `script_safe`, '<', '>' and '&' are written as \u
// escapes too, so the text can sit inside an HTML <script> element without closing it.
inline void append_json_string(std::string& out, std::string_view s, bool script_safe = false) {
  out += '"';
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20 || (script_safe && (ch == '<' || ch == '>' || ch == '&'))) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    } else {
      out += ch;
    }
  }
  out += '"';
}

}  // namespace electsim::analysis
