#include "sim/estimator_experiment.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/estimators.h"
#include "sim/parallel.h"
#include "sim/rng.h"
#include "sim/scheduler.h"
#include "sim/simulator.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kEstimators = 2, kQualities = 2;

// Crawls the one page at every slot and hands each crawl's interval, signal
// count and outcome to both estimators.
class OutcomeFeeder : public Scheduler {
 public:
  void OnSignal(int page, double t) override { ++signals_; }
  int Next(double t) override { return 0; }
  void OnCrawl(int page, double t, bool changed) override {
    if (status_.ok()) status_ = mle_.Add(t - last_crawl_, signals_, changed);
    naive_.Add(signals_ > 0, changed);
    last_crawl_ = t;
    signals_ = 0;
  }

  const absl::Status& status() const { return status_; }
  const policy::NaiveSignalQualityEstimator& naive() const { return naive_; }
  const policy::SignalModelEstimator& mle() const { return mle_; }

 private:
  double last_crawl_ = 0.0;  // the page is crawled at t = 0
  int64_t signals_ = 0;
  absl::Status status_;
  policy::NaiveSignalQualityEstimator naive_;
  policy::SignalModelEstimator mle_;
};

// [estimator][quantity] of one page at one ratio, and the truth per quantity.
struct PageSample {
  double estimate[kEstimators][kQualities];
  double truth[kQualities];
};

}  // namespace

absl::StatusOr<EstimatorExperiment> AppendixEExperiment(const ExperimentOverrides& o) {
  if (!o.m.empty()) return absl::InvalidArgumentError("--m does not apply to appE");
  if (!o.policies.empty()) return absl::InvalidArgumentError("--policies does not apply to appE");
  EstimatorExperiment e;
  e.crawl_ratios = {0.25, 0.5, 1, 2, 4};
  e.horizon = o.horizon > 0 ? o.horizon : 100000;
  e.quality_min = 0.2;
  e.quality_max = 0.95;
  e.interval_min = 2;
  e.interval_max = 20;
  e.title = absl::StrFormat(
      "App. E: bias of signal-quality estimates (precision, recall ~ U[%g, %g], 1/Δ ~ U[%g, %g], "
      "periodic crawls, t <= %g)",
      e.quality_min, e.quality_max, e.interval_min, e.interval_max, e.horizon);
  return e;
}

policy::PageParams AppendixEPage(const EstimatorExperiment& e, uint64_t seed, uint64_t rep) {
  Rng rng(seed, rep, 0, Stream::kParams);
  const double precision = rng.Uniform(e.quality_min, e.quality_max);
  const double recall = rng.Uniform(e.quality_min, e.quality_max);
  policy::PageParams page;
  page.importance = 1.0;
  page.change_rate = 1.0 / rng.Uniform(e.interval_min, e.interval_max);
  return WithSignalQuality(page, precision, recall);
}

absl::StatusOr<SignalQualityEstimates> EstimateSignalQuality(const policy::PageParams& page,
                                                             double crawl_rate, double horizon,
                                                             uint64_t seed, uint64_t rep) {
  WorldConfig config;
  config.num_pages = 1;
  config.bandwidth = BandwidthSchedule::Constant(crawl_rate);
  config.horizon = horizon;
  Instance inst;
  inst.pages = {page};
  const Realization world = Realize(config, inst, seed, rep);
  OutcomeFeeder feeder;
  RunScheduler(world, 1, feeder);
  if (!feeder.status().ok()) return feeder.status();
  SignalQualityEstimates out;
  const policy::NaiveSignalQuality naive = feeder.naive().Estimate();
  out.naive_precision = naive.precision_valid ? naive.precision : kNaN;
  out.naive_recall = naive.recall_valid ? naive.recall : kNaN;
  const policy::SignalModelEstimate mle = feeder.mle().Estimate();
  out.mle_precision = mle.valid ? mle.params.precision : kNaN;
  out.mle_recall = mle.valid ? mle.params.recall : kNaN;
  return out;
}

