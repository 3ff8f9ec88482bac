// recrawl_sim: the simulator and policy-library command line.
//
//   recrawl_sim value --policy=greedy_ncis --importance=0.01 --change_rate=1
//       --recall=0.5 --false_rate=0.3 --tau=2 [--cis_count=1]
//   recrawl_sim solve --solver=baseline --bandwidth=100 --pages=pages.csv
//   recrawl_sim fig6 [--reps=100 --seed=1 --threads=2 --m=100,1000
//       --policies=GREEDY,GREEDY-NCIS --horizon=1000 --csv=f.csv --plot=f.png]
//   recrawl_sim fig12 [same flags; one --m]     App. D, bandwidth 100 -> 150 -> 100
//   recrawl_sim appE [--reps --seed --threads --horizon --csv --plot]   App. E
//   recrawl_sim learn [--world=fig6,semi --m --policies --horizon
//       --pages_per_host --host_zipf --host_noise, and the
//       flags above]   true parameters vs learnt online (App. E)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/appendix_commands.h"
#include "sim/experiment_command.h"
#include "sim/pages_csv.h"
#include "sim/policies.h"
#include "sim/solve_command.h"
#include "sim/value_command.h"
#include "sim/world.h"

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

ABSL_FLAG(int, reps, 0, "experiments: repetitions (default 100; semi 10; learn 20)");
ABSL_FLAG(uint64_t, seed, 1, "experiments: random seed");
ABSL_FLAG(int, threads, 2, "experiments: worker threads (results do not depend on it)");
ABSL_FLAG(std::string, m, "",
          "experiments: comma-separated page counts replacing the paper's (fig12: one; "
          "not appE)");
ABSL_FLAG(std::string, policies, "",
          "experiments: comma-separated policies replacing the paper's, e.g. GREEDY,GREEDY-NCIS "
          "(not appE)");
ABSL_FLAG(double, horizon, 0,
          "experiments: simulated time (default: the paper's; fig12's bandwidth switches keep "
          "their share of it; appE: each page's time span)");
ABSL_FLAG(std::string, world, "fig6",
          "learn: comma-separated worlds, fig6 (fig6's page counts by default) and/or semi "
          "(Sec. 6.7 scaled to m = 10000, R = 500)");
ABSL_FLAG(double, pages_per_host, 0,
          "learn: give the worlds host structure with this mean number of pages a host "
          "(Zipf-sized hosts sharing Δ, λ, ν up to noise; 0: none)");
ABSL_FLAG(double, host_zipf, 1.0, "learn: Zipf exponent of the host sizes");
ABSL_FLAG(double, host_noise, 0.3,
          "learn: noise of a page's parameters around its host's (log sd of Δ and ν, logit sd "
          "of λ)");
ABSL_FLAG(std::string, csv, "", "experiments: write the results in long form to this CSV");
ABSL_FLAG(std::string, plot, "", "experiments: draw the results to this PNG (gnuplot)");

