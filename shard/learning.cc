#include "shard/learning.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "policy/estimators.h"

namespace recrawl {
namespace shard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLog2 = 0.69314718055994530942;  // ln 2

// A weighted crawl in the likelihood: `weight` crawls at x = (τ, n).
struct Point {
  double weight;
  double tau;
  double n;
};

// What the prior stands for, derived from (Δ₀, λ₀, ν₀).
struct PriorData {
  double alpha = 0.0;              // α₀ used for the pseudo-crawls (0: none)
  double log_signal_factor = 0.0;  // α₀β₀, capped
  double signal_rate = 0.0;        // γ₀
  // The prior's time scale 1/max(Δ₀, γ₀); +∞ for a prior of all zeros.
  double time_scale = kInf;
};

PriorData DerivePrior(const LearningState& s, double max_log_signal_factor) {
  const double change_rate = s.prior_change_rate;
  const double recall = s.prior_recall;
  const double false_rate = s.prior_false_rate;
  PriorData p;
  const double signalled = recall * change_rate;  // λ₀Δ₀
  p.signal_rate = signalled + false_rate;
  const double rate = std::max(change_rate, p.signal_rate);
  if (rate > 0.0) p.time_scale = 1.0 / rate;
  // α₀ = (1 − λ₀)Δ₀, but not below 1% of the page's rate: a prior of
  // λ₀ = 1 would otherwise mean unchanged pseudo-crawls of infinite length,
  // which no amount of data could outweigh.
  p.alpha = std::max((1.0 - recall) * change_rate, 0.01 * rate);
  if (signalled <= 0.0) {
    p.log_signal_factor = 0.0;
  } else if (false_rate <= 0.0) {
    p.log_signal_factor = max_log_signal_factor;
  } else {
    p.log_signal_factor = std::min(std::log(p.signal_rate / false_rate), max_log_signal_factor);
  }
  return p;
}

// Crawl intervals shorter than this fraction of the prior's time scale are
// taken at this length in the moments of log τ, which a near-zero interval
// would otherwise dominate. Such an interval carries next to no information
// about α anyway.
constexpr double kMinTauFraction = 1e-6;
constexpr double kMinTauAbsolute = 1e-9;

double TauFloor(const LearningState& s) {
  const double rate = std::max<double>(
      s.prior_change_rate, double{s.prior_recall} * s.prior_change_rate + s.prior_false_rate);
  return rate > 0.0 ? kMinTauFraction / rate : kMinTauAbsolute;
}

// The length of the prior's pseudo-crawls: the mean observed interval, or
// the prior's own time scale before the first crawl.
double PseudoInterval(const LearningState& s, const PriorData& p) {
  if (s.crawls > 0 && s.signal_time > 0.0f) {
    return static_cast<double>(s.signal_time) / s.crawls;
  }
  return p.time_scale;
}

// The likelihood's terms: the linear unchanged part and the changed crawls
// as weighted points, prior pseudo-crawls included.
struct Likelihood {
  double unchanged_tau = 0.0;
  double unchanged_signals = 0.0;
  std::array<Point, 14> points;
  int num_points = 0;

