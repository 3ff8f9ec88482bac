// The threshold policy of Lemma 1 (crawl a page when τ_eff reaches ι) and its
// per-interval statistics, Lemma 4 of the main paper:
//   ψ(ι) = Σ_{i=0..⌊ι/β⌋} R^i(γ(ι − iβ)) / γ          expected interval length
//   w(ι) = Σ_{i=0..⌊ι/β⌋} ν^i/(Δ+ν)^{i+1} R^i((α+γ)(ι − iβ))
//                                                   expected fresh time per interval
//   f(ι) = 1/ψ(ι)                                   crawl frequency
// and the inverse of the crawl value, ι(Λ) with V(ι) = Λ.
#ifndef RECRAWL_POLICY_THRESHOLD_POLICY_H_
#define RECRAWL_POLICY_THRESHOLD_POLICY_H_

#include "policy/page_model.h"

namespace recrawl {
namespace policy {

struct IntervalStats {
  double psi = 0.0;  // E[length of a crawl interval]
  double w = 0.0;    // E[∫ P(fresh) over a crawl interval]

  double frequency() const { return 1.0 / psi; }
  // Time-average probability of being fresh, w/ψ (0 when never crawled).
  double freshness() const;
};

// ψ and w for the page crawled whenever its τ_eff reaches ι (ι = +∞: never).
// Pages whose signals carry no information (λΔ = 0, or γ = 0) are crawled
// every ι; with ν = 0 a signal triggers a crawl at once.
IntervalStats ThresholdIntervalStats(const PageModel& page, double iota);

// ι(Λ): the threshold where V(ι) = level (Theorem 1), found by bracketing and
// Brent's method on the increasing V. Returns 0 for level <= 0 and +∞ when
// level >= μ̃/Δ (V never gets there) or when V does not grow with time (α = 0).
// `max_terms` as in NcisValue (0 = exact value).
double ThresholdForValue(const PageModel& page, double level, int max_terms = 0);

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_THRESHOLD_POLICY_H_