namespace recrawl {
namespace sim {
namespace {

// learn's default repetitions: a repetition of fig6's six page counts and
// semi runs 5 policies in ~26 s of CPU, so 20 take ~9 min on one core and 100
// ~45 min; at 20 the paired gaps have standard errors of 0.01-0.1 points
// (docs/results.md, "Learning").
constexpr int kLearnReps = 20;

// Experiments outside the grid of paper_experiments.h.
const std::vector<std::string>& AppendixExperimentNames() {
  static const auto* names = new std::vector<std::string>{"fig12", "appE", "learn"};
  return *names;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> AllExperimentNames() {
  std::vector<std::string> out = ExperimentNames();
  out.insert(out.end(), AppendixExperimentNames().begin(), AppendixExperimentNames().end());
  return out;
}

bool KnownPolicy(const std::string& name) {
  if (Contains(PolicyNames(), name) || ParseHostPriorWeights(name).has_value()) return true;
  int j;
  return absl::StartsWith(name, "G-NCIS-APPROX-") &&
         absl::SimpleAtoi(name.substr(strlen("G-NCIS-APPROX-")), &j) && j >= 1;
}

absl::Status RunPaperExperiment(const std::string& name) {
  ExperimentCommandOptions o;
  o.experiment = name;
  o.run.reps = absl::GetFlag(FLAGS_reps);
  if (o.run.reps == 0) o.run.reps = name == "semi" ? 10 : name == "learn" ? kLearnReps : 100;
  if (o.run.reps < 1) return absl::InvalidArgumentError("--reps must be at least 1");
  o.run.seed = absl::GetFlag(FLAGS_seed);
  o.run.threads = absl::GetFlag(FLAGS_threads);
  if (o.run.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  for (absl::string_view m : absl::StrSplit(absl::GetFlag(FLAGS_m), ',', absl::SkipEmpty())) {
    int v;
    if (!absl::SimpleAtoi(m, &v) || v < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--m: bad page count '", m, "'"));
    }
    o.overrides.m.push_back(v);
  }
  o.overrides.policies = absl::StrSplit(absl::GetFlag(FLAGS_policies), ',', absl::SkipEmpty());
  for (const std::string& p : o.overrides.policies) {
    if (!KnownPolicy(p)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--policies: unknown policy '", p, "' (known: ", absl::StrJoin(PolicyNames(), ","), ")"));
    }
  }
  o.overrides.horizon = absl::GetFlag(FLAGS_horizon);
  if (!(o.overrides.horizon >= 0) || !std::isfinite(o.overrides.horizon)) {
    return absl::InvalidArgumentError("--horizon must be a positive time (0: the paper's)");
  }
  o.csv = absl::GetFlag(FLAGS_csv);
  o.plot = absl::GetFlag(FLAGS_plot);
  if (name == "fig12") return RunBandwidthCommand(o, std::cout);
  if (name == "appE") return RunEstimatorCommand(o, std::cout);
  if (name == "learn") {
    const std::vector<std::string> worlds =
        absl::StrSplit(absl::GetFlag(FLAGS_world), ',', absl::SkipEmpty());
    HostStructure hosts;
    hosts.mean_pages_per_host = absl::GetFlag(FLAGS_pages_per_host);
    hosts.zipf_exponent = absl::GetFlag(FLAGS_host_zipf);
    hosts.noise = absl::GetFlag(FLAGS_host_noise);
    return RunLearningCommand(o, worlds, std::cout, hosts);
  }
  return RunExperimentCommand(o, std::cout);
}

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
    return absl::Status(pages.status().code(), absl::StrCat("--pages: ", pages.status().message()));
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
      "  solve  optimal continuous policy for a CSV table of pages\n"
      "  fig3 fig4 fig6 fig11 semi  the main paper's experiments (markdown table)\n"
      "  fig12  accuracy over time while the bandwidth goes 100 -> 150 -> 100 (App. D)\n"
      "  appE   bias of the naive and the MLE signal-quality estimates (App. E)\n"
      "  learn  GREEDY-NCIS with true parameters vs learnt online (App. E)");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::cerr
        << "error: expected exactly one command (value, solve or an experiment); see --help\n";
    return 2;
  }
  const std::string command = args[1];
  absl::Status status;
  if (command == "value") {
    status = recrawl::sim::Value();
  } else if (command == "solve") {
    status = recrawl::sim::Solve();
  } else if (recrawl::sim::Contains(recrawl::sim::AllExperimentNames(), command)) {
    status = recrawl::sim::RunPaperExperiment(command);
  } else {
    std::cerr << "error: unknown command '" << command << "' (expected value, solve, "
              << absl::StrJoin(recrawl::sim::AllExperimentNames(), ", ") << ")\n";
    return 2;
  }
  if (!status.ok()) {
    std::cerr << "error: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
