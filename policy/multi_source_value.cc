#include "policy/multi_source_value.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "policy/residual.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Relative widening of computed slopes, for rounding (as crawl_value.cc).
constexpr double kSlopeSlack = 1e-9;
// See Summation::SumWholeLevel.
constexpr double kWholeLevelTolerance = 1e-13;
// A subtree of the enumeration is skipped when its bound is below this share
// of the cut's tolerance, and the pruned total stays below half of it.
constexpr double kPruneShare = 1e-3;

using SourceKind = MultiSourceModel::SourceKind;

// The informative sources' constants, and the running sums of (M5)–(M7).
class Summation {
 public:
  Summation(const MultiSourceModel& page, double iota) : iota_(iota) {
    double nu_sum = 0.0, gamma_sum = 0.0;
    for (int s = 0; s < page.num_sources(); ++s) {
      if (page.kind(s) != SourceKind::kInformative) continue;
      const double nu = page.params().sources[s].false_rate;
      nu_sum += nu;
      gamma_sum += page.signal_rate(s);
      sources_.push_back({page.beta(s), nu, page.signal_rate(s)});
    }
    alpha_ = page.alpha();
    delta_ = page.change_rate();
    c_ = delta_ + nu_sum;
    gamma_ = gamma_sum + page.absorbing_rate();
    log_q_ = std::log(nu_sum / c_);
    for (Source& s : sources_) {
      s.log_nu_over_c = std::log(s.nu / c_);
      s.log_gamma_over_total = std::log(s.gamma / gamma_);
    }
    // The most accurate sources first: their large counts carry little
    // weight, so whole subtrees of the enumeration can be pruned.
    std::sort(sources_.begin(), sources_.end(),
              [](const Source& x, const Source& y) { return x.nu < y.nu; });
    log_q_rest_.assign(sources_.size() + 1, -kInf);
    double nu_rest = 0.0;
    for (size_t j = sources_.size(); j-- > 0;) {
      nu_rest += sources_[j].nu;
      log_q_rest_[j] = std::log(nu_rest / c_);
    }
    log_g_ = std::log(gamma_sum / gamma_);
    beta_min_ = kInf;
    beta_max_ = 0.0;
    for (const Source& s : sources_) {
      beta_min_ = std::min(beta_min_, s.beta);
      beta_max_ = std::max(beta_max_, s.beta);
    }
    decay_ = std::exp(-alpha_ * iota);
  }

  // Sums levels K = 0, 1, ... until nothing is left (y_k <= 0 for all k of
  // the level) or the bound (M9) on the levels left, and when `need_psi`
  // also the bound on ψ's, is below the tolerance of the sums.
  void Run(bool need_psi) {
    prune_ = !need_psi;
    for (int64_t level = 0;; ++level) {
      const double y_max = iota_ - static_cast<double>(level) * beta_min_;
      if (y_max <= 0.0 && level > 0) break;
      if (level > 0) {
        // Σ_{K >= level} terms <= Q^K R^K(C y_max)/Δ (M9).
        const double w_tail =
            std::exp(static_cast<double>(level) * log_q_) * Residual(level, c_ * y_max) / delta_;
        bool done = w_tail <= kValueTruncationTolerance * value_sum_ - pruned_;
        if (need_psi) {
          // Σ_{K >= level} R^K(Γ y_max)/Γ = E[(X − level)^+]/Γ
          //   <= E[X 1{X > level}]/Γ = y_max R^{level−1}(Γ y_max),
          // X ~ Poisson(Γ y_max).
          const double psi_tail = y_max * Residual(level - 1, gamma_ * y_max);
          done = done && w_tail <= kValueTruncationTolerance * w_sum_ &&
                 psi_tail <= kValueTruncationTolerance * psi_sum_;
        }
        if (done) break;
      }
      level_ = level;
      if (!SumWholeLevel(level)) {
        Enumerate(0, level, iota_, std::lgamma(static_cast<double>(level) + 1.0), 0.0, 0.0);
      }
    }
  }

  double value_sum() const { return value_sum_; }
  double w_sum() const { return w_sum_; }
  double psi_sum() const { return psi_sum_; }
  double psi_decayed_sum() const { return psi_decayed_sum_; }
  double decay() const { return decay_; }

