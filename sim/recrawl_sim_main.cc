// recrawl_sim: the simulator and policy-library command line.
//
//   recrawl_sim value --policy=greedy_ncis --importance=0.01 --change_rate=1
//       --recall=0.5 --false_rate=0.3 --tau=2 [--cis_count=1]
//   recrawl_sim solve --solver=baseline --bandwidth=100 --pages=pages.csv
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/pages_csv.h"
#include "sim/solve_command.h"
#include "sim/value_command.h"

namespace {
constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
}  // namespace

ABSL_FLAG(std::string, policy, "greedy_ncis",
          "value: greedy, greedy_cis, greedy_ncis, approx1, approx2, ... approxJ");
ABSL_FLAG(double, importance, kUnset, "value: normalised importance μ̃ (required)");
ABSL_FLAG(double, change_rate, kUnset, "value: change rate Δ (required)");
ABSL_FLAG(double, recall, 0.0, "value: signal recall λ in [0, 1]");
ABSL_FLAG(double, false_rate, 0.0, "value: false-signal rate ν");
ABSL_FLAG(double, tau, kUnset, "value: time since the last crawl τ_elap (required)");
ABSL_FLAG(int64_t, cis_count, 0, "value: signals since the last crawl n_cis");
ABSL_FLAG(std::string, solver, "",
          "solve: baseline, baseline_ncis, azar2, lambdacrawl, "
          "lambdacrawl_incompl, lambdacrawl_compl (required)");
ABSL_FLAG(double, bandwidth, kUnset, "solve: total crawl rate R (required)");
ABSL_FLAG(std::string, pages, "",
          "solve: CSV with header importance,change_rate[,recall,false_rate,"
          "complete_obs] (required)");

namespace recrawl {
namespace sim {
namespace {

absl::Status Require(const char* flag, double value) {
  if (std::isnan(value)) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " is required"));
  }
  return absl::OkStatus();
}

absl::Status Value() {
  ValueOptions o;
  o.policy = absl::GetFlag(FLAGS_policy);
  o.importance = absl::GetFlag(FLAGS_importance);
  o.change_rate = absl::GetFlag(FLAGS_change_rate);
  o.recall = absl::GetFlag(FLAGS_recall);
  o.false_rate = absl::GetFlag(FLAGS_false_rate);
  o.tau = absl::GetFlag(FLAGS_tau);
  o.cis_count = absl::GetFlag(FLAGS_cis_count);
  for (auto [flag, value] : {std::pair<const char*, double>{"importance", o.importance},
                             {"change_rate", o.change_rate},
                             {"tau", o.tau}}) {
    if (absl::Status s = Require(flag, value); !s.ok()) return s;
  }
  return RunValue(o, std::cout);
}

absl::Status Solve() {
  SolveOptions o;
  o.solver = absl::GetFlag(FLAGS_solver);
  o.bandwidth = absl::GetFlag(FLAGS_bandwidth);
  if (o.solver.empty()) return absl::InvalidArgumentError("--solver is required");
  if (absl::Status s = Require("bandwidth", o.bandwidth); !s.ok()) return s;
  const std::string path = absl::GetFlag(FLAGS_pages);
  if (path.empty()) return absl::InvalidArgumentError("--pages is required");
  absl::StatusOr<std::vector<PageRow>> pages = ReadPagesCsv(path);
  if (!pages.ok()) {
    return absl::Status(pages.status().code(),
                        absl::StrCat("--pages: ", pages.status().message()));
  }
  return RunSolve(o, *pages, std::cout);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "recrawl_sim <command> [flags]\n"
      "  value  crawl value V(τ_elap + β·n) of one page under a policy\n"
      "  solve  optimal continuous policy for a CSV table of pages");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::cerr << "error: expected exactly one command (value or solve); see --help\n";
    return 2;
  }
  const std::string command = args[1];
  absl::Status status;
  if (command == "value") {
    status = recrawl::sim::Value();
  } else if (command == "solve") {
    status = recrawl::sim::Solve();
  } else {
    std::cerr << "error: unknown command '" << command
              << "' (expected value or solve)\n";
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "error: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
