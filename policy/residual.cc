#include "policy/residual.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace recrawl {
namespace policy {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2π))
constexpr double k2Pi = 6.283185307179586477;

// Direct product form is exact to a few ulps while e^{−x} does not underflow
// and k multiplications stay few.
constexpr int64_t kDirectPmfMaxK = 32;
constexpr double kDirectPmfMaxX = 700.0;

// 1/n for n <= kDirectPmfMaxK + 64, so that short series multiply instead of
// dividing (a division costs as much as several multiplications in a chain).
constexpr int kReciprocalSize = kDirectPmfMaxK + 64;
struct ReciprocalTable {
  double value[kReciprocalSize];
  constexpr ReciprocalTable() : value() {
    value[0] = 0.0;
    for (int n = 1; n < kReciprocalSize; ++n) value[n] = 1.0 / n;
  }
  constexpr double operator[](int64_t n) const { return value[n]; }
};
constexpr ReciprocalTable kReciprocal;

// Stirling's error term log(n!) − [(n + ½) log n − n + log √(2π)] for n >= 1.
// Small n: from lgamma (absolute error ~3e-15, which is the relative error it
// contributes to the pmf). Large n: the asymptotic series, whose first omitted
// term is below 1e-17 for n > 15.
double StirlingError(double n) {
  if (n <= 15.0) {
    return std::lgamma(n + 1.0) - (n + 0.5) * std::log(n) + n - kLogSqrt2Pi;
  }
  constexpr double kS0 = 1.0 / 12.0;
  constexpr double kS1 = 1.0 / 360.0;
  constexpr double kS2 = 1.0 / 1260.0;
  constexpr double kS3 = 1.0 / 1680.0;
  constexpr double kS4 = 1.0 / 1188.0;
  const double nn = n * n;
  return (kS0 - (kS1 - (kS2 - (kS3 - kS4 / nn) / nn) / nn) / nn) / n;
}

// Deviance term k log(k/x) + x − k >= 0, summed as a series in v = (k−x)/(k+x)
// when k and x are close, where the closed form would cancel.
double DevianceTerm(double k, double x) {
  if (std::fabs(k - x) < 0.1 * (k + x)) {
    const double v = (k - x) / (k + x);
    double sum = (k - x) * v;
    double ej = 2.0 * k * v;
    const double v2 = v * v;
    for (int j = 1; j < 1000; ++j) {
      ej *= v2;
      const double next = sum + ej / (2 * j + 1);
      if (next == sum) return next;
      sum = next;
    }
    return sum;
  }
  return k * std::log(k / x) + x - k;
}

// Σ_{j>=0} Π_{l=1..j} x / (a + l): the upper-tail series P(N >= a) / pmf(a),
// convergent for x < a + 1. Terms are positive and decreasing.
double UpperTailSeries(double a, double x) {
  double sum = 1.0;
  double term = 1.0;
  for (double l = 1.0;; l += 1.0) {
    const double n = a + l;
    term *= n < kReciprocalSize ? x * kReciprocal[static_cast<int64_t>(n)] : x / n;
    sum += term;
    if (term <= kEps * 0.5 * sum) return sum;
  }
}

// Σ_{j>=0} Π_{l=0..j−1} (i − l) / x: the lower-tail series P(N <= i) / pmf(i),
// convergent (it is finite) and decreasing for x >= i.
double LowerTailSeries(double i, double x) {
  double sum = 1.0;
  double term = 1.0;
  for (double l = 0.0; l < i; l += 1.0) {
    term *= (i - l) / x;
    sum += term;
    if (term <= kEps * 0.5 * sum) break;
  }
  return sum;
}

// True where the direct product forms below are accurate: few factors and no
// underflow of e^{−x}.
bool InDirectRange(int64_t i, double x) { return i < kDirectPmfMaxK && x <= kDirectPmfMaxX; }

// Σ_{j<=i} x^j/j! = e^x P(Poisson(x) <= i) for i >= 1, in Horner form
// 1 + x/1 (1 + x/2 (… (1 + x/i))). Each x/j is formed off the chain of
// dependent steps, which is then one multiply-add a step.
double LowerTailSum(int64_t i, double x) {
  double sum = 1.0;
  for (int64_t j = i; j >= 1; --j) sum = 1.0 + sum * (x * kReciprocal[j]);
  return sum;
}

// R < 0.1, summed from the pmf at i + 1: DirectResidual's rare path, out of
// line so that the common one inlines.
__attribute__((noinline)) double SmallDirectResidual(int64_t i, double x, double exp_neg_x) {
  double pmf = exp_neg_x;
  for (int64_t j = 1; j <= i + 1; ++j) pmf *= x * kReciprocal[j];
  return pmf * UpperTailSeries(static_cast<double>(i) + 1.0, x);
}

