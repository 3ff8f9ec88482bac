// Main paper App. D, Fig. 12: a discrete policy adapts to a change of the
// total bandwidth without any recomputation. m = 1000 pages (μ, Δ ~ U[0, 1]),
// t <= 400; R starts at 100, rises to 150 at t = 133 and falls back to 100 at
// t = 266. Each policy also runs at the constant bandwidths 100 and 150 (the
// levels it should move between). The metric is the accuracy over the last
// 1000 crawl events at every time step (windowed_accuracy.h).
//
// The paper runs GREEDY only. Other policies can be given: the world has
// fig. 6's signals (λ ~ Beta(0.25, 0.25), ν ~ U(0.1, 0.6)) so that the
// signal-using ones have something to use; GREEDY ignores them, and the
// pages' μ, Δ, changes and requests do not depend on them, so GREEDY's
// numbers are those of the no-signal setting the paper describes. Rate-based
// policies (LDS, LAMBDACRAWL, ...) plan for R(0) and keep those rates; the
// analytic BASELINE / BASELINE-NCIS give the optimal continuous policy's
// expected accuracy re-solved for R(t).
#ifndef RECRAWL_SIM_BANDWIDTH_EXPERIMENT_H_
#define RECRAWL_SIM_BANDWIDTH_EXPERIMENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/experiment.h"
#include "sim/paper_experiments.h"
#include "sim/report.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {

struct NamedSchedule {
  std::string name;  // e.g. "100-150-100"
  BandwidthSchedule bandwidth;
};

struct BandwidthExperiment {
  std::string title;
  WorldConfig world;                     // pages and horizon; its bandwidth is not used
  std::vector<NamedSchedule> schedules;  // the changing one first
  std::vector<std::string> policies;
  int window_crawls = 1000;
  std::vector<double> times;  // where the accuracy is reported, increasing
  int table_every = 10;       // the markdown table shows every k-th time
};

// The paper's setting; overrides: one page count (--m), the policies, the
// horizon (the switch times keep their share of it, 133/400 and 266/400).
absl::StatusOr<BandwidthExperiment> Fig12Experiment(const ExperimentOverrides& overrides);

struct BandwidthResult {
  // series[schedule][policy][time]: accuracy over the repetitions.
  std::vector<std::vector<std::vector<MeanSe>>> series;
  double seconds = 0.0;
};

// Repetition r draws instance r (GenerateInstance) and runs every policy
// under every schedule on it, with the same changes and requests (common
// random numbers). Deterministic for a seed whatever the number of threads.
absl::StatusOr<BandwidthResult> RunBandwidthExperiment(const BandwidthExperiment& e,
                                                       const RunOptions& o);

// Table: t, R(t) of the changing schedule, one column per (policy,
// schedule). CSV (long form): t, schedule, R, policy, accuracy, stderr.
// Plot: accuracy against t, one line per (policy, schedule).
Report BandwidthReport(const BandwidthExperiment& e, const BandwidthResult& r, const RunOptions& o);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_BANDWIDTH_EXPERIMENT_H_
