#include "policy/estimators.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------
// ChangeRateEstimator (Eq. 14 with Algorithm 4's smoothing)

// The smoothed log-likelihood whose derivative in Δ is the smoothed Eq. 14:
// Σ_{z=1} log(1 − e^{−aΔ}) − Σ_{z=0} aΔ plus one imaginary changed and one
// imaginary unchanged interval of length 0.5.
double SmoothedLogLikelihood(const std::vector<std::pair<double, bool>>& data, double delta) {
  double l = std::log(-std::expm1(-0.5 * delta)) - 0.5 * delta;
  for (const auto& [a, changed] : data) {
    l += changed ? std::log(-std::expm1(-a * delta)) : -a * delta;
  }
  return l;
}

TEST(ChangeRateEstimatorTest, NoDataGivesTheSmoothingPrior) {
  // 0.5/(e^{0.5Δ} − 1) = 0.5  ⇒  Δ = 2 ln 2.
  EXPECT_NEAR(ChangeRateEstimator().Estimate(), 2.0 * std::log(2.0), 1e-14);
}

TEST(ChangeRateEstimatorTest, RegularHalfUnitIntervalsHaveAClosedForm) {
  // All intervals 0.5, like the imaginary ones: with X changes in N crawls
  // the equation is (X + 1)/(e^{Δ/2} − 1) = N − X + 1, so
  // Δ = 2 ln((N + 2)/(N − X + 1)).
  for (int n : {1, 5, 40, 1000}) {
    for (int x : {0, 1, n / 2, n}) {
      ChangeRateEstimator e;
      for (int i = 0; i < n; ++i) ASSERT_TRUE(e.Add(0.5, i < x).ok());
      EXPECT_NEAR(e.Estimate(), 2.0 * std::log((n + 2.0) / (n - x + 1.0)), 1e-13)
          << "n=" << n << " x=" << x;
    }
  }
}

TEST(ChangeRateEstimatorTest, MaximisesTheSmoothedLikelihood) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> interval(1.0 / 3.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double delta = 0.4;
  std::vector<std::pair<double, bool>> data;
  ChangeRateEstimator e;
  for (int i = 0; i < 300; ++i) {
    const double a = interval(rng);
    const bool changed = unit(rng) < -std::expm1(-delta * a);
    data.push_back({a, changed});
    ASSERT_TRUE(e.Add(a, changed).ok());
  }
  const double mle = e.Estimate();
  const double at_mle = SmoothedLogLikelihood(data, mle);
  // Grid search over [0.01, 10] on a log scale.
  double best = -kInf, arg = 0.0;
  for (int k = 0; k <= 100000; ++k) {
    const double d = 0.01 * std::pow(1000.0, k / 100000.0);
    const double l = SmoothedLogLikelihood(data, d);
    if (l > best) {
      best = l;
      arg = d;
    }
  }
  EXPECT_GE(at_mle, best - 1e-12 * std::fabs(best));
  EXPECT_NEAR(mle, arg, 1e-4 * arg);
  for (double f : {1.0 - 1e-6, 1.0 + 1e-6}) {
    EXPECT_LT(SmoothedLogLikelihood(data, f * mle), at_mle);
  }
}

// Poisson changes at rate Δ, crawls at random (exponential) intervals: the
// error shrinks like 1/sqrt(crawls).
TEST(ChangeRateEstimatorTest, ErrorShrinksWithData) {
  const double delta = 0.8;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double previous_rms = kInf;
  for (int crawls : {30, 300, 3000, 30000}) {
    for (double crawl_rate : {0.4, 2.0}) {
      std::exponential_distribution<double> interval(crawl_rate);
      const int reps = 40;
      double sum_sq = 0.0;
      for (int r = 0; r < reps; ++r) {
        ChangeRateEstimator e;
        for (int i = 0; i < crawls; ++i) {
          const double a = interval(rng);
          ASSERT_TRUE(e.Add(a, unit(rng) < -std::expm1(-delta * a)).ok());
        }
        const double rel = e.Estimate() / delta - 1.0;
        sum_sq += rel * rel;
      }
      const double rms = std::sqrt(sum_sq / reps);
      std::cout << "Eq. 14 MLE: crawls=" << crawls << " crawl rate " << crawl_rate
                << " relative RMS error " << rms << "\n";
      if (crawl_rate == 0.4) {
        EXPECT_LT(rms, previous_rms);
        previous_rms = rms;
      }
      if (crawls == 30000) {
        EXPECT_LT(rms, 0.02);
      }
    }
  }
}

