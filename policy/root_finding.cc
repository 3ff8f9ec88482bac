#include "policy/root_finding.h"

#include <cmath>
#include <limits>
#include <utility>

namespace recrawl {
namespace policy {

double FindRoot(const std::function<double(double)>& f, double lo, double hi,
                const RootOptions& options) {
  double a = lo, b = hi;
  double fa = f(a), fb = f(b);
  if (fa == 0.0) return a;
  if (fb == 0.0) return b;
  if (std::fabs(fa) < std::fabs(fb)) {
    std::swap(a, b);
    std::swap(fa, fb);
  }
  double c = a, fc = fa;
  double d = b - a;
  bool bisected = true;
  for (int it = 0; it < options.max_iterations; ++it) {
    const double tol = options.abs_tol + options.rel_tol * std::fabs(b);
    if (fb == 0.0 || std::fabs(b - a) <= tol) break;
    double s;
    if (fa != fc && fb != fc) {
      // Inverse quadratic interpolation.
      s = a * fb * fc / ((fa - fb) * (fa - fc)) + b * fa * fc / ((fb - fa) * (fb - fc)) +
          c * fa * fb / ((fc - fa) * (fc - fb));
    } else {
      s = b - fb * (b - a) / (fb - fa);  // secant
    }
    const double mid = 0.5 * (a + b);
    const bool outside = (s - mid) * (s - b) > 0.0;  // not between mid and b
    const bool slow = bisected ? std::fabs(s - b) >= 0.5 * std::fabs(b - c)
                               : std::fabs(s - b) >= 0.5 * std::fabs(c - d);
    const bool tiny = bisected ? std::fabs(b - c) < tol : std::fabs(c - d) < tol;
    if (outside || slow || tiny) {
      s = mid;
      bisected = true;
    } else {
      bisected = false;
    }
    const double fs = f(s);
    d = c;
    c = b;
    fc = fb;
    if ((fa < 0.0) != (fs < 0.0)) {
      b = s;
      fb = fs;
    } else {
      a = s;
      fa = fs;
    }
    if (std::fabs(fa) < std::fabs(fb)) {
      std::swap(a, b);
      std::swap(fa, fb);
    }
  }
  return b;
}

double FindRootIncreasing(const std::function<double(double)>& f, double lo, double first_step,
                          double limit, const RootOptions& options) {
  double step = first_step;
  double hi = lo + step;
  while (f(hi) < 0.0) {
    if (hi >= limit) return std::numeric_limits<double>::infinity();
    lo = hi;
    step *= 2.0;
    hi = lo + step;
  }
  return FindRoot(f, lo, hi, options);
}

}  // namespace policy
}  // namespace recrawl
