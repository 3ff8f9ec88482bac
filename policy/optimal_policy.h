// Optimal continuous crawl policies: the baselines the discrete policies are
// measured against.
//
//  * SolveNoSignalBaseline — problem (5) of the main paper (App. A): periodic
//    crawling without signals, the paper's BASELINE.
//  * SolveAzarRandomized   — Algorithm 2 of Azar et al.: the optimal Poisson
//    (memoryless) crawl rates, in closed form after a sort.
//  * SolveWithSignals      — Theorem 1 of the main paper: threshold policies on
//    τ_eff with noisy change-indicating signals.
//
// All take raw importances μ and normalise them internally (μ̃ = μ/Σμ), so the
// returned level Λ is on the scale of the crawl value V of normalised pages
// (crawl_value.h) and accuracies are fractions of requests served fresh.
// Pure functions, no I/O.
#ifndef RECRAWL_POLICY_OPTIMAL_POLICY_H_
#define RECRAWL_POLICY_OPTIMAL_POLICY_H_

#include <cstddef>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {

// ---------------------------------------------------------------------------
// Water-filling on the level Λ (the Lagrange multiplier of the bandwidth
// constraint), shared by every solver whose KKT conditions read
// "rate_i = rate_i(Λ), Σ_i rate_i(Λ) = R".

struct LevelSolution {
  double level = 0.0;  // Λ
  // The solution: rate_i, Σ = budget (see below for how it may differ from
  // rate_i(Λ)).
  std::vector<double> rates;
  // rate_i(Λ) itself (0 for ceiling_i <= Λ).
  std::vector<double> rates_at_level;
};

// Finds Λ > 0 with Σ_i rate_i(Λ) = budget, where page i's rate curve is
//   rate_i(Λ) = rate(i, Λ)  for 0 < Λ < ceilings[i],   0 for Λ >= ceilings[i].
// Requirements on the caller's `rate`: called only with 0 < Λ < ceilings[i];
// non-increasing in Λ there; unbounded as Λ → 0 for at least one page.
//
// The curve may drop to 0 steeply or even jump at its ceiling: a page crawled
// periodically has rate ≈ Δ/log(1/(1 − Λ/ceiling)) there, so the rates
// between 0 and about Δ/37 are only reached within one ulp of the ceiling,
// and a page with noiseless signals jumps from γ to 0. So Λ is located to
// adjacent doubles a < b with Σ rate(a) > budget >= Σ rate(b), and the
// solution interpolates between the two rate vectors,
//   rates = rate(b) + θ (rate(a) − rate(b)),   θ ∈ [0, 1) fixed by the budget;
// `level` is b. Every page's rate then lies between its rates at two adjacent
// levels, so the KKT conditions hold to an ulp of Λ; a caller turning rates
// back into thresholds must invert its rate curve for the pages where
// rates[i] differs from rates_at_level[i] (or use a policy outside the curve,
// as a jump needs).
//
// Method: the pages are sorted by ceiling; a binary search over the distinct
// ceilings finds the interval between consecutive ceilings that holds the
// solution, Brent's method on log Λ solves there, and bisection on the
// doubles closes the bracket. O(m log m) plus m·(log m + ~60) rate
// evaluations.
//
// InvalidArgument if budget is not positive and finite, a ceiling is negative
// or not finite, or no ceiling is positive (nothing can absorb the budget).
absl::StatusOr<LevelSolution> SolveLevelForBudget(const std::vector<double>& ceilings,
                                                  absl::FunctionRef<double(size_t, double)> rate,
                                                  double budget);

// ---------------------------------------------------------------------------
// Inverse of R^1(x) = 1 − e^{−x}(1 + x) on (0, ∞): the x with R^1(x) = y,
// given y in (0, 1) and its complement 1 − y (passed separately so that a
// caller who knows it more accurately than `1 − y` can say so). Safeguarded
// Newton, using dR^1/dx = x e^{−x}; relative error a few ulps.
double InverseResidual1(double y, double one_minus_y);

// G(ξ; μ, Δ) = (μ/Δ) ξ (1 − e^{−Δ/ξ}): importance-weighted freshness of a
// page crawled every 1/ξ (Eq. (5) of the main paper). G(0) = 0; a page that
// never changes (Δ = 0) is always fresh, G = μ.
double PeriodicObjective(double rate, double importance, double change_rate);

// ---------------------------------------------------------------------------
// Problem (5) and Theorem 1.

struct ContinuousPolicy {
  double level = 0.0;  // Λ on the normalised-importance scale
  // Crawls per unit time; Σ rates = R.
  std::vector<double> rates;
  // ι_i: crawl page i when τ_eff reaches ι_i (+∞: no time trigger — never
  // crawled, or, when signal_crawl_probability < 1, crawled on signals only).
  // Without signals ι_i = 1/rate_i.
  std::vector<double> thresholds;
  // Probability with which a signal that puts τ_eff over ι_i triggers the
  // crawl: 1 for every page except those whose optimum lies on the jump of the
  // rate curve of a page with noiseless signals (ν = 0), which at Λ = μ̃/Δ
  // crawl only on signals, each with this probability (see SolveWithSignals).
  std::vector<double> signal_crawl_probability;
  // Time-average probability that page i is fresh (1 when Δ_i = 0).
  std::vector<double> freshness;
  // Σ μ_i freshness_i / Σ μ_i: the expected fraction of requests served fresh.
  double accuracy = 0.0;
};

