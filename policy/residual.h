// The normalised residual of the i-th Taylor polynomial of exp (main paper,
// Theorem 1):
//   R^i(x) = 1 − e^{−x} Σ_{j≤i} x^j / j! = P(Poisson(x) ≥ i + 1),
// which is also the regularised lower incomplete gamma function P(i + 1, x).
//
// Computed without the cancellation of `1 − sum`: below the Poisson mean the
// upper tail is summed directly from the pmf at i + 1; above it the lower
// tail (at most about one half) is summed and subtracted. The pmf itself uses
// Loader's saddle-point form (stirlerr + bd0), so the relative error stays
// near 1e-14 for i up to 1e6 and x up to 1e6.
#ifndef RECRAWL_POLICY_RESIDUAL_H_
#define RECRAWL_POLICY_RESIDUAL_H_

#include <cstdint>

namespace recrawl {
namespace policy {

// e^{−x} x^k / k! for k >= 0, x >= 0.
double PoissonPmf(int64_t k, double x);

// R^i(x) = P(Poisson(x) >= i + 1) for i >= 0, x >= 0. R^i(0) = 0.
double Residual(int64_t i, double x);

// R^i(x) for a caller that already has e^{−x} (to a few ulps), e.g. because it
// steps x along a line and updates the exponential by multiplication. Same
// accuracy as Residual; saves the exp on the common small-i path. A caller
// that only needs absolute accuracy `abs_tol` (a term of small weight in a
// sum) lets small values skip their tail series: the result then has absolute
// error below max(abs_tol, 1e-14) instead of relative error 1e-14.
double ResidualGivenExp(int64_t i, double x, double exp_neg_x, double abs_tol = 0.0);

// ResidualGivenExp at two arguments of one order i (a term of the NCIS sum
// has two), in about the time of one: the two series are summed in one loop.
// Each result is weighted by the caller, so it needs absolute accuracy
// abs_tol / weight (weight > 0; computed only where it matters, sparing two
// divisions a term).
struct ResidualArgs {
  double x;
  double exp_neg_x;
  double weight;
};
void ResidualsGivenExp(int64_t i, const ResidualArgs& a, const ResidualArgs& b, double abs_tol,
                       double* ra, double* rb);

// 1 − R^i(x) = P(Poisson(x) <= i), accurate when it is small.
double ResidualComplement(int64_t i, double x);

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_RESIDUAL_H_
