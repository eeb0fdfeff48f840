// Shortest round-trip text of a double: see sim/number_text.hpp.
#include "sim/number_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace electsim::sim {

namespace {

// The decimal digits (no point) and the exponent of the first of them of `text`, a "%.*e"
// rendering of a positive double ("1.25e+02": "125", 2).
void split_scientific(const char* text, std::string& digits, int& exponent) {
  digits.clear();
  const char* p = text;
  for (; *p != 'e'; ++p) {
    if (*p != '.') digits += *p;
  }
  exponent = std::atoi(p + 1);
}

bool reads_back(const std::string& digits, int exponent, double x) {
  std::string text = digits.substr(0, 1);
  if (digits.size() > 1) text += "." + digits.substr(1);
  text += "e" + std::to_string(exponent);
  return std::strtod(text.c_str(), nullptr) == x;
}

// The decimal one unit of the last digit away from `digits` (up or down), carrying and
// borrowing across digits; false where it would change the number of digits.
bool step_last_digit(std::string& digits, int& exponent, bool up) {
  int i = static_cast<int>(digits.size()) - 1;
  if (up) {
    while (i >= 0 && digits[static_cast<std::size_t>(i)] == '9')
      digits[static_cast<std::size_t>(i--)] = '0';
    if (i < 0) {
      // 99..9 + 1 = 100..0: one more digit in front; the last one, a zero, goes.
      digits.insert(digits.begin(), '1');
      digits.pop_back();
      ++exponent;
      return true;
    }
    ++digits[static_cast<std::size_t>(i)];
    return true;
  }
  while (i >= 0 && digits[static_cast<std::size_t>(i)] == '0')
    digits[static_cast<std::size_t>(i--)] = '9';
  if (i < 0) return false;
  --digits[static_cast<std::size_t>(i)];
  if (digits[0] == '0') {
    // 10..0 - 1 = 9..9 with one digit less in front: keep the count with a trailing 9.
    if (digits.size() == 1) return false;
    digits.erase(digits.begin());
    digits += '9';
    --exponent;
  }
  return true;
}

}  // namespace

std::string shortest_number(double x) {
  if (std::isnan(x)) return std::signbit(x) ? "-nan" : "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0" : "0";
  const bool negative = x < 0;
  const double a = std::fabs(x);

  // The fewest significant digits that read back as `a`: the correctly rounded ones, or, next to
  // a power of two (where the doubles below are twice as dense as those above), the neighbour on
  // the wider side.
  std::string digits;
  int exponent = 0;
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", precision - 1, a);
    split_scientific(buffer, digits, exponent);
    if (reads_back(digits, exponent, a)) break;
    bool found = false;
    for (const bool up : {true, false}) {
      std::string d = digits;
      int e = exponent;
      if (step_last_digit(d, e, up) && reads_back(d, e, a)) {
        digits = d;
        exponent = e;
        found = true;
        break;
      }
    }
    if (found) break;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int n = static_cast<int>(digits.size());

  std::string scientific = digits.substr(0, 1);
  if (n > 1) scientific += "." + digits.substr(1);
  std::snprintf(buffer, sizeof(buffer), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  scientific += buffer;

  std::string fixed;
  if (exponent >= n - 1) {
    // A whole number, written exactly as printf's %.0f writes it; past 10^24 it is longer than
    // any scientific form, so it is not written at all.
    if (exponent > 24) return negative ? "-" + scientific : scientific;
    std::snprintf(buffer, sizeof(buffer), "%.0f", a);
    fixed = buffer;
  } else if (exponent >= 0) {
    fixed = digits.substr(0, static_cast<std::size_t>(exponent + 1)) + "." +
            digits.substr(static_cast<std::size_t>(exponent + 1));
  } else {
    fixed = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  }
  const std::string& shortest = scientific.size() < fixed.size() ? scientific : fixed;
  return negative ? "-" + shortest : shortest;
}

}  // namespace electsim::sim
