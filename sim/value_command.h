// `recrawl_sim value`: one crawl value V(τ_elap + β·n) under a policy.
#ifndef RECRAWL_SIM_VALUE_COMMAND_H_
#define RECRAWL_SIM_VALUE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace recrawl {
namespace sim {

struct ValueOptions {
  std::string policy;  // greedy | greedy_cis | greedy_ncis | approx1 | approx2 ...
  double importance;   // normalised importance μ̃
  double change_rate;  // Δ
  double recall;       // λ
  double false_rate;   // ν
  double tau;          // τ_elap, time since the last crawl
  int64_t cis_count;   // n_cis, signals since the last crawl
};

// Validates the options (errors name the flag, e.g. "--recall must be in
// [0, 1], got 2") and prints V with 17 significant digits on one line.
absl::Status RunValue(const ValueOptions& options, std::ostream& out);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_VALUE_COMMAND_H_