TEST(ChangeRateEstimatorTest, MergingChangedIntervalsBarelyMovesTheEstimate) {
  std::mt19937_64 rng(13);
  std::exponential_distribution<double> interval(0.7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double delta = 1.5;
  ChangeRateEstimator exact(1 << 20), merged(32);
  for (int i = 0; i < 100000; ++i) {
    const double a = interval(rng);
    const bool changed = unit(rng) < -std::expm1(-delta * a);
    ASSERT_TRUE(exact.Add(a, changed).ok());
    ASSERT_TRUE(merged.Add(a, changed).ok());
  }
  const double difference = merged.Estimate() / exact.Estimate() - 1.0;
  std::cout << "Eq. 14 MLE with 32 merged points vs exact: relative " << difference << "\n";
  EXPECT_LT(std::fabs(difference), 2e-4);
  EXPECT_EQ(merged.num_crawls(), 100000);
}

TEST(ChangeRateEstimatorTest, RejectsInvalidIntervals) {
  ChangeRateEstimator e;
  EXPECT_EQ(e.Add(-1.0, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Add(kNaN, true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Add(kInf, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Add(0.0, true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(e.Add(0.0, false).ok());
  EXPECT_EQ(e.num_crawls(), 1);
  // Only changes: still finite thanks to the imaginary unchanged interval.
  ChangeRateEstimator all_changed;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(all_changed.Add(1.0, true).ok());
  EXPECT_TRUE(std::isfinite(all_changed.Estimate()));
  EXPECT_GT(all_changed.Estimate(), 2.0);
}

// ---------------------------------------------------------------------------
// PoissonRateEstimator (Eq. 15 with Algorithm 4's smoothing)

TEST(PoissonRateEstimatorTest, SmoothedRate) {
  PoissonRateEstimator e;
  EXPECT_DOUBLE_EQ(e.Estimate(), 1.0);  // 0.5 / 0.5
  ASSERT_TRUE(e.Add(10.0, 3).ok());
  ASSERT_TRUE(e.Add(2.0, 0).ok());
  EXPECT_DOUBLE_EQ(e.Estimate(), 3.5 / 12.5);
  EXPECT_EQ(e.Add(-1.0, 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Add(1.0, -1).code(), absl::StatusCode::kInvalidArgument);
}

TEST(PoissonRateEstimatorTest, ErrorShrinksWithData) {
  const double delta = 2.5;
  std::mt19937_64 rng(17);
  std::exponential_distribution<double> gap(delta);
  double previous_rms = kInf;
  for (double horizon : {10.0, 100.0, 1000.0, 10000.0}) {
    double sum_sq = 0.0;
    const int reps = 40;
    for (int r = 0; r < reps; ++r) {
      PoissonRateEstimator e;
      // Notifications arrive one by one; report them in daily batches.
      double t = gap(rng);
      for (double day = 0.0; day < horizon; day += 1.0) {
        int64_t changes = 0;
        while (t < day + 1.0) {
          ++changes;
          t += gap(rng);
        }
        ASSERT_TRUE(e.Add(1.0, changes).ok());
      }
      const double rel = e.Estimate() / delta - 1.0;
      sum_sq += rel * rel;
    }
    const double rms = std::sqrt(sum_sq / reps);
    EXPECT_LT(rms, previous_rms);
    previous_rms = rms;
  }
  EXPECT_LT(previous_rms, 0.01);
}

// ---------------------------------------------------------------------------
// NaiveSignalQualityEstimator

TEST(NaiveSignalQualityEstimatorTest, CountsIntervals) {
  NaiveSignalQualityEstimator e;
  NaiveSignalQuality q = e.Estimate();
  EXPECT_FALSE(q.precision_valid);
  EXPECT_FALSE(q.recall_valid);
  EXPECT_TRUE(std::isnan(q.precision));
  // 3 signalled intervals of which 2 changed; 4 changed intervals.
  e.Add(true, true);
  e.Add(true, true);
  e.Add(true, false);
  e.Add(false, true);
  e.Add(false, true);
  e.Add(false, false);
  q = e.Estimate();
  EXPECT_TRUE(q.precision_valid && q.recall_valid);
  EXPECT_DOUBLE_EQ(q.precision, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(q.recall, 2.0 / 4.0);
}

// ---------------------------------------------------------------------------
// SignalModelEstimator (App. E)

TEST(SignalModelParamsTest, InvertsThePageModel) {
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 200; ++i) {
    const PageParams truth{1.0, 0.05 + 3.0 * unit(rng), 0.02 + 0.96 * unit(rng),
                           i % 10 == 0 ? 0.0 : 2.0 * unit(rng)};
    absl::StatusOr<PageModel> m = PageModel::Create(truth);
    ASSERT_TRUE(m.ok());
    const SignalModelParams p =
        SignalModelParamsFromFit(m->alpha(), m->log_signal_factor(), m->gamma());
    EXPECT_NEAR(p.change_rate, truth.change_rate, 1e-12 * truth.change_rate);
    EXPECT_NEAR(p.recall, truth.recall, 1e-12);
    EXPECT_NEAR(p.false_rate, truth.false_rate, 1e-12);
    EXPECT_NEAR(p.precision, m->precision(), 1e-12);
  }
  // No signals at all.
  const SignalModelParams none = SignalModelParamsFromFit(0.7, 0.0, 0.0);
  EXPECT_EQ(none.change_rate, 0.7);
  EXPECT_EQ(none.recall, 0.0);
  EXPECT_EQ(none.false_rate, 0.0);
  EXPECT_EQ(none.precision, 0.0);
}

// One page of the App. E experiment.
struct TruePage {
  double change_rate;  // Δ
  double recall;       // λ
  double precision;
  double crawl_rate;  // ρ: crawls at exponential intervals
  double false_rate() const { return recall * change_rate * (1.0 - precision) / precision; }
  double alpha() const { return (1.0 - recall) * change_rate; }
  double log_signal_factor() const { return -std::log1p(-precision); }
};

// Simulates `crawls` crawl intervals: changes ~ Poisson(Δ), each signalled
// with probability λ, false signals ~ Poisson(ν).
template <typename Sink>
void SimulateCrawls(const TruePage& page, int64_t crawls, std::mt19937_64& rng, Sink sink) {
  std::exponential_distribution<double> interval(page.crawl_rate);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double signalled_rate = page.recall * page.change_rate;
  const double alpha = page.alpha();
  const double nu = page.false_rate();
  for (int64_t i = 0; i < crawls; ++i) {
    const double tau = interval(rng);
    const int64_t true_signals = std::poisson_distribution<int64_t>(signalled_rate * tau)(rng);
    const int64_t false_signals = std::poisson_distribution<int64_t>(nu * tau)(rng);
    const bool unsignalled_change = unit(rng) < -std::expm1(-alpha * tau);
    sink(tau, true_signals + false_signals, true_signals > 0 || unsignalled_change);
  }
}

// ℓ(θ) computed directly from simulated records.
struct Record {
  double tau;
  int64_t n;
  bool changed;
};
double LogLikelihood(const std::vector<Record>& records, double alpha, double ab) {
  double l = 0.0;
  for (const Record& r : records) {
    const double s = alpha * r.tau + ab * static_cast<double>(r.n);
    l += r.changed ? std::log(-std::expm1(-s)) : -s;
  }
  return l;
}

TEST(SignalModelEstimatorTest, MaximisesTheLikelihood) {
  const TruePage page{0.3, 0.6, 0.5, 0.2};
  std::mt19937_64 rng(23);
  std::vector<Record> records;
  SignalModelEstimator e(1 << 16);
  SimulateCrawls(page, 3000, rng, [&](double tau, int64_t n, bool changed) {
    records.push_back({tau, n, changed});
    ASSERT_TRUE(e.Add(tau, n, changed).ok());
  });
  const SignalModelEstimate est = e.Estimate();
  ASSERT_TRUE(est.valid);
  const double best = LogLikelihood(records, est.alpha, est.log_signal_factor);
  // No point of a grid around the estimate, nor any small perturbation,
  // does better.
  for (int i = -40; i <= 40; ++i) {
    for (int j = -40; j <= 40; ++j) {
      const double a = est.alpha * (1.0 + 0.02 * i);
      const double b = est.log_signal_factor * (1.0 + 0.02 * j);
      EXPECT_LE(LogLikelihood(records, a, b), best + 1e-9);
    }
  }
  for (double da : {-1e-7, 0.0, 1e-7}) {
    for (double db : {-1e-7, 0.0, 1e-7}) {
      if (da == 0.0 && db == 0.0) continue;
      EXPECT_LT(LogLikelihood(records, est.alpha + da, est.log_signal_factor + db), best + 1e-10);
    }
  }
  // γ̂ is the plain signal count over time.
  double tau = 0.0, signals = 0.0;
  for (const Record& r : records) {
    tau += r.tau;
    signals += static_cast<double>(r.n);
  }
  EXPECT_DOUBLE_EQ(est.signal_rate, signals / tau);
  EXPECT_EQ(est.num_crawls, 3000);
}

TEST(SignalModelEstimatorTest, DegenerateData) {
  {
    SignalModelEstimator e;
    const SignalModelEstimate est = e.Estimate();
    EXPECT_FALSE(est.valid);
    EXPECT_EQ(est.alpha, 0.0);
  }
  {  // Never changed: α̂ = αβ̂ = 0, not valid.
    SignalModelEstimator e;
    ASSERT_TRUE(e.Add(1.0, 2, false).ok());
    ASSERT_TRUE(e.Add(3.0, 0, false).ok());
    const SignalModelEstimate est = e.Estimate();
    EXPECT_FALSE(est.valid);
    EXPECT_EQ(est.alpha, 0.0);
    EXPECT_EQ(est.log_signal_factor, 0.0);
    EXPECT_DOUBLE_EQ(est.signal_rate, 0.5);
  }
  {  // Always changed: α̂ = ∞.
    SignalModelEstimator e;
    ASSERT_TRUE(e.Add(1.0, 0, true).ok());
    ASSERT_TRUE(e.Add(2.0, 1, true).ok());
    const SignalModelEstimate est = e.Estimate();
    EXPECT_FALSE(est.valid);
    EXPECT_EQ(est.alpha, kInf);
  }
  {  // Every signalled interval changed: αβ̂ = ∞, ν̂ = 0, precision 1; α̂
     // from the unsignalled intervals alone: one changed interval of length
     // 1 and unchanged ones of total length 3 give 1/(e^α − 1) = 3,
     // α = ln(4/3).
    SignalModelEstimator e;
    ASSERT_TRUE(e.Add(1.0, 0, true).ok());
    ASSERT_TRUE(e.Add(1.0, 0, false).ok());
    ASSERT_TRUE(e.Add(2.0, 0, false).ok());
    ASSERT_TRUE(e.Add(0.5, 2, true).ok());
    ASSERT_TRUE(e.Add(0.5, 1, true).ok());
    const SignalModelEstimate est = e.Estimate();
    EXPECT_FALSE(est.valid);
    EXPECT_EQ(est.log_signal_factor, kInf);
    EXPECT_NEAR(est.alpha, std::log(4.0 / 3.0), 1e-12);
    EXPECT_EQ(est.params.false_rate, 0.0);
    EXPECT_EQ(est.params.precision, 1.0);
    EXPECT_DOUBLE_EQ(est.signal_rate, 3.0 / 5.0);
  }
  {  // No signals at all: a page without signals, valid.
    SignalModelEstimator e;
    ASSERT_TRUE(e.Add(1.0, 0, true).ok());
    ASSERT_TRUE(e.Add(1.0, 0, false).ok());
    ASSERT_TRUE(e.Add(2.0, 0, false).ok());
    const SignalModelEstimate est = e.Estimate();
    EXPECT_TRUE(est.valid);
    EXPECT_NEAR(est.alpha, std::log(4.0 / 3.0), 1e-12);
    EXPECT_EQ(est.log_signal_factor, 0.0);
    EXPECT_EQ(est.signal_rate, 0.0);
    EXPECT_NEAR(est.params.change_rate, est.alpha, 1e-15);
    EXPECT_EQ(est.params.recall, 0.0);
    EXPECT_EQ(est.params.false_rate, 0.0);
  }
  SignalModelEstimator e;
  EXPECT_EQ(e.Add(-1.0, 0, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Add(1.0, -1, false).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Add(kNaN, 0, true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Add(0.0, 0, true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(e.Add(0.0, 1, true).ok());
}

TEST(SignalModelEstimatorTest, MergedChangedRecordsStayCloseToExact) {
  const TruePage page{0.2, 0.5, 0.6, 0.1};
  std::mt19937_64 rng(29);
  SignalModelEstimator exact(1 << 20), small(64), standard;
  SimulateCrawls(page, 200000, rng, [&](double tau, int64_t n, bool changed) {
    ASSERT_TRUE(exact.Add(tau, n, changed).ok());
    ASSERT_TRUE(small.Add(tau, n, changed).ok());
    ASSERT_TRUE(standard.Add(tau, n, changed).ok());
  });
  const SignalModelEstimate a = exact.Estimate();
  ASSERT_GT(a.num_changed, 50000);
  // The merging error, in units of the statistical error.
  for (const auto& [merged, tolerance] :
       {std::pair<const SignalModelEstimator*, double>{&small, 0.1}, {&standard, 0.01}}) {
    const SignalModelEstimate b = merged->Estimate();
    const double alpha_shift = (b.alpha - a.alpha) / a.alpha_stderr;
    const double ab_shift =
        (b.log_signal_factor - a.log_signal_factor) / a.log_signal_factor_stderr;
    std::cout << "App. E MLE with " << (merged == &small ? 64 : 256)
              << " merged points: shift vs exact " << alpha_shift << " stderr in alpha, "
              << ab_shift << " in alpha*beta\n";
    EXPECT_LT(std::fabs(alpha_shift), tolerance);
    EXPECT_LT(std::fabs(ab_shift), tolerance);
  }
}

// Merged buckets expand to quadrature points that reproduce the first
// three moments of τ (and the mean of n) of the records they replaced, per
// signal count class, and stay inside the data's range.
TEST(ChangedRecordsTest, QuadraturePreservesMomentsAndRange) {
  internal::ChangedRecords records(8);
  std::mt19937_64 rng(31);
  std::exponential_distribution<double> tau(1.0);
  std::uniform_int_distribution<int> n(0, 3);
  // Raw moments Σ τ^k, k = 0..3, of the unsignalled records and of all.
  double raw0[4] = {0, 0, 0, 0}, raw[4] = {0, 0, 0, 0}, sum_n = 0.0;
  double min_tau = kInf, max_tau = 0.0;
  for (int i = 0; i < 1000; ++i) {
    const double t = tau(rng);
    const int k = n(rng);
    records.Add(t, k);
    min_tau = std::min(min_tau, t);
    max_tau = std::max(max_tau, t);
    sum_n += k;
    for (int m = 0; m < 4; ++m) {
      raw[m] += std::pow(t, m);
      if (k == 0) raw0[m] += std::pow(t, m);
    }
    EXPECT_LT(records.size(), 16u);
  }
  EXPECT_GT(records.log_bin_width(), 0.0);
  EXPECT_DOUBLE_EQ(records.total_weight(), 1000.0);
  double q0[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0}, qn = 0.0;
  for (const internal::WeightedRecord& r : records.QuadraturePoints()) {
    EXPECT_GE(r.tau, min_tau * (1 - 1e-12));
    EXPECT_LE(r.tau, max_tau * (1 + 1e-12));
    qn += r.weight * r.n;
    for (int m = 0; m < 4; ++m) {
      q[m] += r.weight * std::pow(r.tau, m);
      if (r.n == 0.0) q0[m] += r.weight * std::pow(r.tau, m);
    }
  }
  for (int m = 0; m < 4; ++m) {
    EXPECT_NEAR(q[m], raw[m], 1e-9 * raw[m]) << "moment " << m;
    EXPECT_NEAR(q0[m], raw0[m], 1e-9 * raw0[m]) << "moment " << m;
  }
  EXPECT_NEAR(qn, sum_n, 1e-9 * sum_n);
}

// A page of the App. E experiment: precision, recall ~ U[0.2, 0.95],
// expected change interval 1/Δ ~ U[2, 20], crawl rate between 1/4 and 4
// times Δ (log-uniform); crawls at exponential intervals.
TruePage AppendixEPage(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> quality(0.2, 0.95);
  std::uniform_real_distribution<double> interval(2.0, 20.0);
  std::uniform_real_distribution<double> log_ratio(std::log(0.25), std::log(4.0));
  TruePage page;
  page.precision = quality(rng);
  page.recall = quality(rng);
  page.change_rate = 1.0 / interval(rng);
  page.crawl_rate = page.change_rate * std::exp(log_ratio(rng));
  return page;
}

// The App. E experiment with 10^6 crawls per page. The naive per-interval
// counts overestimate both precision and recall: an interval holding a
// false signal often also holds an unsignalled change and then counts as a
// true signal, and an interval with several changes needs only one of them
// signalled to count as recalled. The MLE is within a few of its standard
// errors, which at this sample size are below 1e-3 for α but up to ~1e-2
// for αβ on high-precision pages (few unchanged intervals carry a signal).
TEST(SignalModelEstimatorTest, AppendixEMleIsAccurateAndNaiveIsBiased) {
  std::mt19937_64 rng(37);
  const int kPages = 6;
  const int64_t kCrawls = 1000000;
  double max_alpha_error = 0.0, max_ab_error = 0.0, max_alpha_stderr = 0.0;
  double max_mle_error = 0.0, sum_mle_error = 0.0, sum_naive_error = 0.0;
  double min_naive_bias = kInf;
  for (int i = 0; i < kPages; ++i) {
    const TruePage page = AppendixEPage(rng);
    SignalModelEstimator mle(1 << 21);  // exact: no merging
    NaiveSignalQualityEstimator naive;
    SimulateCrawls(page, kCrawls, rng, [&](double tau, int64_t n, bool changed) {
      ASSERT_TRUE(mle.Add(tau, n, changed).ok());
      naive.Add(n > 0, changed);
    });
    const SignalModelEstimate est = mle.Estimate();
    const NaiveSignalQuality nq = naive.Estimate();
    ASSERT_TRUE(est.valid);
    ASSERT_TRUE(nq.precision_valid && nq.recall_valid);
    const double alpha_error = est.alpha - page.alpha();
    const double ab_error = est.log_signal_factor - page.log_signal_factor();
    const double p_error = est.params.precision - page.precision;
    const double r_error = est.params.recall - page.recall;
    const double naive_p_error = nq.precision - page.precision;
    const double naive_r_error = nq.recall - page.recall;
    std::cout << "page " << i << ": Delta=" << page.change_rate
              << " rho/Delta=" << page.crawl_rate / page.change_rate
              << " precision=" << page.precision << " recall=" << page.recall
              << "\n  MLE: alpha err " << alpha_error << " (stderr " << est.alpha_stderr
              << "), alpha*beta err " << ab_error << " (stderr " << est.log_signal_factor_stderr
              << "), precision err " << p_error << ", recall err " << r_error
              << "\n  naive: precision err " << naive_p_error << ", recall err " << naive_r_error
              << "\n";
    EXPECT_LT(std::fabs(alpha_error), 4.5 * est.alpha_stderr);
    EXPECT_LT(std::fabs(ab_error), 4.5 * est.log_signal_factor_stderr);
    EXPECT_LT(est.alpha_stderr, 1e-3);
    EXPECT_LT(est.log_signal_factor_stderr, 0.02);
    max_alpha_error = std::max(max_alpha_error, std::fabs(alpha_error));
    max_ab_error = std::max(max_ab_error, std::fabs(ab_error));
    max_alpha_stderr = std::max(max_alpha_stderr, est.alpha_stderr);
    const double mle_error = std::max(std::fabs(p_error), std::fabs(r_error));
    max_mle_error = std::max(max_mle_error, mle_error);
    sum_mle_error += mle_error;
    sum_naive_error += std::max(std::fabs(naive_p_error), std::fabs(naive_r_error));
    min_naive_bias = std::min({min_naive_bias, naive_p_error, naive_r_error});
  }
  std::cout << "max |error|: alpha " << max_alpha_error << " (max stderr " << max_alpha_stderr
            << "), alpha*beta " << max_ab_error << "; precision/recall: MLE mean "
            << sum_mle_error / kPages << " max " << max_mle_error << ", naive mean "
            << sum_naive_error / kPages << "; smallest naive bias " << min_naive_bias << "\n";
  EXPECT_LT(max_mle_error, 5e-3);
  // The naive estimator overestimates both on every page, by far more than
  // the MLE's error.
  EXPECT_GT(min_naive_bias, 0.01);
  EXPECT_GT(sum_naive_error, 20.0 * sum_mle_error);
}

// Many App. E pages with 2·10^4 crawls each, estimated with the default
// (merging) state: the standardised errors (θ̂ − θ)/stderr behave like
// N(0, 1) (no bias, honest standard errors), the MLE's precision / recall
// errors average out (Fig. 14 plots this bias), and the naive estimator's
// do not (Fig. 13).
TEST(SignalModelEstimatorTest, AppendixEMleIsUnbiasedWithCalibratedErrors) {
  std::mt19937_64 rng(41);
  const int kPages = 200;
  const int64_t kCrawls = 20000;
  std::vector<double> z_alpha, z_ab;
  double sum_p = 0.0, sum_r = 0.0, sum_p2 = 0.0, sum_r2 = 0.0;
  double naive_p = 0.0, naive_r = 0.0;
  int naive_overestimates = 0;
  for (int i = 0; i < kPages; ++i) {
    const TruePage page = AppendixEPage(rng);
    SignalModelEstimator mle;
    NaiveSignalQualityEstimator naive;
    SimulateCrawls(page, kCrawls, rng, [&](double tau, int64_t n, bool changed) {
      ASSERT_TRUE(mle.Add(tau, n, changed).ok());
      naive.Add(n > 0, changed);
    });
    const SignalModelEstimate est = mle.Estimate();
    ASSERT_TRUE(est.valid) << "page " << i;
    z_alpha.push_back((est.alpha - page.alpha()) / est.alpha_stderr);
    z_ab.push_back((est.log_signal_factor - page.log_signal_factor()) /
                   est.log_signal_factor_stderr);
    const double p = est.params.precision - page.precision;
    const double r = est.params.recall - page.recall;
    sum_p += p;
    sum_r += r;
    sum_p2 += p * p;
    sum_r2 += r * r;
    const NaiveSignalQuality nq = naive.Estimate();
    naive_p += nq.precision - page.precision;
    naive_r += nq.recall - page.recall;
    naive_overestimates += nq.precision > page.precision && nq.recall > page.recall;
  }
  const auto mean_and_rms = [](const std::vector<double>& z) {
    double sum = 0.0, sum_sq = 0.0;
    for (double v : z) {
      sum += v;
      sum_sq += v * v;
    }
    return std::pair<double, double>{sum / static_cast<double>(z.size()),
                                     std::sqrt(sum_sq / static_cast<double>(z.size()))};
  };
  const auto [mean_za, rms_za] = mean_and_rms(z_alpha);
  const auto [mean_zb, rms_zb] = mean_and_rms(z_ab);
  const double bias_p = sum_p / kPages, bias_r = sum_r / kPages;
  const double se_p = std::sqrt(sum_p2 / kPages) / std::sqrt(kPages);
  const double se_r = std::sqrt(sum_r2 / kPages) / std::sqrt(kPages);
  std::cout << "standardised errors: alpha mean " << mean_za << " rms " << rms_za
            << "; alpha*beta mean " << mean_zb << " rms " << rms_zb << "\nMLE bias: precision "
            << bias_p << " (+- " << se_p << "), recall " << bias_r << " (+- " << se_r
            << ")\nnaive bias: precision " << naive_p / kPages << ", recall " << naive_r / kPages
            << "; overestimates both on " << naive_overestimates << "/" << kPages << " pages\n";
  // Mean of 200 N(0, 1): sd 0.07. RMS: sd about 0.05.
  EXPECT_LT(std::fabs(mean_za), 0.3);
  EXPECT_LT(std::fabs(mean_zb), 0.3);
  EXPECT_GT(rms_za, 0.8);
  EXPECT_LT(rms_za, 1.2);
  EXPECT_GT(rms_zb, 0.8);
  EXPECT_LT(rms_zb, 1.2);
  EXPECT_LT(std::fabs(bias_p), std::max(1e-3, 4.0 * se_p));
  EXPECT_LT(std::fabs(bias_r), std::max(1e-3, 4.0 * se_r));
  EXPECT_GT(naive_p / kPages, 0.05);
  EXPECT_GT(naive_r / kPages, 0.05);
  EXPECT_GT(naive_overestimates, kPages * 9 / 10);
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
