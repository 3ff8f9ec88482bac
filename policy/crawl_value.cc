#include "policy/crawl_value.h"

#include <cmath>
#include <limits>

#include "policy/residual.h"

namespace recrawl {
namespace policy {
namespace {

// Relative widening of computed slopes, for rounding in ψ.
constexpr double kSlopeSlack = 1e-9;

// GREEDY-CIS / ν = 0 with no signal yet (main paper Sec. 5.1):
//   V = μ̃ (R^0(Δτ)/Δ − e^{−ατ} R^0(γτ)/γ), since α + γ = Δ when ν = 0.
// Here ψ(τ) = R^0(γτ)/γ (Lemma 4 with no term beyond the first).
ValueGrowth NoiselessValue(const PageModel& page, double tau) {
  const double delta = page.change_rate();
  const double gamma = page.gamma();
  const double alpha = page.alpha();
  const double psi = -std::expm1(-gamma * tau) / gamma;
  const double decay = std::exp(-alpha * tau);
  const double mu = page.importance();
  const double value = mu * (-std::expm1(-delta * tau) / delta - decay * psi);
  return {value, mu * alpha * decay * psi * (1.0 + kSlopeSlack), mu * alpha * decay};
}

// α = 0 (every change is signalled, λ = 1) with ν > 0. Freshness is ρ^n with
// ρ = ν/γ whatever the elapsed time, so V is the α → 0 limit of the NCIS sum
// at ι = τ + nβ: terms i < n tend to (ρ^i/γ)(1 − ρ^{n−i}) and the rest to 0,
//   V = (μ̃/γ) [Σ_{i<n} ρ^i − n ρ^n] = (μ̃/γ) [(1 − ρ^n)/(1 − ρ) − n ρ^n].
double SignalOnlyValue(const PageModel& page, int64_t n) {
  if (n <= 0) return 0.0;
  const double gamma = page.gamma();
  const double log_rho = -page.log_signal_factor();  // log(ν/γ)
  const double rho_n = std::exp(static_cast<double>(n) * log_rho);
  const double one_minus_rho = page.precision();  // 1 − ν/γ = λΔ/γ
  const double geometric = -std::expm1(static_cast<double>(n) * log_rho) / one_minus_rho;
  return page.importance() / gamma * (geometric - static_cast<double>(n) * rho_n);
}

// e^{−x_i} along x_i = x_0 − i·step, i = 0, 1, ...: one multiplication per
// term instead of an exp (the relative error grows by about one ulp a step,
// and the sum rarely needs more than a few dozen steps). Values for x > 700
// are not needed (ResidualGivenExp does not use them there) and restart the
// product once x is back in range.
class ExpAlongLine {
 public:
  explicit ExpAlongLine(double step) : factor_(std::exp(step)) {}

  double Next(double x) {
    if (x > 700.0) {
      valid_ = false;
      return 0.0;
    }
    if (valid_ && std::isfinite(factor_)) {
      value_ *= factor_;
    } else {
      value_ = std::exp(-x);
      valid_ = true;
    }
    return value_;
  }

