// A small well-formedness check for the SVG and XML the renderers write, shared by their tests:
// every element opened is closed in order, attributes are name="value" with no '<' or bare '&'
// inside, text has no bare '&', and there is exactly one root element. No XML library needed.
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace electsim::test {

inline bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == ':';
}

// The error after `pos` if an '&' there does not start an entity this renderer may write.
inline std::string check_entity(const std::string& doc, std::size_t pos) {
  for (const char* entity : {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"}) {
    if (doc.compare(pos, std::string(entity).size(), entity) == 0) return "";
  }
  return "bare '&' at " + std::to_string(pos);
}

// A tag-balance checker: every element opened is closed in order, attributes are name="value"
// with no '<' or bare '&' inside, text has no bare '&', and there is exactly one root element.
// Returns "" for a well-formed document, else what is wrong.
inline std::string well_formed_error(const std::string& doc) {
  std::size_t pos = 0;
  const std::string prolog = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
  if (doc.compare(0, prolog.size(), prolog) == 0) pos = prolog.size();
  std::vector<std::string> open;
  int roots = 0;
  while (pos < doc.size()) {
    const char c = doc[pos];
    if (c != '<') {
      if (c == '&') {
        if (std::string e = check_entity(doc, pos); !e.empty()) return e;
      }
      if (c == '>') return "bare '>' in text at " + std::to_string(pos);
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c))) {
        return "text outside the root at " + std::to_string(pos);
      }
      ++pos;
      continue;
    }
    if (doc.compare(pos, 2, "</") == 0) {
      const std::size_t end = doc.find('>', pos);
      if (end == std::string::npos) return "unterminated closing tag";
      const std::string name = doc.substr(pos + 2, end - pos - 2);
      if (open.empty() || open.back() != name) {
        return "closing </" + name + "> does not match <" + (open.empty() ? "" : open.back()) + ">";
      }
      open.pop_back();
      pos = end + 1;
      continue;
    }
    ++pos;
    std::size_t start = pos;
    while (pos < doc.size() && is_name_char(doc[pos])) ++pos;
    const std::string name = doc.substr(start, pos - start);
    if (name.empty()) return "'<' without an element name at " + std::to_string(start);
    if (open.empty()) ++roots;
    while (true) {
      while (pos < doc.size() && std::isspace(static_cast<unsigned char>(doc[pos]))) ++pos;
      if (pos >= doc.size()) return "unterminated <" + name + ">";
      if (doc.compare(pos, 2, "/>") == 0) {
        pos += 2;
        break;
      }
      if (doc[pos] == '>') {
        open.push_back(name);
        ++pos;
        break;
      }
      start = pos;
      while (pos < doc.size() && is_name_char(doc[pos])) ++pos;
      if (pos == start) return "bad character in <" + name + "> at " + std::to_string(pos);
      if (pos + 1 >= doc.size() || doc[pos] != '=' || doc[pos + 1] != '"') {
        return "unquoted attribute in <" + name + "> at " + std::to_string(pos);
      }
      pos += 2;
      const std::size_t close = doc.find('"', pos);
      if (close == std::string::npos) return "unterminated attribute in <" + name + ">";
      for (std::size_t i = pos; i < close; ++i) {
        if (doc[i] == '<') return "'<' in an attribute of <" + name + ">";
        if (doc[i] == '&') {
          if (std::string e = check_entity(doc, i); !e.empty()) return e;
        }
      }
      pos = close + 1;
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

}  // namespace electsim::test
