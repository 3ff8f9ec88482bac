// Safeguarded root finding for the monotone one-dimensional equations that
// run through the policy library (thresholds V(ι) = Λ, water levels Σ ξ(Λ) =
// R, MLE score equations).
#ifndef RECRAWL_POLICY_ROOT_FINDING_H_
#define RECRAWL_POLICY_ROOT_FINDING_H_

#include <functional>

namespace recrawl {
namespace policy {

struct RootOptions {
  // Stop when the bracket is narrower than abs_tol + rel_tol·|x|.
  double abs_tol = 0.0;
  double rel_tol = 4e-16;
  int max_iterations = 400;
};

// Brent's method (inverse quadratic interpolation safeguarded by bisection)
// for f with f(lo) and f(hi) of opposite sign (or zero). Never leaves
// [lo, hi]; returns the end of the final bracket with the smaller |f|.
double FindRoot(const std::function<double(double)>& f, double lo, double hi,
                const RootOptions& options = RootOptions());

// For f increasing on [lo, ∞) with f(lo) <= 0: doubles the step from lo until
// f changes sign, then calls FindRoot. Returns +∞ if f stays negative up to
// `limit`.
double FindRootIncreasing(const std::function<double(double)>& f, double lo, double first_step,
                          double limit, const RootOptions& options = RootOptions());

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_ROOT_FINDING_H_