 private:
  struct Source {
    double beta;
    double nu;
    double gamma;
    double log_nu_over_c = 0.0;
    double log_gamma_over_total = 0.0;
  };

  // Compositions of `left` over sources j.. with y = ι − Σ_{r<j} k_r β_r;
  // log_m = log(K!/Π_{r<j} k_r!), log_w, log_g the Σ k_r log(ν_r/C) and
  // Σ k_r log(γ_r/Γ) so far.
  void Enumerate(size_t j, int64_t left, double y, double log_m, double log_w, double log_g) {
    if (y <= 0.0) return;
    if (j + 1 == sources_.size() || sources_.empty()) {
      if (!sources_.empty()) {
        const Source& s = sources_[j];
        const double k = static_cast<double>(left);
        y -= k * s.beta;
        if (y <= 0.0) return;
        log_m -= std::lgamma(k + 1.0);
        log_w += k * s.log_nu_over_c;
        log_g += k * s.log_gamma_over_total;
      }
      AddTerm(y, log_m, log_w, log_g);
      return;
    }
    const Source& s = sources_[j];
    for (int64_t k = 0; k <= left; ++k) {
      const double kd = static_cast<double>(k);
      const double y_k = y - kd * s.beta;
      if (y_k <= 0.0) break;
      const double log_m_k = log_m - std::lgamma(kd + 1.0);
      const double log_w_k = log_w + kd * s.log_nu_over_c;
      if (prune_) {
        // The subtree's A_k sum to at most M Π (ν_r/C)^{k_r} over the fixed
        // counts times Q_rest^left / left! (multinomial theorem, R <= 1);
        // its value terms are below their A_k. Pruned mass is counted
        // against the tolerance of the cut.
        const double rest = static_cast<double>(left - k);
        const double bound =
            std::exp(log_m_k - std::lgamma(rest + 1.0) + log_w_k + rest * log_q_rest_[j + 1]) / c_;
        const double budget = kValueTruncationTolerance * value_sum_;
        if (bound <= kPruneShare * budget && pruned_ + bound <= 0.5 * budget) {
          pruned_ += bound;
          continue;
        }
      }
      Enumerate(j + 1, left - k, y_k, log_m_k, log_w_k, log_g + kd * s.log_gamma_over_total);
    }
  }

  // A level whose every y_k is so large that R^K(C y_k) and R^K(Γ y_k) are
  // within kWholeLevelTolerance of 1 sums in closed form by the multinomial
  // theorem: Σ_{|k|=K} M(k) Π (ν_s/C)^{k_s} = Q^K and Σ M(k) Π (γ_s/Γ)^{k_s}
  // = G^K with G = Σ γ_s / Γ, each with relative error below that
  // tolerance. This keeps large ι (where the cut needs many levels) cheap.
  bool SumWholeLevel(int64_t level) {
    if (sources_.empty()) return false;
    const double y_min = iota_ - static_cast<double>(level) * beta_max_;
    if (y_min <= 0.0) return false;
    if (ResidualComplement(level, c_ * y_min) > kWholeLevelTolerance ||
        ResidualComplement(level, gamma_ * y_min) > kWholeLevelTolerance) {
      return false;
    }
    const double k = static_cast<double>(level);
    const double a = std::exp(k * log_q_) / c_;
    const double psi_term = std::exp(k * log_g_) / gamma_;
    const double b = decay_ * psi_term;
    value_sum_ += a - b;
    w_sum_ += a;
    psi_sum_ += psi_term;
    psi_decayed_sum_ += b;
    return true;
  }

  void AddTerm(double y, double log_m, double log_w, double log_g) {
    const double a = std::exp(log_m + log_w) * Residual(level_, c_ * y) / c_;
    const double psi_term =
        gamma_ > 0.0 ? std::exp(log_m + log_g) * Residual(level_, gamma_ * y) / gamma_ : y;
    const double b = decay_ * psi_term;
    value_sum_ += a - b;
    w_sum_ += a;
    psi_sum_ += psi_term;
    psi_decayed_sum_ += b;
  }