  void AddChanged(double weight, double tau, double n) {
    if (weight > 0.0) points[num_points++] = {weight, tau, n};
  }
};

Likelihood BuildLikelihood(const LearningState& s, const LearningOptions& options) {
  Likelihood l;
  l.unchanged_tau = s.unchanged_tau;
  l.unchanged_signals = s.unchanged_signals;

  // Sigma points of the summaries.
  for (int n = 0; n < 3; ++n) {
    const LearningState::Summary& c = s.changed[n];
    if (!(c.count > 0.0f)) continue;
    const double sd = std::sqrt(std::max<double>(c.m2_u, 0.0) / c.count);
    l.AddChanged(c.count / 2.0, std::exp(c.mean_u - sd), n);
    l.AddChanged(c.count / 2.0, std::exp(c.mean_u + sd), n);
  }
  if (s.many.count > 0.0f) {
    const double c = s.many.count;
    const double a = std::max<double>(s.many.m2_u, 0.0) / c;
    const double b = double{s.many_c_un} / c;
    const double d = std::max<double>(s.many_m2_n, 0.0) / c;
    // Cholesky factor of [[a, b], [b, d]]; √2 spreads 4 points to the
    // covariance (unscented transform, 2·dim points of weight 1/(2·dim)).
    const double l11 = std::sqrt(a);
    const double l21 = l11 > 0.0 ? b / l11 : 0.0;
    const double l22 = std::sqrt(std::max(d - l21 * l21, 0.0));
    const double r = std::sqrt(2.0);
    const double mu = s.many.mean_u;
    const double mn = s.many_mean_n;
    const std::array<std::array<double, 2>, 4> offsets = {
        {{r * l11, r * l21}, {-r * l11, -r * l21}, {0.0, r * l22}, {0.0, -r * l22}}};
    for (const auto& o : offsets) {
      l.AddChanged(c / 4, std::exp(mu + o[0]), std::max(mn + o[1], 0.0));
    }
  }

  // The prior's pseudo-crawls (γ₀'s pseudo-intervals are SignalRate's).
  const double w = options.prior_weight;
  const double half = w / 2;
  if (w > 0.0) {
    const PriorData p = DerivePrior(s, options.max_log_signal_factor);
    const double tau = PseudoInterval(s, p);
    if (p.alpha > 0.0 && std::isfinite(tau)) {
      // w crawls over the typical interval τ̄, changed in the proportion
      // the prior expects, p₀ = 1 − e^{−α₀τ̄}: their MLE is α₀. At the
      // data's own time scale a prior that is orders of magnitude off
      // still weighs as w crawls, not as w intervals of its own scale.
      const double p0 = -std::expm1(-p.alpha * tau);
      l.AddChanged(w * p0, tau, 0.0);
      l.unchanged_tau += w * (1.0 - p0) * tau;
    }
    if (p.signal_rate > 0.0) {
      if (p.log_signal_factor <= 0.0) {
        // Signals carry no information: unchanged signal-only intervals
        // pull αβ towards 0.
        l.unchanged_signals += half;
      } else if (p.log_signal_factor >= options.max_log_signal_factor) {
        l.AddChanged(half, 0.0, 1.0);  // every signal a change
      } else {
        // Signal-only intervals of log 2 / α₀β₀ signals: the MLE is α₀β₀.
        const double n = kLog2 / p.log_signal_factor;
        l.AddChanged(half, 0.0, n);
        l.unchanged_signals += half * n;
      }
    }
  }
  return l;
}

struct Evaluation {
  double value;
  std::array<double, 2> gradient;
  std::array<double, 3> hessian;  // aa, ak, kk
};

// ℓ(θ) = −θ·U + Σ w log(1 − e^{−θ·x}), with
//   ∇ℓ = −U + Σ w x / (e^{θ·x} − 1),
//   ∇²ℓ = −Σ w x xᵀ e^{θ·x} / (e^{θ·x} − 1)².
// −∞ when some θ·x = 0 (a change the model says is impossible).
Evaluation Evaluate(const Likelihood& l, double alpha, double kappa) {
  Evaluation e{-alpha * l.unchanged_tau - kappa * l.unchanged_signals,
               {-l.unchanged_tau, -l.unchanged_signals},
               {0.0, 0.0, 0.0}};
  for (int i = 0; i < l.num_points; ++i) {
    const Point& p = l.points[i];
    const double s = alpha * p.tau + kappa * p.n;
    if (!(s > 0.0)) {
      e.value = -kInf;
      return e;
    }
    const double em1 = std::expm1(s);
    const double f1 = 1.0 / em1;  // f'(s)
    // log(1 − e^{−s}) = log(e^s − 1) − s, and log1p(−1/e^s) where that
    // difference would cancel.
    e.value += p.weight * (s > 1.0 ? std::log1p(-1.0 / (em1 + 1.0)) : std::log(em1) - s);
    e.gradient[0] += p.weight * f1 * p.tau;
    e.gradient[1] += p.weight * f1 * p.n;
    const double f2 = p.weight * f1 * (1.0 + f1);  // −f''(s)·w
    e.hessian[0] -= f2 * p.tau * p.tau;
    e.hessian[1] -= f2 * p.tau * p.n;
    e.hessian[2] -= f2 * p.n * p.n;
  }
  return e;
}

bool Finite(const policy::SignalModelParams& p) {
  return std::isfinite(p.change_rate) && std::isfinite(p.recall) && std::isfinite(p.false_rate);
}

// SignalRate with the prior already derived.
double SignalRateWith(const LearningState& state, const PriorData& prior, double open_signals,
                      double open_time, const LearningOptions& options) {
  // γ̂ from the signal count, with γ₀ over signal_prior_weight
  // pseudo-intervals.
  double signals = double{state.signals} + std::max(open_signals, 0.0);
  double time = double{state.signal_time} + std::max(open_time, 0.0);
  const double pseudo = PseudoInterval(state, prior);
  const double w = options.signal_prior_weight;
  if (w > 0.0 && std::isfinite(pseudo)) {
    signals += w * prior.signal_rate * pseudo;
    time += w * pseudo;
  }
  return time > 0.0 ? signals / time : prior.signal_rate;
}

}  // namespace