absl::StatusOr<EstimatorResult> RunEstimatorExperiment(const EstimatorExperiment& e,
                                                       const RunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const size_t num_ratios = e.crawl_ratios.size();
  // samples[ratio][rep]; task = (ratio, rep), the page depending on rep only.
  std::vector<std::vector<PageSample>> samples(num_ratios, std::vector<PageSample>(o.reps));
  absl::Status status = ForEachTask(num_ratios * o.reps, o.threads, [&](size_t task) {
    const size_t s = task / o.reps;
    const int rep = static_cast<int>(task % o.reps);
    const policy::PageParams page = AppendixEPage(e, o.seed, rep);
    absl::StatusOr<SignalQualityEstimates> q =
        EstimateSignalQuality(page, e.crawl_ratios[s] * page.change_rate, e.horizon, o.seed, rep);
    if (!q.ok()) return q.status();
    PageSample& out = samples[s][rep];
    out.truth[0] = policy::PageModel::Create(page)->precision();
    out.truth[1] = page.recall;
    out.estimate[0][0] = q->naive_precision;
    out.estimate[0][1] = q->naive_recall;
    out.estimate[1][0] = q->mle_precision;
    out.estimate[1][1] = q->mle_recall;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;

  EstimatorResult result;
  result.cells.assign(num_ratios, std::vector<std::vector<EstimatorCell>>(
                                      kEstimators, std::vector<EstimatorCell>(kQualities)));
  std::vector<double> estimate(o.reps), bias(o.reps);
  for (size_t s = 0; s < num_ratios; ++s) {
    for (int k = 0; k < kEstimators; ++k) {
      for (int q = 0; q < kQualities; ++q) {
        double truth = 0.0, abs_error = 0.0;
        for (int r = 0; r < o.reps; ++r) {
          const PageSample& x = samples[s][r];
          estimate[r] = x.estimate[k][q];
          bias[r] = estimate[r] - x.truth[q];  // NaN stays NaN
          if (std::isfinite(bias[r])) {
            truth += x.truth[q];
            abs_error += std::fabs(bias[r]);
          }
        }
        EstimatorCell& c = result.cells[s][k][q];
        c.estimate = Summarize(estimate);
        c.bias = Summarize(bias);
        c.truth = c.bias.n > 0 ? truth / c.bias.n : kNaN;
        c.mean_abs_error = c.bias.n > 0 ? abs_error / c.bias.n : kNaN;
      }
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Report EstimatorReport(const EstimatorExperiment& e, const EstimatorResult& r,
                       const RunOptions& o) {
  Report report;
  report.title = e.title;
  report.table.header = {"crawl_rate/Δ"};
  report.csv.header = {"crawl_ratio", "estimator", "quantity",  "truth", "estimate",
                       "bias",        "stderr",    "abs_error", "n"};
  report.plot.title = "App. E: bias of the precision and recall estimates";
  report.plot.xlabel = "crawl rate / change rate";
  report.plot.ylabel = "bias (estimate - truth)";
  report.plot.log_x = true;
  int missing = 0;
  for (int k = 0; k < kEstimators; ++k) {
    for (int q = 0; q < kQualities; ++q) {
      const std::string label = absl::StrCat(kEstimatorNames[k], " ", kQualityNames[q]);
      report.table.header.push_back(absl::StrCat(label, " bias"));
      PlotLine line;
      line.title = label;
      for (size_t s = 0; s < e.crawl_ratios.size(); ++s) {
        const EstimatorCell& c = r.cells[s][k][q];
        line.x.push_back(e.crawl_ratios[s]);
        line.y.push_back(c.bias.mean);
        line.err.push_back(c.bias.stderr_);
        missing += o.reps - c.bias.n;
      }
      report.plot.lines.push_back(std::move(line));
    }
  }
  for (size_t s = 0; s < e.crawl_ratios.size(); ++s) {
    const std::string ratio = absl::StrCat(e.crawl_ratios[s]);
    std::vector<std::string> row = {ratio};
    for (int k = 0; k < kEstimators; ++k) {
      for (int q = 0; q < kQualities; ++q) {
        const EstimatorCell& c = r.cells[s][k][q];
        row.push_back(FormatMeanSe(c.bias));
        report.csv.rows.push_back(
            {ratio, kEstimatorNames[k], kQualityNames[q], absl::StrFormat("%.6f", c.truth),
             absl::StrFormat("%.6f", c.estimate.mean), absl::StrFormat("%.6f", c.bias.mean),
             absl::StrFormat("%.6f", c.bias.stderr_), absl::StrFormat("%.6f", c.mean_abs_error),
             absl::StrCat(c.bias.n)});
      }
    }
    report.table.rows.push_back(std::move(row));
  }
  report.footer = RunFooter(o.reps, o.seed, o.threads, r.seconds);
  if (missing > 0) {
    absl::StrAppend(&report.footer, "; ", missing,
                    " estimates were undefined (no signalled or changed interval, or no valid "
                    "MLE) and are left out");
  }
  return report;
}

}  // namespace sim
}  // namespace recrawl