  double iota_;
  std::vector<Source> sources_;
  std::vector<double> log_q_rest_;  // log(Σ_{r>=j} ν_r / C)
  bool prune_ = false;
  double pruned_ = 0.0;  // bound on the A_k of pruned subtrees
  double alpha_, delta_, c_, gamma_, log_q_, log_g_, beta_min_, beta_max_, decay_;
  int64_t level_ = 0;
  double value_sum_ = 0.0, w_sum_ = 0.0, psi_sum_ = 0.0, psi_decayed_sum_ = 0.0;
};

// α = 0 (M8): at most one informative source s; V = (μ̃/C) Σ_{k<n}
// [(ν/C)^k − ρ^n (γ/C)^k] with ρ = ν/γ, C = Δ + ν.
double SignalOnlyValue(const MultiSourceModel& page, const SourceSignals& signals) {
  for (int s = 0; s < page.num_sources(); ++s) {
    if (page.kind(s) != SourceKind::kInformative) continue;
    const int64_t n = signals.counts[s];
    if (n <= 0) return 0.0;
    const double nu = page.params().sources[s].false_rate;
    const double gamma = page.signal_rate(s);
    const double c = page.change_rate() + nu;
    const double rho_n = std::exp(-static_cast<double>(n) * page.log_signal_factor(s));
    double sum = 0.0, false_pow = 1.0, signal_pow = 1.0;
    for (int64_t k = 0; k < n; ++k) {
      sum += false_pow - rho_n * signal_pow;
      false_pow *= nu / c;
      signal_pow *= gamma / c;
      if (false_pow <= 1e-17 * sum && rho_n * signal_pow <= 1e-17 * sum) break;
    }
    return page.importance() / c * sum;
  }
  return 0.0;  // fresh for certain until a change is proven
}

}  // namespace

namespace internal {

ValueGrowth MultiSourceSum(const MultiSourceModel& page, double iota, double* psi, double* w) {
  Summation sum(page, iota);
  sum.Run(/*need_psi=*/psi != nullptr);
  if (psi != nullptr) *psi = sum.psi_sum();
  if (w != nullptr) *w = sum.w_sum();
  const double mu = page.importance();
  const double alpha = page.alpha();
  const double error = 2.0 * kValueTruncationTolerance * sum.value_sum();
  return {mu * sum.value_sum(), mu * alpha * (sum.psi_decayed_sum() * (1.0 + kSlopeSlack) + error),
          mu * alpha * sum.decay()};
}

}  // namespace internal

ValueGrowth MultiSourceValueGrowth(const MultiSourceModel& page, double tau_elap,
                                   const SourceSignals& signals) {
  const double delta = page.change_rate();
  const double mu = page.importance();
  if (delta <= 0.0 || mu <= 0.0) return {0.0, 0.0, 0.0};
  if (std::optional<PageParams> single = MultiSourceModel::SingleSourceParams(page.params())) {
    if (signals.joint > 0) return {mu / delta, 0.0, 0.0};
    int64_t n = 0;
    for (int s = 0; s < page.num_sources(); ++s) {
      if (page.params().sources[s].recall > 0.0) n = signals.counts[s];
    }
    return NcisValueGrowth(*PageModel::Create(*single), tau_elap, n);
  }
  const double log_odds = page.SignalLogOdds(signals);
  if (std::isinf(tau_elap) || std::isinf(log_odds)) return {mu / delta, 0.0, 0.0};
  if (page.alpha() <= 0.0) return {SignalOnlyValue(page, signals), 0.0, 0.0};
  return internal::MultiSourceSum(page, page.EffectiveElapsed(tau_elap, signals));
}

double MultiSourceValue(const MultiSourceModel& page, double tau_elap,
                        const SourceSignals& signals) {
  return MultiSourceValueGrowth(page, tau_elap, signals).value;
}

IntervalStats MultiSourceIntervalStats(const MultiSourceModel& page, double iota) {
  if (std::isinf(iota)) return {kInf, kInf};
  IntervalStats stats;
  internal::MultiSourceSum(page, iota, &stats.psi, &stats.w);
  return stats;
}

}  // namespace policy
}  // namespace recrawl