void SetPrior(const policy::PageParams& prior, LearningState* state) {
  state->prior_change_rate = static_cast<float>(prior.change_rate);
  state->prior_recall = static_cast<float>(prior.recall);
  state->prior_false_rate = static_cast<float>(prior.false_rate);
}

policy::PageParams Prior(const LearningState& state) {
  policy::PageParams p;
  p.change_rate = state.prior_change_rate;
  p.recall = state.prior_recall;
  p.false_rate = state.prior_false_rate;
  return p;
}

LearningState InitLearning(const policy::PageParams& prior) {
  LearningState s;
  SetPrior(prior, &s);
  return s;
}

bool LearnFromCrawl(double tau, int64_t n_cis, bool changed, double t_delay, LearningState* state) {
  if (!std::isfinite(tau) || tau < 0.0 || n_cis < 0) return false;
  if (changed && tau <= 0.0 && n_cis == 0) return false;
  const double n = static_cast<double>(n_cis);
  LearningState s = *state;
  if (!changed) {
    s.unchanged_tau += static_cast<float>(tau);
    s.unchanged_signals += static_cast<float>(n);
  } else {
    const double u = std::log(std::max(tau, TauFloor(s)));
    LearningState::Summary& c = s.changed[std::min<int64_t>(n_cis, 3)];
    // Welford's update of the mean and Σ (u − ū)²; co-moments use the old
    // deviation of one variable and the new deviation of the other.
    const double count = c.count + 1.0;
    const double du = u - c.mean_u;
    const double mean_u = c.mean_u + du / count;
    c.count = static_cast<float>(count);
    c.m2_u += static_cast<float>(du * (u - mean_u));
    c.mean_u = static_cast<float>(mean_u);
    if (n_cis >= 3) {
      const double dn = n - s.many_mean_n;
      const double mean_n = s.many_mean_n + dn / count;
      s.many_m2_n += static_cast<float>(dn * (n - mean_n));
      s.many_c_un += static_cast<float>(du * (n - mean_n));
      s.many_mean_n = static_cast<float>(mean_n);
    }
  }
  s.signals += static_cast<float>(n);
  s.signal_time += static_cast<float>(std::max(tau - t_delay, 0.0));
  ++s.crawls;
  for (float v : {s.unchanged_tau, s.unchanged_signals, s.signals, s.signal_time, s.changed[0].m2_u,
                  s.changed[1].m2_u, s.changed[2].m2_u, s.many.m2_u, s.many_m2_n, s.many_c_un}) {
    if (!std::isfinite(v)) return false;
  }
  *state = s;
  return true;
}

