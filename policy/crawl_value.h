// The crawl value V of the main paper (Theorem 1, Sec. 5.1, App. A.1): the
// marginal freshness gained per unit of crawl rate by crawling a page now.
// Algorithm 1 crawls argmax_i V_i at every slot; Theorem 1 sets every page's
// threshold where V_i = Λ.
#ifndef RECRAWL_POLICY_CRAWL_VALUE_H_
#define RECRAWL_POLICY_CRAWL_VALUE_H_

#include <cstdint>

#include "policy/crawl_policy.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {

// Relative bound on the part of the NCIS sum that an exact evaluation leaves
// out (see crawl_value.cc for the derivation).
inline constexpr double kValueTruncationTolerance = 1e-10;

// V of `page` (taken at face value: the caller passes the policy's belief)
// in state (τ_elap, n_cis), i.e. at τ_eff = τ_elap + β n_cis:
//   V(ι) = μ̃ Σ_{i=0..⌊ι/β⌋} [ ν^i/(Δ+ν)^{i+1} R^i((α+γ)(ι−iβ))
//                              − e^{−αι}/γ · R^i(γ(ι−iβ)) ].
// `max_terms` = J > 0 keeps only the first J terms (G-NCIS-APPROX-J); 0 sums
// until the omitted tail is provably below kValueTruncationTolerance of the
// value. The special cases reduce exactly:
//   λΔ = 0 (no informative signals): V = (μ̃/Δ) R^1(Δ τ_elap)   (GREEDY);
//   ν = 0: V = μ̃/Δ after any signal, else the GREEDY-CIS form;
//   α = 0 (λ = 1): V depends on n_cis only,
//     V = (μ̃/γ)[(1 − ρ^n)/(1 − ρ) − n ρ^n], ρ = ν/γ  (the α → 0 limit);
//   Δ = 0: V = 0.
double NcisValue(const PageModel& page, double tau_elap, int64_t n_cis, int max_terms = 0);

// V with how fast it grows between signals. Lemma 3 and the proof of
// Lemma 1 give dV/dι = μ̃ α e^{−αι} ψ(ι), ψ the expected crawl interval of
// Lemma 4 (for GREEDY α = Δ, ψ = ι). The same identity holds term by term,
// so also for G-NCIS-APPROX-J with ψ_J. As ψ' <= 1 (raising a threshold by
// dι lengthens every interval by at most dι) and e^{−αs} <= e^{−αι}, for
// every s >= ι
//   dV/dι(s) <= slope + slope_rise · (s − ι).
// Both are upper bounds (widened for rounding); 0 where V is constant
// between signals.
struct ValueGrowth {
  double value;
  double slope;       // dV/dι at ι
  double slope_rise;  // μ̃ α e^{−αι}
};
ValueGrowth NcisValueGrowth(const PageModel& page, double tau_elap, int64_t n_cis,
                            int max_terms = 0);

// V under `policy`: NcisValue of the policy's belief about the page.
// GREEDY ignores n_cis and uses the full change rate Δ.
double CrawlValue(const CrawlPolicy& policy, const PageModel& page, double tau_elap, int64_t n_cis);

// V at effective elapsed time ι with no signal since the crawl: the function
// whose level sets are the thresholds of Lemma 1 and Theorem 1.
inline double ValueAtThreshold(const PageModel& page, double iota, int max_terms = 0) {
  return NcisValue(page, iota, 0, max_terms);
}

// μ̃/Δ: the limit of V as ι → ∞ (+∞ when Δ = 0 and μ̃ > 0 is excluded: V = 0).
double ValueCeiling(const PageModel& page);

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_CRAWL_VALUE_H_
