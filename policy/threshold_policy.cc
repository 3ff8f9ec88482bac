#include "policy/threshold_policy.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "policy/crawl_value.h"
#include "policy/residual.h"
#include "policy/root_finding.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSumTolerance = 1e-16;

// Σ_{i=0..last} R^i(x_i) with x_i = x0 − slope·i (slope > 0), the shape of ψ·γ.
// Terms decrease in i. Around the transition i* (first i with x_i < i + 1) the
// terms fall from ~1 to ~0; far from it they are 1 − (tiny) or tiny. Since
//   R^{i+1}(x) <= R^i(x) · x/(i + 2)     and    1 − R^{i−1}(x) <= (1 − R^i(x)) · i/x,
// both sides decay at least geometrically away from i*, so the sum is taken
// outward from i* until the remaining tail is provably below kSumTolerance of
// the total, and the terms below that are counted as exactly 1 minus their
// (summed) complements.
double SumResidualsAlongLine(double x0, double slope, int64_t last) {
  if (last < 0) return 0.0;
  // i* = ⌊(x0 − 1)/(1 + slope)⌋ + 1, clamped to [0, last + 1].
  double start = std::floor((x0 - 1.0) / (1.0 + slope)) + 1.0;
  if (start < 0.0) start = 0.0;
  if (start > static_cast<double>(last) + 1.0) start = static_cast<double>(last) + 1.0;
  const int64_t transition = static_cast<int64_t>(start);

  // Lower side: i in [0, transition): R^i(x_i) = 1 − Q_i with Q_i decreasing
  // as i decreases.
  double complement_sum = 0.0;
  const double ones = static_cast<double>(transition);
  for (int64_t i = transition - 1; i >= 0; --i) {
    const double x = x0 - slope * static_cast<double>(i);
    const double q = ResidualComplement(i, x);
    complement_sum += q;
    const double ratio = static_cast<double>(i) / x;  // Q_{i−1} <= ratio·Q_i
    if (ratio < 1.0 && q * ratio / (1.0 - ratio) <= kSumTolerance * ones) break;
  }
  double upper_sum = 0.0;
  for (int64_t i = transition; i <= last; ++i) {
    const double x = x0 - slope * static_cast<double>(i);
    if (x <= 0.0) break;
    const double r = Residual(i, x);
    upper_sum += r;
    const double ratio = x / (static_cast<double>(i) + 2.0);
    if (ratio < 1.0 && r * ratio / (1.0 - ratio) <= kSumTolerance * (ones + upper_sum)) {
      break;
    }
  }
  return (ones - complement_sum) + upper_sum;
}

}  // namespace

double IntervalStats::freshness() const {
  if (!(psi > 0.0) || std::isinf(psi)) return std::isinf(psi) ? 0.0 : 1.0;
  return w / psi;
}

IntervalStats ThresholdIntervalStats(const PageModel& page, double iota) {
  const double delta = page.change_rate();
  IntervalStats s;
  if (std::isinf(iota)) {
    s.psi = kInf;
    s.w = delta > 0.0 ? 1.0 / delta : kInf;
    return s;
  }
  if (!(iota > 0.0)) return s;
  auto fresh_until = [](double rate, double t) {
    return rate > 0.0 ? -std::expm1(-rate * t) / rate : t;
  };
  if (!page.signals_informative()) {
    // Crawled every ι whatever the signals say.
    s.psi = iota;
    s.w = fresh_until(delta, iota);
    return s;
  }
  const double gamma = page.gamma();
  const double c = delta + page.false_rate();  // α + γ
  const double beta = page.beta();
  if (std::isinf(beta)) {
    // Any signal ends the interval (K = 0).
    s.psi = fresh_until(gamma, iota);
    s.w = fresh_until(c, iota);
    return s;
  }
  // ⌊ι/β⌋, capped: with recall ~1e-20 (Beta(¼, ¼) draws such λ) β is
  // ~1e-19 and the count overflows int64; the sums below stop at their
  // tolerance long before the cap.
  constexpr double kMaxTerms = 1e18;
  const double terms = std::floor(iota / beta);
  const int64_t last = static_cast<int64_t>(std::min(terms, kMaxTerms));
  s.psi = SumResidualsAlongLine(gamma * iota, gamma * beta, last) / gamma;
  // w: geometric weights q^i, cut with the tail bound of crawl_value.cc.
  const double q = page.false_rate() / c;
  double q_pow = 1.0 / c;
  double sum = 0.0;
  for (int64_t i = 0; i <= last; ++i) {
    const double y = iota - static_cast<double>(i) * beta;
    if (y <= 0.0) break;
    const double a = q_pow * Residual(i, c * y);
    sum += a;
    if (a * c / delta <= kSumTolerance * sum) break;
    q_pow *= q;
  }
  s.w = sum;
  return s;
}

double ThresholdForValue(const PageModel& page, double level, int max_terms) {
  if (!(level > 0.0)) return 0.0;
  const double ceiling = ValueCeiling(page);
  if (level >= ceiling) return kInf;
  if (page.signals_informative() && page.alpha() <= 0.0) return kInf;
  auto excess = [&](double iota) { return ValueAtThreshold(page, iota, max_terms) - level; };
  const double scale = 1.0 / page.change_rate();
  return FindRootIncreasing(excess, 0.0, scale, 1e12 * scale);
}

}  // namespace policy
}  // namespace recrawl