LearnedModel Fit(const LearningState& state, double importance, const LearningOptions& options) {
  const Likelihood l = BuildLikelihood(state, options);
  const PriorData prior = DerivePrior(state, options.max_log_signal_factor);
  const double lo[2] = {options.min_alpha, 0.0};
  const double hi[2] = {options.max_alpha, options.max_log_signal_factor};
  auto clamp = [&](int i, double v) { return std::min(std::max(v, lo[i]), hi[i]); };

  // Start at the prior, moved off 0 where a point would make ℓ = −∞.
  double theta[2] = {clamp(0, prior.alpha > 0.0 ? prior.alpha : 1e-6),
                     clamp(1, std::max(prior.log_signal_factor, 1e-3))};
  Evaluation e = Evaluate(l, theta[0], theta[1]);
  for (int i = 0; i < 60 && !std::isfinite(e.value); ++i) {
    theta[0] = clamp(0, theta[0] * 4.0);
    theta[1] = clamp(1, theta[1] * 4.0);
    e = Evaluate(l, theta[0], theta[1]);
  }

  LearnedModel model;
  bool converged = std::isfinite(e.value);
  for (int iter = 0; converged && iter < 100; ++iter) {
    // Coordinates held at a bound the gradient pushes against stay there;
    // Newton's step on the others (ℓ is concave).
    bool free[2];
    for (int i = 0; i < 2; ++i) {
      free[i] = !((theta[i] <= lo[i] && e.gradient[i] <= 0.0) ||
                  (theta[i] >= hi[i] && e.gradient[i] >= 0.0));
    }
    const double haa = -e.hessian[0], hak = -e.hessian[1], hkk = -e.hessian[2];
    double d[2] = {0.0, 0.0};
    const double det = haa * hkk - hak * hak;
    if (free[0] && free[1] && det > 1e-12 * haa * hkk && haa > 0.0) {
      d[0] = (hkk * e.gradient[0] - hak * e.gradient[1]) / det;
      d[1] = (haa * e.gradient[1] - hak * e.gradient[0]) / det;
    } else {
      for (int i = 0; i < 2; ++i) {
        const double h = i == 0 ? haa : hkk;
        if (!free[i] || e.gradient[i] == 0.0) continue;
        // Newton along one coordinate; without curvature (no data on it
        // yet) a step of the coordinate's own size.
        d[i] = h > 0.0 ? e.gradient[i] / h : std::copysign(std::max(theta[i], 1.0), e.gradient[i]);
      }
    }
    // Backtracking on the projected path.
    double step = 1.0;
    double next[2];
    Evaluation ne{};
    bool improved = false;
    for (int k = 0; k < 60; ++k, step *= 0.5) {
      next[0] = clamp(0, theta[0] + step * d[0]);
      next[1] = clamp(1, theta[1] + step * d[1]);
      ne = Evaluate(l, next[0], next[1]);
      if (ne.value >= e.value && std::isfinite(ne.value)) {
        improved = true;
        break;
      }
    }
    if (!improved) break;  // at the maximum to rounding
    // A full Newton step this small leaves an error of about its square
    // (ℓ is smooth and concave): ~1e-8, beyond the floats the fit comes
    // from and goes to.
    const bool small = step == 1.0 && std::abs(next[0] - theta[0]) <= 1e-4 * theta[0] &&
                       std::abs(next[1] - theta[1]) <= 1e-4 * (1.0 + theta[1]);
    theta[0] = next[0];
    theta[1] = next[1];
    e = ne;
    if (small) break;
  }

  const double gamma = SignalRateWith(state, prior, 0.0, 0.0, options);

  const policy::SignalModelParams fit = policy::SignalModelParamsFromFit(theta[0], theta[1], gamma);
  model.alpha = theta[0];
  model.log_signal_factor = theta[1];
  model.signal_rate = gamma;
  model.ok = converged && Finite(fit);
  if (!model.ok) {
    model.estimate = Prior(state);
    model.estimate.importance = importance;
    model.params = model.estimate;
    return model;
  }
  model.estimate = {importance, fit.change_rate, fit.recall, fit.false_rate};
  model.params = model.estimate;

  // The optimistic bound (learning.h): the s ∈ (0, 1] where
  // f(s) = ℓ(s·θ̂) − (ℓ(θ̂) − c_n) is 0. ℓ is concave and θ̂ maximises it
  // over a box that holds the ray, so f is concave and increasing on
  // (0, 1]: Newton's steps from a point left of the root stay left of it
  // and rise to it monotonically. The first point is the root of ℓ's
  // quadratic model along the ray, moved left until f < 0.
  const double level = options.optimism / (1.0 + state.crawls);
  if (level > 0.0) {
    const double target = e.value - level;
    double slope = 0.0;  // f'(s) = ∇ℓ(s·θ̂)·θ̂
    auto f = [&](double s) {
      const Evaluation v = Evaluate(l, s * theta[0], s * theta[1]);
      slope = v.gradient[0] * theta[0] + v.gradient[1] * theta[1];
      return v.value - target;
    };
    const double curvature =
        -(e.hessian[0] * theta[0] * theta[0] + 2.0 * e.hessian[1] * theta[0] * theta[1] +
          e.hessian[2] * theta[1] * theta[1]);  // −θ̂ᵀ∇²ℓθ̂
    // The root is not sought below min_optimism_scale.
    const double min_scale = options.min_optimism_scale;
    double s = min_scale;
    double value = f(s);
    if (value < 0.0) {
      s = curvature > 0.0 ? 1.0 - std::sqrt(2.0 * level / curvature) : 0.5;
      if (!(s > min_scale)) s = 0.5 * (1.0 + min_scale);
      value = f(s);
      for (int k = 0; k < 60 && value >= 0.0 && s > min_scale; ++k) {
        value = f(s = std::max(0.5 * s, min_scale));
      }
      for (int k = 0; k < 30 && value < 0.0 && slope > 0.0; ++k) {
        const double next = s - value / slope;
        if (!(next < 1.0) || next - s <= 1e-6 * s) break;
        s = next;
        value = f(s);
      }
    }
    const policy::SignalModelParams optimistic =
        policy::SignalModelParamsFromFit(clamp(0, s * theta[0]), s * theta[1], gamma);
    if (std::isfinite(value) && Finite(optimistic)) {
      model.params = {importance, optimistic.change_rate, optimistic.recall, optimistic.false_rate};
    }
  }
  return model;
}