 private:
  const double factor_;
  double value_ = 0.0;
  bool valid_ = false;
};

// Per-term absolute error allowance, relative to the partial sum; with a few
// dozen terms the total stays below kValueTruncationTolerance.
constexpr double kResidualTolerance = 1e-12;

// The general NCIS sum at ι = τ + nβ, with y_i = ι − iβ = τ + (n − i)β formed
// without cancelling the large nβ against iβ.
//
// Truncation bound. Writing R^i(z) = ∫_0^z t^i e^{−t}/i! dt and using
// e^{−αι} = e^{−α y_i} (ν/γ)^i, the i-th term equals
//   T_i = ν^i/i! ∫_0^{y_i} u^i e^{−γu} (e^{−αu} − e^{−α y_i}) du,
// so 0 <= T_i <= A_i := q^i R^i(c y_i)/c with c = Δ + ν = α + γ and
// q = ν/c < 1. Because y_i decreases in i, and R^i(z) decreases in i and
// increases in z, A_i <= q^{i−j} A_j for i >= j, hence
//   Σ_{i>=j} T_i <= A_j / (1 − q) = A_j c / Δ.
// The loop stops at the first j whose bound is below
// kValueTruncationTolerance times the partial sum, so the relative error of
// the cut is at most that, whatever ⌊ι/β⌋ is; the number of terms is at most
// about log(tolerance)/log(q) plus the terms where R^i(c y_i) is near 1.
//
// ψ(ι) = Σ_i R^i(γ y_i)/γ (Lemma 4) is summed alongside: its terms are the
// subtracted ones divided by e^{−αι}. Each of them is below its A_i, so the
// cut leaves out less than kValueTruncationTolerance of the value from
// e^{−αι}ψ as well, and the residuals' allowances add at most
// kResidualTolerance of the sum a term; the slope is widened by both.
ValueGrowth NoisySignalValue(const PageModel& page, double tau, int64_t n, int max_terms) {
  const double delta = page.change_rate();
  const double nu = page.false_rate();
  const double alpha = page.alpha();
  const double gamma = page.gamma();
  const double beta = page.beta();
  const double c = delta + nu;
  const double q = nu / c;
  const double tail_factor = c / delta;  // 1 / (1 − q)
  // e^{−αι} = e^{−ατ} (ν/γ)^n.
  const double decay = std::exp(-alpha * tau - static_cast<double>(n) * page.log_signal_factor());
  const double decay_over_gamma = decay / gamma;
  // Terms with y_i <= 0 vanish: i <= n + ⌊τ/β⌋.
  const double last = static_cast<double>(n) + std::floor(tau / beta);
  const int64_t limit =
      max_terms > 0 ? static_cast<int64_t>(max_terms) - 1 : std::numeric_limits<int64_t>::max();
  double sum = 0.0;
  double psi_part = 0.0;  // e^{−αι} ψ(ι) so far
  int64_t terms = 0;
  double q_pow = 1.0 / c;  // q^i / c
  ExpAlongLine exp_all(c * beta), exp_signals(gamma * beta);
  for (int64_t i = 0; i <= limit && static_cast<double>(i) <= last; ++i) {
    const double y = tau + static_cast<double>(n - i) * beta;
    if (y <= 0.0) break;
    const double x_all = c * y;
    const double x_signals = gamma * y;
    // Each residual only needs the absolute accuracy that keeps its weighted
    // contribution below kResidualTolerance of the partial sum.
    const double allowed = kResidualTolerance * sum;
    double r_all, r_signals;
    ResidualsGivenExp(i, {x_all, exp_all.Next(x_all), q_pow},
                      {x_signals, exp_signals.Next(x_signals), decay_over_gamma}, allowed, &r_all,
                      &r_signals);
    const double a = q_pow * r_all;
    if (max_terms == 0 && a * tail_factor <= kValueTruncationTolerance * sum) {
      break;
    }
    const double signalled = decay_over_gamma * r_signals;
    sum += a - signalled;
    psi_part += signalled;
    q_pow *= q;
    ++terms;
  }
  const double mu = page.importance();
  const double error =
      (kValueTruncationTolerance + kResidualTolerance * static_cast<double>(terms + 1)) * sum;
  return {mu * sum, mu * alpha * (psi_part * (1.0 + kSlopeSlack) + error), mu * alpha * decay};
}

}  // namespace

double ValueCeiling(const PageModel& page) {
  if (page.change_rate() <= 0.0) return 0.0;
  return page.importance() / page.change_rate();
}

ValueGrowth NcisValueGrowth(const PageModel& page, double tau_elap, int64_t n_cis, int max_terms) {
  const double delta = page.change_rate();
  const double mu = page.importance();
  if (delta <= 0.0 || mu <= 0.0) return {0.0, 0.0, 0.0};
  if (std::isinf(tau_elap)) return {ValueCeiling(page), 0.0, 0.0};
  if (!page.signals_informative()) {
    // GREEDY: V = (μ̃/Δ) R^1(Δτ); α = Δ and ψ(τ) = τ (no signals), so
    // dV/dτ = μ̃ Δ τ e^{−Δτ}.
    const double decay = std::exp(-delta * tau_elap);
    return {mu / delta * Residual(1, delta * tau_elap),
            mu * delta * tau_elap * decay * (1.0 + kSlopeSlack), mu * delta * decay};
  }
  if (page.false_rate() <= 0.0) {
    if (n_cis > 0) return {ValueCeiling(page), 0.0, 0.0};
    // λ = 1, ν = 0: fresh until a signal.
    if (page.alpha() <= 0.0) return {0.0, 0.0, 0.0};
    return NoiselessValue(page, tau_elap);
  }
  if (page.alpha() <= 0.0) return {SignalOnlyValue(page, n_cis), 0.0, 0.0};
  return NoisySignalValue(page, tau_elap, n_cis, max_terms);
}

double NcisValue(const PageModel& page, double tau_elap, int64_t n_cis, int max_terms) {
  return NcisValueGrowth(page, tau_elap, n_cis, max_terms).value;
}

double CrawlValue(const CrawlPolicy& policy, const PageModel& page, double tau_elap,
                  int64_t n_cis) {
  return NcisValue(policy.Belief(page), tau_elap, n_cis, policy.MaxTerms());
}

}  // namespace policy
}  // namespace recrawl
