// The main paper's experiments as Experiment grids (Sec. 6, App. C, Sec. 6.7)
// with the paper's defaults: R = 100, t <= 1000, μ, Δ ~ U[0, 1].
//
//   fig3   no signals: BASELINE, GREEDY, LDS and today's crawlers' schedules
//   fig4   signals without false positives, λ ~ Beta(0.25, 0.25)
//   fig6   false positives ν ~ U(0.1, 0.6) as well
//   fig11  fig6 with signals delayed by Poisson(6)/R, and GREEDY-NCIS-D
//   semi   Sec. 6.7 at scale: 100,000 pages, R = 5000, 200 time units,
//          heavy-tailed importance, 5% high-quality signals, precision and
//          recall corrupted with weight p ∈ {0, 0.1, 0.2}
#ifndef RECRAWL_SIM_PAPER_EXPERIMENTS_H_
#define RECRAWL_SIM_PAPER_EXPERIMENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/experiment.h"

namespace recrawl {
namespace sim {

struct ExperimentOverrides {
  std::vector<int> m;                 // replaces the m grid (empty: paper's)
  std::vector<std::string> policies;  // replaces the policy list
  double horizon = 0.0;               // > 0 replaces the horizon
};

const std::vector<std::string>& ExperimentNames();
absl::StatusOr<Experiment> PaperExperiment(const std::string& name,
                                           const ExperimentOverrides& overrides);

// Sec. 6.7's semi-synthetic world at m pages (the paper's 100,000 at
// R = 5000, scaled to R = 5000·m/100000) over the given horizon (0: the
// paper's 200), and its pages for instance number n.
WorldConfig SemiWorld(int m, double horizon);
Instance SemiInstance(int m, uint64_t seed, uint64_t n);

// Semi-synthetic signal quality (Sec. 6.7): λ and ν of a page with change
// rate Δ whose signals have the given precision and recall.
policy::PageParams WithSignalQuality(policy::PageParams page, double precision, double recall);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_PAPER_EXPERIMENTS_H_
