// The shortest text that reads back as the same double ("0.5", "1e-05", "1234567"), written the
// way std::to_chars(double) writes it (C++17 [charconv.to.chars]: the fewer characters of fixed
// and scientific, fixed on a tie, an integer in fixed form written exactly). Its own code, so
// that every standard library gives the same digits: libc++ 14, which the WebAssembly build
// uses, has no to_chars for doubles.
#pragma once

#include <string>

namespace electsim::sim {

std::string shortest_number(double x);

}  // namespace electsim::sim
