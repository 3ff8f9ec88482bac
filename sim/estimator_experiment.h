// Main paper App. E (Figs. 13 and 14): how biased are estimates of a page's
// signal quality from crawl outcomes? Per repetition one page is drawn with
// precision, recall ~ U[0.2, 0.95] and expected change interval 1/Δ ~ U[2, 20]
// (so ν = λΔ(1 − precision)/precision), its changes and signals are simulated
// over t <= 100000, and it is crawled periodically at a rate between a
// quarter of and four times Δ. Both estimators see the same crawls:
//
//   naive  per-interval counts: precision = #(signal and change)/#(signal),
//          recall = #(signal and change)/#(change) (Fig. 13, "clearly biased")
//   MLE    z ~ Ber(exp(−α τ_elap − αβ n_cis)) fitted by maximum likelihood,
//          γ̂ from the signal count, precision = 1 − e^{−αβ}, recall = λΔ/Δ
//          (Fig. 14, absolute error "on the order of 1e-4")
//
// The paper gives the ranges but not the grid of its figures; here the crawl
// rate / Δ ratio is the setting (1/4, 1/2, 1, 2, 4), with the same pages,
// changes and signals at every ratio (common random numbers), and the report
// is the mean estimate and bias (estimate − truth) over repetitions.
#ifndef RECRAWL_SIM_ESTIMATOR_EXPERIMENT_H_
#define RECRAWL_SIM_ESTIMATOR_EXPERIMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/page_model.h"
#include "sim/experiment.h"
#include "sim/paper_experiments.h"
#include "sim/report.h"

namespace recrawl {
namespace sim {

struct EstimatorExperiment {
  std::string title;
  std::vector<double> crawl_ratios;  // crawl rate / Δ
  double horizon = 0.0;
  double quality_min = 0.0, quality_max = 0.0;    // precision, recall ~ U
  double interval_min = 0.0, interval_max = 0.0;  // 1/Δ ~ U
};

// The paper's setting; only the horizon can be overridden (--m and
// --policies do not apply).
absl::StatusOr<EstimatorExperiment> AppendixEExperiment(const ExperimentOverrides& overrides);

// Repetition `rep`'s page (importance 1).
policy::PageParams AppendixEPage(const EstimatorExperiment& e, uint64_t seed, uint64_t rep);

// What the two estimators make of one page's crawls; NaN where an estimator
// has no estimate (no signalled or no changed interval; an MLE that is not
// valid, policy/estimators.h).
struct SignalQualityEstimates {
  double naive_precision = 0.0, naive_recall = 0.0;
  double mle_precision = 0.0, mle_recall = 0.0;
};

// Simulates `page` over (0, horizon] (realization (seed, rep), world.h),
// crawls it every 1/crawl_rate and feeds each crawl's (τ_elap, n_cis,
// changed) to both estimators.
absl::StatusOr<SignalQualityEstimates> EstimateSignalQuality(const policy::PageParams& page,
                                                             double crawl_rate, double horizon,
                                                             uint64_t seed, uint64_t rep);

// Estimators × quantities in the order of EstimatorResult.
inline constexpr const char* kEstimatorNames[] = {"naive", "MLE"};
inline constexpr const char* kQualityNames[] = {"precision", "recall"};

struct EstimatorCell {
  double truth = 0.0;  // mean true value over the repetitions with an estimate
  MeanSe estimate;
  MeanSe bias;                  // estimate − truth
  double mean_abs_error = 0.0;  // mean |estimate − truth|
};

struct EstimatorResult {
  // cells[ratio][estimator][quantity]
  std::vector<std::vector<std::vector<EstimatorCell>>> cells;
  double seconds = 0.0;
};

// Deterministic for a seed whatever the number of threads.
absl::StatusOr<EstimatorResult> RunEstimatorExperiment(const EstimatorExperiment& e,
                                                       const RunOptions& o);

// Table: crawl ratio, then the bias (mean ± se) of each estimator and
// quantity. CSV (long form): crawl_ratio, estimator, quantity, truth,
// estimate, bias, stderr (of the bias), abs_error, n. Plot: bias against the
// crawl ratio, one line per estimator and quantity.
Report EstimatorReport(const EstimatorExperiment& e, const EstimatorResult& r, const RunOptions& o);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_ESTIMATOR_EXPERIMENT_H_
