// The page model with several independent signal sources
// (docs/multi_source_model.md): requests ~ Poisson(μ), changes ~ Poisson(Δ);
// each change is signalled by source s with probability λ_s, independently of
// the other sources and changes; source s also sends false signals as
// Poisson(ν_s). Signals are not delayed, so a change signalled by several
// sources shows as one instant where they all signalled (a "joint event").
// With one source this is the main paper's model (policy/page_model.h).
#ifndef RECRAWL_POLICY_MULTI_SOURCE_MODEL_H_
#define RECRAWL_POLICY_MULTI_SOURCE_MODEL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {

struct SourceParams {
  double recall = 0.0;      // λ_s, in [0, 1]
  double false_rate = 0.0;  // ν_s, >= 0
};

struct MultiSourceParams {
  double importance = 0.0;            // μ or μ̃, >= 0 (as PageParams::importance)
  double change_rate = 0.0;           // Δ, >= 0
  std::vector<SourceParams> sources;  // S >= 0; none behaves as GREEDY's page
};

// What a page's sources sent since its last crawl.
struct SourceSignals {
  // counts[s]: instants where source s alone signalled (size S).
  std::vector<int64_t> counts;
  // Instants where two or more sources signalled at once (always a change).
  int64_t joint = 0;
};

// InvalidArgument naming the field when `signals` has not `num_sources`
// counts or a count (or joint) is negative.
absl::Status CheckSourceSignals(const SourceSignals& signals, int num_sources);

// A validated page with the rates of docs/multi_source_model.md:
//   α   = Δ Π_r (1 − λ_r)               unsignalled changes
//   κ_s = λ_s Δ Π_{r≠s} (1 − λ_r)       changes signalled by s alone
//   Δ_J = Δ − α − Σ κ_s                 joint events
//   γ_s = κ_s + ν_s                     single-source events of s   (M1)
//   w_s = log(γ_s/ν_s), β_s = w_s/α     log-odds and elapsed time per event
// A source is kNoise when κ_s = 0 (its signals say nothing: w_s = β_s = 0),
// kProof when ν_s = 0 < κ_s (w_s = β_s = +∞), else kInformative (β_s = +∞
// when α = 0). Immutable; thread-compatible.
class MultiSourceModel {
 public:
  enum class SourceKind { kNoise, kInformative, kProof };

  // InvalidArgument naming the field ("change_rate", "sources[1].recall",
  // ...) for negative, NaN or infinite values or a recall outside [0, 1].
  static absl::StatusOr<MultiSourceModel> Create(const MultiSourceParams& params);
  static absl::Status Check(const MultiSourceParams& params);

  // The page seen through the paper's single-source model: at most one
  // source has λ_s > 0 (the others only send noise), so PageModel with that
  // source's (λ_s, ν_s), or λ = ν = 0 when none has, is the same model.
  // nullopt when two or more sources have λ_s > 0.
  static std::optional<PageParams> SingleSourceParams(const MultiSourceParams& params);

  const MultiSourceParams& params() const { return params_; }
  int num_sources() const { return static_cast<int>(params_.sources.size()); }
  double importance() const { return params_.importance; }
  double change_rate() const { return params_.change_rate; }

  double alpha() const { return alpha_; }
  double joint_rate() const { return joint_rate_; }
  double exclusive_rate(int s) const { return sources_[s].exclusive_rate; }
  double signal_rate(int s) const { return sources_[s].signal_rate; }
  double log_signal_factor(int s) const { return sources_[s].log_signal_factor; }
  double beta(int s) const { return sources_[s].beta; }
  SourceKind kind(int s) const { return sources_[s].kind; }
  // Rate of events that prove a change: joint events and proof sources'
  // signals (Γ_∞).
  double absorbing_rate() const { return absorbing_rate_; }

  // InvalidArgument naming the field when counts has not S entries or a
  // count (or joint) is negative. The functions below assume it holds.
  absl::Status CheckSignals(const SourceSignals& signals) const;

  // L = Σ_s n_s w_s: the statistic the posterior depends on (+∞ after a
  // joint event or a proof source's signal). Noise sources add 0.
  double SignalLogOdds(const SourceSignals& signals) const;
  // P(fresh | τ_elap, signals) = 1{joint = 0} exp(−α τ_elap − L)   (M2).
  double FreshProbability(double tau_elap, const SourceSignals& signals) const;
  // τ_eff = τ_elap + L/α (M3): τ_elap when L = 0, +∞ when L > 0 and α = 0.
  double EffectiveElapsed(double tau_elap, const SourceSignals& signals) const;

  // The paper's model of the merged stream in which every signalling instant
  // counts once, whichever sources signalled: λ = 1 − Π(1 − λ_s),
  // ν = Σ ν_s. That stream is exactly this single-source model, so this is
  // what a single (λ, ν) fitted to it converges to.
  PageModel Merged() const;
  // The same over the sources in `trusted` (S entries) only, the others'
  // signals dropped: λ = 1 − Π_{trusted}(1 − λ_s), ν = Σ_{trusted} ν_s, the
  // exact single-source model of that stream.
  PageModel MergedOf(const std::vector<bool>& trusted) const;
  // The sources worth listening to when a page is ranked by one (λ, ν)
  // (MergedOf): those whose log-odds per signal w_s (M3) is at least
  // `min_relative_weight` of the largest (a proof source's is +∞, so then
  // only proof sources are). Noise sources (w_s = 0) never are. Diluting an
  // accurate source's signals with a noisy one's costs more than the noisy
  // one adds (docs/results.md, "Per-source trust").
  std::vector<bool> TrustedSources(double min_relative_weight) const;

 private:
  struct Source {
    double exclusive_rate;
    double signal_rate;
    double log_signal_factor;
    double beta;
    SourceKind kind;
  };

  explicit MultiSourceModel(const MultiSourceParams& params);

  MultiSourceParams params_;
  std::vector<Source> sources_;
  double alpha_;
  double joint_rate_;
  double absorbing_rate_;
};

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_MULTI_SOURCE_MODEL_H_