// Problem (5): maximise Σ G(ξ_i; μ_i, Δ_i) subject to Σ ξ_i = R, ξ >= 0.
// dG/dξ = (μ/Δ) R^1(Δ/ξ) = V_GREEDY(1/ξ), which falls from μ/Δ at ξ = 0 to 0,
// so G is concave and the KKT conditions are
//   ξ_i > 0:  V_GREEDY,i(1/ξ_i) = Λ,     ξ_i = 0:  μ̃_i/Δ_i <= Λ.
// Signals (recall, false_rate) are ignored. Pages with μ = 0 or Δ = 0 get rate
// 0 (a page with Δ = 0 counts as always fresh). Per page ξ_i(Λ) comes from
// InverseResidual1, Λ from SolveLevelForBudget; thresholds are ι_i = 1/ξ_i
// and Σ ξ_i = R to a few ulps.
absl::StatusOr<ContinuousPolicy> SolveNoSignalBaseline(const std::vector<PageParams>& pages,
                                                       double bandwidth);

// SolveWithSignals caps every page's recall at this value. With λ = 1 every
// change is signalled (α = 0): τ_eff does not grow between signals, V does
// not grow with time, and Theorem 1's time threshold does not exist. The
// threshold family is recovered as the limit λ → 1; λ = 1 − 1e-9 keeps α > 0
// (so thresholds are ι = nβ + s, "after n signals and time s, or at the
// (n+1)-th signal", with β ≈ 1e9·log(γ/ν)/Δ) and changes the objective by
// O(1e-9).
inline constexpr double kMaxSolverRecall = 1.0 - 1e-9;

// Theorem 1: thresholds ι_i with V_i(ι_i) = Λ (or ι_i = ∞ and μ̃_i/Δ_i <= Λ),
// crawl frequencies f_i = 1/ψ_i(ι_i), and Λ such that Σ f_i = R. Page i's
// freshness is w_i(ι_i)/ψ_i(ι_i) (threshold_policy.h).
//
// Per page ι_i(Λ) = ThresholdForValue, Λ from SolveLevelForBudget; where
// that interpolates a rate within an ulp of Λ, the threshold is the inverse
// of f at that rate (f(ι) = rate holds up to the rounding of ι, which for
// λ ≈ 1 pages, ι ~ 1e9, is ~1e-7 relative in f).
//
// Special cases:
//  * pages whose signals carry no information (λΔ = 0) are solved exactly as
//    in SolveNoSignalBaseline, so with λ = ν = 0 everywhere the two agree;
//  * recall is capped at kMaxSolverRecall (see above);
//  * with ν = 0 and λΔ > 0 a signal proves a change and the page is crawled
//    on every signal however large ι is: f(ι) falls only to γ as ι → ∞, then
//    to 0 (never crawl). At Λ = μ̃/Δ the page may take any rate in [0, γ] by
//    crawling each signal with probability p = rate/γ; that earns freshness
//    rate/Δ, linear in the rate with slope μ̃/Δ = Λ, so the KKT conditions
//    hold. The solver uses this when the budget falls into the jump
//    (threshold = +∞, signal_crawl_probability = p).
absl::StatusOr<ContinuousPolicy> SolveWithSignals(const std::vector<PageParams>& pages,
                                                  double bandwidth);

// ---------------------------------------------------------------------------
// Azar et al., Algorithm 2.

struct RandomizedPolicy {
  // Λ of the KKT condition ρ_i = max(0, sqrt(μ̃_i Δ_i / Λ) − Δ_i).
  double level = 0.0;
  std::vector<double> rates;  // ρ_i, Σ = R
  // F2(ρ)/Σμ with F2 = Σ μ_i ρ_i/(ρ_i + Δ_i): accuracy when page i is crawled
  // at the events of a Poisson(ρ_i) process.
  double randomized_accuracy = 0.0;
  // Σ G(ρ_i)/Σμ: accuracy when page i is crawled every 1/ρ_i instead
  // (>= randomized_accuracy, since (1 − e^{−x})/x >= 1/(1 + x)).
  double periodic_accuracy = 0.0;
};

// Maximises F2(ρ) = Σ μ_i ρ_i/(ρ_i + Δ_i) subject to Σ ρ_i = R, ρ >= 0, in
// O(m log m): with the pages sorted by μ/Δ, the lowest ratios are dropped while
// μ_i/Δ_i <= (r/(R + s))², r = Σ sqrt(μΔ), s = ΣΔ over the remaining pages;
// the rest get ρ_i = sqrt(μ_i Δ_i)(R + s)/r − Δ_i (Azar et al., Eq. [11]).
// Pages with μ = 0 or Δ = 0 get rate 0 (Δ = 0 counts as always fresh).
absl::StatusOr<RandomizedPolicy> SolveAzarRandomized(const std::vector<PageParams>& pages,
                                                     double bandwidth);

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_OPTIMAL_POLICY_H_
