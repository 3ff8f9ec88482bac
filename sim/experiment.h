// Runs a grid of settings × repetitions × policies and reports mean ± standard
// error of the accuracy (main paper Sec. 6: 100 repetitions, a new instance
// per repetition, all policies on the same instance and realization).
//
// Work is split over threads by (setting, repetition); every task is a pure
// function of (seed, setting, repetition), so results do not depend on the
// number of threads.
#ifndef RECRAWL_SIM_EXPERIMENT_H_
#define RECRAWL_SIM_EXPERIMENT_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policy/page_model.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {

struct Setting {
  std::vector<std::string> values;  // one per Experiment::columns
  WorldConfig world;
  // Optional: the pages of repetition `rep` (default GenerateInstance).
  std::function<Instance(uint64_t seed, uint64_t rep)> make_instance;
  // Optional: what the policies believe about the pages (default: the truth).
  std::function<std::vector<policy::PageParams>(const Instance&, uint64_t seed, uint64_t rep)>
      make_beliefs;
};

struct Experiment {
  std::string name;
  std::string title;
  std::vector<std::string> columns;  // setting columns, e.g. {"m"}
  std::vector<Setting> settings;
  std::vector<std::string> policies;
};

struct RunOptions {
  int reps = 100;
  uint64_t seed = 1;
  int threads = 2;
};

struct Cell {
  double mean = 0.0;
  double stderr_ = 0.0;        // standard error of the mean over repetitions
  double wasted_share = 0.0;   // mean share of crawls that found no change
  double harmonic_cost = 0.0;  // mean harmonic staleness per request
};

struct ExperimentResult {
  // cells[setting][policy]
  std::vector<std::vector<Cell>> cells;
  double seconds = 0.0;
};

absl::StatusOr<ExperimentResult> RunExperiment(const Experiment& e, const RunOptions& o);

// Markdown table: one row per setting, one column per policy ("mean ± se").
void PrintMarkdown(const Experiment& e, const ExperimentResult& r, std::ostream& out);
// Long form: setting columns, policy, accuracy, stderr, wasted_share,
// harmonic_cost.
absl::Status WriteCsv(const Experiment& e, const ExperimentResult& r, const std::string& path);
// Accuracy against the first setting column (log x when it is "m"), one line
// with error bars per policy, via gnuplot.
absl::Status WritePlot(const Experiment& e, const ExperimentResult& r, const std::string& path);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_EXPERIMENT_H_
