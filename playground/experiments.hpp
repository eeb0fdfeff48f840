// The playground's guided experiments: the four of the lease lesson (acquire and renew, leader
// crash, GC pause and fence, free play) and one for each other family of protocols. Each is a
// scenario a student plays, a short text saying what to do, a question to answer before playing,
// and the answer, which the page shows once the student has played it. The answers say what the
// scenario shows when the student does what the text asks (tests/playground/experiments_test.cpp
// runs each so and checks the answer's claims).
#pragma once

#include <span>
#include <string>

namespace electsim::playground {

struct Experiment {
  std::string id;  // in the page's URL: #experiment=<id>
  std::string title;
  std::string family;    // "lease", "consensus", "classic", "Redis", "ZooKeeper"
  std::string text;      // what to do
  std::string question;  // to predict before playing
  std::string answer;    // shown once played
  std::string scenario;  // the scenario document, JSON
};

std::span<const Experiment> experiments();

}  // namespace electsim::playground
