// The per-page Poisson model of the main paper (Busa-Fekete et al., Sec. 3):
// requests ~ Poisson(μ), changes ~ Poisson(Δ), each change is signalled with
// probability λ (recall), and false signals arrive as Poisson(ν).
#ifndef RECRAWL_POLICY_PAGE_MODEL_H_
#define RECRAWL_POLICY_PAGE_MODEL_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace recrawl {
namespace policy {

// Raw parameters as a caller supplies them. `importance` is the weight that
// multiplies the crawl value: the normalised importance μ̃ = μ / Σμ when the
// value is compared across pages (Algorithm 1), or the raw μ where a solver
// normalises itself.
struct PageParams {
  double importance = 0.0;   // μ or μ̃, >= 0
  double change_rate = 0.0;  // Δ, >= 0
  double recall = 0.0;       // λ, in [0, 1]
  double false_rate = 0.0;   // ν, >= 0
};

// A validated page with the derived quantities of Sec. 3:
//   α = (1 − λ)Δ        rate of unsignalled changes
//   γ = λΔ + ν          rate of all signals
//   β = log(γ/ν) / α    elapsed-time equivalent of one signal
//   precision = λΔ/γ
// Edge cases are explicit:
//   ν = 0, λΔ > 0  → β = +∞ (a signal proves a change);
//   λΔ = 0         → signals carry no information: β = 0, precision = 0,
//                    and the page behaves as if it had no signals;
//   λ = 1 or Δ = 0 → α = 0: freshness depends on the signal count only,
//                    β = +∞ when λΔ > 0 (see crawl_value.h).
class PageModel {
 public:
  // Rejects negative, NaN or infinite values and λ outside [0, 1] with an
  // InvalidArgument status naming the field.
  static absl::StatusOr<PageModel> Create(const PageParams& params);
  // What Create checks, without deriving the model.
  static absl::Status Check(const PageParams& params);

  const PageParams& params() const { return params_; }
  double importance() const { return params_.importance; }
  double change_rate() const { return params_.change_rate; }
  double recall() const { return params_.recall; }
  double false_rate() const { return params_.false_rate; }

  double alpha() const { return alpha_; }
  double gamma() const { return gamma_; }
  double beta() const { return beta_; }
  // α·β = log(γ/ν): the log-odds decrement of freshness per signal; finite
  // even when α = 0. +∞ when ν = 0 and λΔ > 0.
  double log_signal_factor() const { return log_signal_factor_; }
  // λΔ/γ; 0 when there are no signals at all (γ = 0).
  double precision() const { return precision_; }

  // True when signals change the posterior freshness (λΔ > 0).
  bool signals_informative() const { return signalled_change_rate_ > 0.0; }
  // λΔ: rate of signalled changes.
  double signalled_change_rate() const { return signalled_change_rate_; }

  // P(fresh | τ_elap, n_cis) = exp(−α τ_elap) (ν/γ)^n  (main paper Eq. 1).
  double FreshProbability(double tau_elap, int64_t n_cis) const;
  // τ_eff = τ_elap + β n_cis; +∞ when β = +∞ and n_cis > 0.
  double EffectiveElapsed(double tau_elap, int64_t n_cis) const;

  // The same page as seen by a policy that ignores signals (GREEDY): λ = ν = 0.
  PageModel WithoutSignals() const;
  // The same page as seen by a policy that trusts every signal (GREEDY-CIS):
  // ν = 0, λ and Δ unchanged.
  PageModel WithoutFalseSignals() const;
  // The same page with its importance replaced (e.g. normalised).
  PageModel WithImportance(double importance) const;

 private:
  explicit PageModel(const PageParams& params);

  PageParams params_;
  double alpha_;
  double gamma_;
  double beta_;
  double log_signal_factor_;
  double precision_;
  double signalled_change_rate_;
};

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_PAGE_MODEL_H_
