// "Learning" (docs/results.md): does a shard that learns each page's
// (Δ, λ, ν) online (learning_scheduler.h, the shard's App. E learner) reach within 1
// point of the accuracy of one given the true parameters?
//
// Every repetition draws an instance of a world (fig6's by default: μ, Δ ~
// U[0, 1], λ ~ Beta(0.25, 0.25), ν ~ U(0.1, 0.6), R = 100), one realisation
// of its changes, signals and requests, and runs every policy on it (common
// random numbers). The learning policies start from the population prior
// and only see crawl outcomes and signals, so early crawls rank by the
// prior; the accuracy is therefore reported over the whole run, over its
// last part, and over consecutive time windows. The gap of a learner to its
// true-parameter reference is the mean of the paired per-repetition
// differences, whose standard error excludes the instance-to-instance spread
// the two share.
#ifndef RECRAWL_SIM_LEARNING_EXPERIMENT_H_
#define RECRAWL_SIM_LEARNING_EXPERIMENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/experiment.h"
#include "sim/paper_experiments.h"
#include "sim/report.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {

struct LearningSetting {
  std::string world;  // "fig6" or "semi"
  WorldConfig config;
  // Optional: the pages of instance n (default GenerateInstance).
  std::function<Instance(uint64_t seed, uint64_t n)> make_instance;
  // Host structure added to every instance (off by default).
  HostStructure hosts;
};

struct LearningExperiment {
  std::string title;
  std::vector<LearningSetting> settings;
  std::vector<std::string> policies;
  // (reference, learner): the table reports reference − learner, paired.
  std::vector<std::pair<std::string, std::string>> gaps;
  // The "last part" of a run: its last `last_share` of the horizon.
  double last_share = 0.25;
  // The time series: the horizon cut into this many equal windows.
  int series_windows = 10;
};

// Worlds "fig6" (fig6's m ∈ {100, 200, 500, 750, 1000, 10000}, t <= 1000)
// and "semi" (Sec. 6.7
// scaled to m = 10000 pages, R = 500, t <= 200); overrides replace the page
// counts, policies and horizon. Default policies: GREEDY-NCIS,
// GREEDY-NCIS-LEARN, GREEDY-NCIS-PRIOR, GREEDY, GREEDY-LEARN, and
// GREEDY-NCIS-LEARN-HOST after GREEDY-NCIS-LEARN when `hosts` is enabled;
// gaps of each -LEARN and -LEARN-HOST policy to its true-parameter policy
// when both are run; a GREEDY-NCIS-LEARN-HOST-A<a>-G<g> policy
// (policies.h) gets its gap to GREEDY-NCIS and its paired difference to
// GREEDY-NCIS-LEARN-HOST (positive: the variant is better) when they are
// run. `hosts` gives every world host structure (world.h,
// AddHostStructure); InvalidArgument if it is invalid, or if a host-pooled
// learner is asked for without it.
absl::StatusOr<LearningExperiment> LearnExperiment(const std::vector<std::string>& worlds,
                                                   const ExperimentOverrides& overrides,
                                                   const HostStructure& hosts = {});

// The windows (from, to] a setting is scored over: [0] the whole run, [1]
// its last part, then the series_windows consecutive windows.
std::vector<std::pair<double, double>> LearningWindows(const LearningExperiment& e,
                                                       const LearningSetting& s);

struct LearningResult {
  // accuracy[setting][window][policy], gap[setting][window][gap]: mean ±
  // standard error over the repetitions.
  std::vector<std::vector<std::vector<MeanSe>>> accuracy;
  std::vector<std::vector<std::vector<MeanSe>>> gap;
  double seconds = 0.0;
};

// Deterministic for a seed whatever the number of threads.
absl::StatusOr<LearningResult> RunLearningExperiment(const LearningExperiment& e,
                                                     const RunOptions& o);

// Table: one row per (setting, whole run | last part), one column per
// policy and per gap. CSV (long form): world, m, horizon, from, to, policy,
// accuracy, stderr, for every window, with gaps as policy "REF - LEARNER".
// Plot: each gap per time window against the window's middle as a share of
// the horizon, one line per (gap, setting); without gaps, the policies'
// accuracies.
Report LearningReport(const LearningExperiment& e, const LearningResult& r, const RunOptions& o);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_LEARNING_EXPERIMENT_H_
