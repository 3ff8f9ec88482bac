// How the coordinator's `split` mode divides the crawl bandwidth R across
// shards.
//
// `equal` gives every live shard R/N, the split of the main paper's
// Sec. 5.2. `adaptive` uses the level Λ_s at which shard s has been picking
// (the crawl value of its recent picks). At the optimum of the relaxed
// problem all crawled pages are picked at one level Λ (the Lagrange
// multiplier of the bandwidth constraint, Lemma 1), so a shard picking at a
// higher level than the others should get more of R and one picking lower
// should give some up; a shard's level falls as its budget grows. Each step
// multiplies R_s by (Λ_s / Λ̄)^step, Λ̄ the budget-weighted geometric mean
// of the levels, and renormalises to R: levels that agree are a fixed point
// and the step moves budget along the gradient of the total value.
//
// Pure functions: the coordinator calls AdaptiveStep on a timer with the
// levels its shards report, the simulator with the levels its shard
// indexes report.
#ifndef RECRAWL_COORDINATOR_BANDWIDTH_SPLIT_H_
#define RECRAWL_COORDINATOR_BANDWIDTH_SPLIT_H_

#include <vector>

namespace recrawl {
namespace coordinator {

struct AdaptiveSplitOptions {
  // Exponent of one step; 1 would jump straight to the split that equalises
  // levels if Λ_s ∝ 1/R_s, smaller is slower but stable when a level reacts
  // more steeply to its budget.
  double step = 0.5;
  // No live shard gets less than this share of R/N: a shard needs some
  // budget to keep reporting a level, and a level can be low only for a
  // while (a burst of crawls just served its best pages).
  double min_share = 0.05;
};

// R/N for each live shard, 0 for the others.
std::vector<double> EqualSplit(double bandwidth, const std::vector<bool>& live);

// One adaptive step from `budgets` (the current split; a live shard without
// budget starts from R/N). A live shard whose level is unknown (≤ 0 or not
// finite) keeps its share. Dead shards get 0. The result sums to
// `bandwidth` whenever a shard is live.
std::vector<double> AdaptiveStep(double bandwidth, const std::vector<double>& budgets,
                                 const std::vector<double>& levels, const std::vector<bool>& live,
                                 const AdaptiveSplitOptions& options = {});

}  // namespace coordinator
}  // namespace recrawl

#endif  // RECRAWL_COORDINATOR_BANDWIDTH_SPLIT_H_
