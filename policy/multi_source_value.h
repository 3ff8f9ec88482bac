// The crawl value of a page with several signal sources
// (docs/multi_source_model.md, Eqs. (M5)–(M8)): the main paper's Theorem 1
// value with Lemma 4's sums taken over the vector k of per-source signal
// counts,
//   ψ(ι) = Σ_{k: y_k > 0} M(k) Π_s (γ_s/Γ)^{k_s} R^K(Γ y_k) / Γ       (M6)
//   w(ι) = Σ_{k: y_k > 0} M(k) Π_s (ν_s/C)^{k_s} R^K(C y_k) / C       (M7)
//   V(ι) = μ̃ (w(ι) − e^{−αι} ψ(ι))                                   (M5)
// over informative sources s, K = |k|, y_k = ι − Σ k_s β_s,
// M(k) = K!/Π k_s!, Γ = Σ γ_s + Γ_∞, C = Δ + Σ ν_s. The sum is cut where
// the bound (M9) on what it leaves out is below kValueTruncationTolerance of
// the value.
//
// A page whose sources include at most one with λ_s > 0 is the paper's
// single-source page (MultiSourceModel::SingleSourceParams) and is valued by
// NcisValue itself, so its value is today's to the last bit.
#ifndef RECRAWL_POLICY_MULTI_SOURCE_VALUE_H_
#define RECRAWL_POLICY_MULTI_SOURCE_VALUE_H_

#include "policy/crawl_value.h"
#include "policy/multi_source_model.h"
#include "policy/threshold_policy.h"

namespace recrawl {
namespace policy {

// V of `page` in state (τ_elap, signals) with its growth bound (as
// NcisValueGrowth: dV/dι <= slope + slope_rise·(s − ι) for s >= ι, exact
// identity dV/dι = μ̃ α e^{−αι} ψ(ι)). Special cases: Δ = 0 or μ̃ = 0 → 0;
// a joint event, a proof source's signal or τ_elap = ∞ → μ̃/Δ; α = 0 →
// (M8), constant between signals. `signals` must pass CheckSignals.
ValueGrowth MultiSourceValueGrowth(const MultiSourceModel& page, double tau_elap,
                                   const SourceSignals& signals);
double MultiSourceValue(const MultiSourceModel& page, double tau_elap,
                        const SourceSignals& signals);

// ψ and w (M6), (M7) of the threshold policy that crawls when τ_eff
// reaches ι, for a page with α > 0 (ι = ∞: never crawled, ψ = ∞).
IntervalStats MultiSourceIntervalStats(const MultiSourceModel& page, double iota);

namespace internal {

// The sums (M5)–(M7) at τ_eff = ι for α > 0 and finite ι, without the
// single-source shortcut (so tests can compare them with NcisValue).
// `psi` receives ψ(ι) when not null.
ValueGrowth MultiSourceSum(const MultiSourceModel& page, double iota, double* psi = nullptr,
                           double* w = nullptr);

}  // namespace internal
}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_MULTI_SOURCE_VALUE_H_