// R^i(x) for 1 <= i < kDirectPmfMaxK, x <= 700, given e^{−x} and the lower
// tail's sum (LowerTailSum). The lower tail Q = e^{−x} · sum has relative
// error below (i + 3)·eps, and 1 − Q multiplies that by at most
// Q/(1 − Q) <= 9 when Q <= 0.9; beyond, R < 0.1 is summed directly from the
// pmf at i + 1 — unless the caller accepts the absolute error of 1 − Q,
// about (i + 3)·eps. The caller's accuracy is abs_tol / weight (weight > 0),
// divided out only on that path.
inline double DirectResidual(int64_t i, double x, double exp_neg_x, double abs_tol, double weight,
                             double lower_sum) {
  const double lower = exp_neg_x * lower_sum;
  if (lower <= 0.9) return 1.0 - lower;
  if (abs_tol >= 2.0 * static_cast<double>(i + 3) * kEps * weight) {
    return std::max(0.0, 1.0 - lower);
  }
  return SmallDirectResidual(i, x, exp_neg_x);
}

double DirectResidual(int64_t i, double x, double exp_neg_x, double abs_tol) {
  return DirectResidual(i, x, exp_neg_x, abs_tol, 1.0, LowerTailSum(i, x));
}

}  // namespace

double PoissonPmf(int64_t k, double x) {
  if (x <= 0.0) return k == 0 ? 1.0 : 0.0;
  if (k == 0) return std::exp(-x);
  if (k <= kDirectPmfMaxK && x <= kDirectPmfMaxX) {
    double p = std::exp(-x);
    for (int64_t j = 1; j <= k; ++j) p *= x * kReciprocal[j];
    return p;
  }
  const double kd = static_cast<double>(k);
  return std::exp(-StirlingError(kd) - DevianceTerm(kd, x)) / std::sqrt(k2Pi * kd);
}

double Residual(int64_t i, double x) {
  if (!(x > 0.0)) return 0.0;
  if (std::isinf(x)) return 1.0;
  if (i == 0) return -std::expm1(-x);
  if (InDirectRange(i, x)) return DirectResidual(i, x, std::exp(-x), 0.0);
  const double a = static_cast<double>(i) + 1.0;
  if (x < a) return PoissonPmf(i + 1, x) * UpperTailSeries(a, x);
  // P(N <= i) <= x · e^{−x} x^i / i! <= e^{−x + (i+1) log x}: below the
  // smallest double, R is 1 to the last bit.
  if (-x + a * std::log(x) < -745.0) return 1.0;
  return 1.0 - PoissonPmf(i, x) * LowerTailSeries(a - 1.0, x);
}

double ResidualGivenExp(int64_t i, double x, double exp_neg_x, double abs_tol) {
  if (!(x > 0.0)) return 0.0;
  if (i == 0) return x < 0.5 ? -std::expm1(-x) : 1.0 - exp_neg_x;
  if (InDirectRange(i, x)) return DirectResidual(i, x, exp_neg_x, abs_tol);
  return Residual(i, x);
}

void ResidualsGivenExp(int64_t i, const ResidualArgs& a, const ResidualArgs& b, double abs_tol,
                       double* ra, double* rb) {
  if (i >= 1 && a.x > 0.0 && b.x > 0.0 && InDirectRange(i, a.x) && InDirectRange(i, b.x)) {
    // LowerTailSum twice, interleaved: each step of a Horner sum waits for
    // the last, so two independent sums take the time of one.
    double sum_a = 1.0;
    double sum_b = 1.0;
    for (int64_t j = i; j >= 1; --j) {
      sum_a = 1.0 + sum_a * (a.x * kReciprocal[j]);
      sum_b = 1.0 + sum_b * (b.x * kReciprocal[j]);
    }
    *ra = DirectResidual(i, a.x, a.exp_neg_x, abs_tol, a.weight, sum_a);
    *rb = DirectResidual(i, b.x, b.exp_neg_x, abs_tol, b.weight, sum_b);
    return;
  }
  *ra = ResidualGivenExp(i, a.x, a.exp_neg_x, abs_tol / a.weight);
  *rb = ResidualGivenExp(i, b.x, b.exp_neg_x, abs_tol / b.weight);
}

double ResidualComplement(int64_t i, double x) {
  if (!(x > 0.0)) return 1.0;
  if (std::isinf(x)) return 0.0;
  const double a = static_cast<double>(i) + 1.0;
  if (x < a) return 1.0 - PoissonPmf(i + 1, x) * UpperTailSeries(a, x);
  return PoissonPmf(i, x) * LowerTailSeries(a - 1.0, x);
}

}  // namespace policy
}  // namespace recrawl