double SignalRate(const LearningState& state, double open_signals, double open_time,
                  const LearningOptions& options) {
  return SignalRateWith(state, DerivePrior(state, options.max_log_signal_factor), open_signals,
                        open_time, options);
}

policy::PageParams WithSignalRate(const policy::PageParams& model, double signal_rate) {
  const double signalled = model.recall * model.change_rate;  // λΔ
  const double rate = signalled + model.false_rate;           // γ
  if (!(rate > 0.0) || !(signal_rate >= 0.0) || !std::isfinite(signal_rate)) {
    return model;
  }
  // α = (1 − λ)Δ and αβ = log(γ/ν) are kept: λΔ and ν scale with γ.
  const double scale = signal_rate / rate;
  policy::PageParams out = model;
  out.false_rate = model.false_rate * scale;
  out.change_rate = (model.change_rate - signalled) + signalled * scale;
  out.recall = out.change_rate > 0.0 ? signalled * scale / out.change_rate : 0.0;
  return out;
}

policy::PageParams PriorRanking::Ranked(const policy::PageParams& prior) {
  if (!cached_ || prior.change_rate != prior_.change_rate || prior.recall != prior_.recall ||
      prior.false_rate != prior_.false_rate) {
    ++fits_;
    const LearnedModel fit = Fit(InitLearning(prior), 1.0, options_);
    prior_ = prior;
    ranked_ = fit.params;  // the prior itself if the fit failed
    cached_ = true;
  }
  policy::PageParams out = ranked_;
  out.importance = prior.importance;
  return out;
}

bool RerankAfterCrawl(const LearningState& state, int64_t n_cis, const policy::PageParams& current,
                      const policy::PageParams& learnt, double threshold) {
  return state.crawls == 1 || n_cis >= 2 || ChangedMeaningfully(current, learnt, threshold);
}

bool ChangedMeaningfully(const policy::PageParams& current, const policy::PageParams& learnt,
                         double threshold) {
  // Rates are compared on the scale of the page's change rate, so that a
  // false-signal rate far below it does not count as news at every crawl.
  const double floor = 0.05 * std::max(current.change_rate, learnt.change_rate);
  auto relative = [threshold, floor](double a, double b) {
    const double scale = std::max({std::abs(a), std::abs(b), floor});
    return scale > 0.0 && std::abs(a - b) > threshold * scale;
  };
  const double gamma_now = current.recall * current.change_rate + current.false_rate;
  const double gamma_new = learnt.recall * learnt.change_rate + learnt.false_rate;
  return relative(current.change_rate, learnt.change_rate) ||
         relative(current.false_rate, learnt.false_rate) || relative(gamma_now, gamma_new) ||
         std::abs(current.recall - learnt.recall) > threshold;
}

}  // namespace shard
}  // namespace recrawl
