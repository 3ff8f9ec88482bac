#include "policy/optimal_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/compensated_sum.h"
#include "policy/residual.h"
#include "policy/root_finding.h"
#include "policy/threshold_policy.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = std::numeric_limits<double>::epsilon();

absl::Status CheckBandwidth(double bandwidth) {
  if (!(bandwidth > 0.0) || std::isinf(bandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bandwidth must be positive and finite, got ", bandwidth));
  }
  return absl::OkStatus();
}

// Validates every page (PageModel::Create's errors, prefixed with the page
// index) and returns the models with importance normalised to μ̃ = μ/Σμ and,
// if `cap_recall`, recall capped at kMaxSolverRecall.
absl::StatusOr<std::vector<PageModel>> NormalizedModels(const std::vector<PageParams>& pages,
                                                        bool cap_recall) {
  CompensatedSum total;
  for (size_t i = 0; i < pages.size(); ++i) {
    absl::StatusOr<PageModel> model = PageModel::Create(pages[i]);
    if (!model.ok()) {
      return absl::Status(model.status().code(),
                          absl::StrCat("page ", i, ": ", model.status().message()));
    }
    total.Add(pages[i].importance);
  }
  const double sum = total.Total();
  if (std::isinf(sum)) {
    return absl::InvalidArgumentError("total importance overflows");
  }
  if (!(sum > 0.0)) {
    return absl::InvalidArgumentError("no page has positive importance (nothing to optimise)");
  }
  std::vector<PageModel> models;
  models.reserve(pages.size());
  for (const PageParams& page : pages) {
    PageParams p = page;
    p.importance /= sum;
    if (cap_recall) p.recall = std::min(p.recall, kMaxSolverRecall);
    models.push_back(*PageModel::Create(p));  // valid: checked above
  }
  return models;
}

// μ̃/Δ for a page that may need crawls, 0 for one that never does (μ̃ = 0 or
// Δ = 0). Rejects a ratio that overflows.
absl::StatusOr<std::vector<double>> ValueCeilings(const std::vector<PageModel>& models) {
  std::vector<double> ceilings(models.size(), 0.0);
  bool any = false;
  for (size_t i = 0; i < models.size(); ++i) {
    const PageModel& page = models[i];
    if (page.importance() <= 0.0 || page.change_rate() <= 0.0) continue;
    ceilings[i] = page.importance() / page.change_rate();
    if (std::isinf(ceilings[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("page ", i, ": change_rate ", page.change_rate(),
                       " is too small for its importance (importance/change_rate "
                       "overflows)"));
    }
    any = true;
  }
  if (!any) {
    return absl::InvalidArgumentError(
        "no page has both positive importance and positive change_rate: "
        "the bandwidth cannot be spent");
  }
  return ceilings;
}

// Periodic crawling without signals: at level Λ < ceiling = μ̃/Δ the KKT
// condition (μ̃/Δ) R^1(Δ ι) = Λ gives Δ ι = x with R^1(x) = Λ/ceiling.
// Returns x = Δ ι = Δ/ξ.
double NoSignalScaledThreshold(double ceiling, double level) {
  // 1 − y = (ceiling − Λ)/ceiling is exact (Sterbenz) when Λ is close to
  // the ceiling, where x depends on it most.
  return InverseResidual1(level / ceiling, (ceiling - level) / ceiling);
}

// Freshness of a page crawled every ι with Δι = x: (1 − e^{−x})/x.
double PeriodicFreshness(double x) {
  if (x <= 0.0) return 1.0;
  if (std::isinf(x)) return 0.0;
  return -std::expm1(-x) / x;
}

double WeightedAccuracy(const std::vector<PageModel>& models,
                        const std::vector<double>& freshness) {
  CompensatedSum sum;
  for (size_t i = 0; i < models.size(); ++i) {
    sum.Add(models[i].importance() * freshness[i]);
  }
  return sum.Total();  // importances are normalised
}

// The validated input every solver starts from: normalised models and their
// value ceilings μ̃/Δ.
struct Problem {
  std::vector<PageModel> models;
  std::vector<double> ceilings;
};

absl::StatusOr<Problem> PrepareProblem(const std::vector<PageParams>& pages, double bandwidth,
                                       bool cap_recall) {
  if (absl::Status s = CheckBandwidth(bandwidth); !s.ok()) return s;
  absl::StatusOr<std::vector<PageModel>> models = NormalizedModels(pages, cap_recall);
  if (!models.ok()) return models.status();
  absl::StatusOr<std::vector<double>> ceilings = ValueCeilings(*models);
  if (!ceilings.ok()) return ceilings.status();
  return Problem{*std::move(models), *std::move(ceilings)};
}

}  // namespace

// ---------------------------------------------------------------------------

absl::StatusOr<LevelSolution> SolveLevelForBudget(const std::vector<double>& ceilings,
                                                  absl::FunctionRef<double(size_t, double)> rate,
                                                  double budget) {
  if (!(budget > 0.0) || std::isinf(budget)) {
    return absl::InvalidArgumentError(
        absl::StrCat("budget must be positive and finite, got ", budget));
  }
  const size_t m = ceilings.size();
  std::vector<size_t> order;  // pages with a positive ceiling, descending
  for (size_t i = 0; i < m; ++i) {
    if (!(ceilings[i] >= 0.0) || std::isinf(ceilings[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("ceiling of page ", i, " must be >= 0 and finite, got ", ceilings[i]));
    }
    if (ceilings[i] > 0.0) order.push_back(i);
  }
  if (order.empty()) {
    return absl::InvalidArgumentError(
        "no page has a positive ceiling: nothing can absorb the budget");
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ceilings[a] > ceilings[b]; });

  // The pages with ceiling > Λ form a prefix of `order`.
  auto active_count = [&](double level) {
    return static_cast<size_t>(std::partition_point(order.begin(), order.end(),
                                                    [&](size_t i) { return ceilings[i] > level; }) -
                               order.begin());
  };
  // The first page whose rate is not a number, with its level: such a rate
  // would make every comparison below false and the bisection loop forever.
  size_t bad_page = m;
  double bad_level = 0.0;
  auto total_rate = [&](double level) {
    CompensatedSum sum;
    const size_t n = active_count(level);
    for (size_t k = 0; k < n; ++k) {
      const double r = rate(order[k], level);
      if (std::isnan(r) && bad_page == m) {
        bad_page = order[k];
        bad_level = level;
      }
      // A compensated sum turns +∞ into NaN (∞ − ∞ in its correction).
      if (std::isinf(r)) return r;
      sum.Add(r);
    }
    return sum.Total();
  };
  auto rates_at = [&](double level) {
    std::vector<double> rates(m, 0.0);
    const size_t n = active_count(level);
    for (size_t k = 0; k < n; ++k) rates[order[k]] = rate(order[k], level);
    return rates;
  };

  // 1. Distinct ceilings, ascending: Σ rate is continuous strictly between
  // two consecutive ones. Find the smallest u_j with Σ rate(u_j) <= budget
  // (Σ rate(u_last) = 0 qualifies); the solution lies in (u_{j−1}, u_j].
  std::vector<double> distinct;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (distinct.empty() || ceilings[*it] != distinct.back()) {
      distinct.push_back(ceilings[*it]);
    }
  }
  size_t lo = 0, hi = distinct.size() - 1;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (total_rate(distinct[mid]) <= budget) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  double upper = distinct[lo];
  double upper_total = total_rate(upper);
  // Below the smallest ceiling, step down geometrically in log Λ.
  double lower;
  double lower_total;
  if (lo > 0) {
    lower = distinct[lo - 1];
    lower_total = total_rate(lower);
  } else {
    double step = 1.0;
    lower = upper * std::exp(-step);
    while ((lower_total = total_rate(lower)) <= budget) {
      step *= 2.0;
      if (step > 1400.0) {
        return absl::InvalidArgumentError(
            "the rates stay below the budget as the level tends to 0");
      }
      upper = lower;
      upper_total = lower_total;
      lower = distinct[0] * std::exp(-step);
      if (!(lower > 0.0)) {
        return absl::InvalidArgumentError(
            "the rates stay below the budget as the level tends to 0");
      }
    }
  }

  auto nan_rate_error = [&] {
    return absl::InternalError(absl::StrCat("the rate of page ", bad_page, " at level ", bad_level,
                                            " is not a number (ceiling ", ceilings[bad_page], ")"));
  };
  if (bad_page != m) return nan_rate_error();
  // Brent's interpolation needs finite totals at both ends: a page whose
  // rate is +∞ at the lower end (its threshold rounds to 0 at tiny levels)
  // would turn the interpolated level into NaN. Bisect on log Λ until the
  // lower end's total is finite; rates fall as Λ rises, so the totals above
  // it are finite too.
  while (std::isinf(lower_total)) {
    const double mid = std::sqrt(lower) * std::sqrt(upper);
    if (!(mid > lower && mid < upper)) {
      return absl::InternalError(
          absl::StrCat("the rates jump from infinite to at most the budget within an ulp "
                       "of level ",
                       upper));
    }
    const double mid_total = total_rate(mid);
    if (mid_total > budget) {
      lower = mid;
      lower_total = mid_total;
    } else {
      upper = mid;
      upper_total = mid_total;
    }
  }
  if (bad_page != m) return nan_rate_error();

  // 2. Brent's method on log Λ in [lower, upper], mapping the ends back to
  // the exact doubles (exp(log u) need not round back to u).
  const double log_lower = std::log(lower);
  const double log_upper = std::log(upper);
  auto level_at = [&](double log_level) {
    if (log_level <= log_lower) return lower;
    if (log_level >= log_upper) return upper;
    return std::clamp(std::exp(log_level), lower, upper);
  };
  double a = lower, a_total = lower_total;  // Σ rate(a) > budget
  double b = upper, b_total = upper_total;  // Σ rate(b) <= budget
  if (b_total < budget) {
    RootOptions options;
    options.abs_tol = 1e-15;
    options.rel_tol = 4 * kEps;
    const double guess = level_at(FindRoot(
        [&](double x) { return total_rate(level_at(x)) - budget; }, log_lower, log_upper, options));
    const double guess_total = total_rate(guess);
    if (bad_page != m) return nan_rate_error();
    // 3. Bracket the guess tightly: step away from it on the side that has
    // not been bracketed yet (relative steps growing 8-fold from 4 ulps),
    // then bisect on the doubles until a and b are adjacent.
    if (guess_total > budget) {
      a = guess;
      a_total = guess_total;
      for (double d = 4 * kEps; d < 1.0; d *= 8.0) {
        const double c = guess * (1.0 + d);
        if (c >= b) break;
        const double c_total = total_rate(c);
        if (c_total <= budget) {
          b = c;
          b_total = c_total;
          break;
        }
        a = c;
        a_total = c_total;
      }
    } else {
      b = guess;
      b_total = guess_total;
      for (double d = 4 * kEps; d < 1.0; d *= 8.0) {
        const double c = guess * (1.0 - d);
        if (c <= a) break;
        const double c_total = total_rate(c);
        if (c_total > budget) {
          a = c;
          a_total = c_total;
          break;
        }
        b = c;
        b_total = c_total;
      }
    }
    while (b_total < budget) {
      const double mid = a + 0.5 * (b - a);
      if (!(mid > a && mid < b)) break;
      const double mid_total = total_rate(mid);
      if (bad_page != m) return nan_rate_error();
      if (mid_total > budget) {
        a = mid;
        a_total = mid_total;
      } else {
        b = mid;
        b_total = mid_total;
      }
    }
  }

  // 4. Interpolate between the rate vectors at a and b.
  LevelSolution solution;
  solution.level = b;
  solution.rates_at_level = rates_at(b);
  if (b_total >= budget) {
    solution.rates = solution.rates_at_level;
    return solution;
  }
  const std::vector<double> rates_a = rates_at(a);
  const double theta = (budget - b_total) / (a_total - b_total);
  solution.rates.resize(m);
  for (size_t i = 0; i < m; ++i) {
    const double rb = solution.rates_at_level[i];
    solution.rates[i] = rb + theta * (rates_a[i] - rb);
  }
  return solution;
}

double InverseResidual1(double y, double one_minus_y) {
  if (!(y > 0.0)) return 0.0;
  if (!(one_minus_y > 0.0)) return kInf;
  if (y <= 0.5) {
    // R^1(x) <= x²/2 puts the root above sqrt(2y); R^1(1.7) > 0.5 puts it
    // below 1.7. Start from the second-order expansion x ≈ sqrt(2y)(1 + x/3)
    // and run Newton, falling back to bisection when a step leaves the
    // bracket.
    double lo = std::sqrt(2.0 * y);
    double hi = 1.7;
    double x = std::min(lo * (1.0 + lo / 3.0), hi);
    for (int it = 0; it < 200; ++it) {
      const double g = Residual(1, x) - y;
      if (g == 0.0) return x;
      if (g < 0.0) {
        lo = x;
      } else {
        hi = x;
      }
      const double step = g / (x * std::exp(-x));
      double next = x - step;
      if (std::fabs(step) <= 2.0 * kEps * x) return next;
      if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
      if (hi - lo <= 2.0 * kEps * x) return next;
      x = next;
    }
    return x;
  }
  // y > 1/2: 1 − y = e^{−x}(1 + x), i.e. h(x) = x − log(1 + x) − c = 0 with
  // c = −log(1 − y). h is increasing and convex on x > 0, and
  // h(2c + 2) >= 0 (as e^{c+2} >= 2c + 3), so Newton from x = 2c + 2 descends
  // monotonically onto the root.
  const double c = -std::log(one_minus_y);
  double x = 2.0 * c + 2.0;
  for (int it = 0; it < 200; ++it) {
    const double h = x - std::log1p(x) - c;
    if (h <= 0.0) return x;
    const double step = h * (1.0 + x) / x;
    x -= step;
    if (step <= 2.0 * kEps * x) return x;
  }
  return x;
}

double PeriodicObjective(double rate, double importance, double change_rate) {
  if (change_rate <= 0.0) return importance;
  if (!(rate > 0.0)) return 0.0;
  return importance * PeriodicFreshness(change_rate / rate);
}

// ---------------------------------------------------------------------------

absl::StatusOr<ContinuousPolicy> SolveNoSignalBaseline(const std::vector<PageParams>& pages,
                                                       double bandwidth) {
  absl::StatusOr<Problem> problem = PrepareProblem(pages, bandwidth, /*cap_recall=*/false);
  if (!problem.ok()) return problem.status();
  const std::vector<PageModel>& models = problem->models;
  const std::vector<double>& ceilings = problem->ceilings;
  const size_t m = pages.size();

  // ξ_i(Λ) = Δ_i / x_i(Λ): → 0 at the ceiling, → ∞ as Λ → 0.
  auto rate = [&](size_t i, double level) {
    return models[i].change_rate() / NoSignalScaledThreshold(ceilings[i], level);
  };
  absl::StatusOr<LevelSolution> solved = SolveLevelForBudget(ceilings, rate, bandwidth);
  if (!solved.ok()) return solved.status();

  ContinuousPolicy policy;
  policy.level = solved->level;
  policy.rates = std::move(solved->rates);
  policy.thresholds.assign(m, kInf);
  policy.signal_crawl_probability.assign(m, 1.0);
  policy.freshness.assign(m, 0.0);
  for (size_t i = 0; i < m; ++i) {
    const PageModel& page = models[i];
    if (page.change_rate() <= 0.0) {
      policy.freshness[i] = 1.0;
    } else if (policy.rates[i] > 0.0) {
      policy.thresholds[i] = 1.0 / policy.rates[i];
      policy.freshness[i] = PeriodicFreshness(page.change_rate() / policy.rates[i]);
    }
  }
  policy.accuracy = WeightedAccuracy(models, policy.freshness);
  return policy;
}

absl::StatusOr<ContinuousPolicy> SolveWithSignals(const std::vector<PageParams>& pages,
                                                  double bandwidth) {
  absl::StatusOr<Problem> problem = PrepareProblem(pages, bandwidth, /*cap_recall=*/true);
  if (!problem.ok()) return problem.status();
  const std::vector<PageModel>& models = problem->models;
  const std::vector<double>& ceilings = problem->ceilings;
  const size_t m = pages.size();

  // With ν = 0 and informative signals every signal triggers a crawl, so f
  // only falls to γ as ι → ∞ (ψ(∞) = 1/γ) before dropping to 0 (never
  // crawl): the rate curve jumps at the ceiling.
  auto noiseless = [](const PageModel& page) {
    return page.signals_informative() && page.false_rate() <= 0.0;
  };
  struct Operating {
    double rate;
    double threshold;
  };
  // Page i's threshold (V_i(ι) = Λ) and frequency 1/ψ_i(ι) at Λ < μ̃_i/Δ_i.
  auto operate = [&](size_t i, double level) -> Operating {
    const PageModel& page = models[i];
    if (!page.signals_informative()) {
      // As in SolveNoSignalBaseline (same arithmetic, so that the two agree).
      const double rate = page.change_rate() / NoSignalScaledThreshold(ceilings[i], level);
      return {rate, 1.0 / rate};
    }
    const double iota = ThresholdForValue(page, level);
    if (std::isinf(iota)) {
      // Only when Λ is so close to the ceiling that ι exceeds
      // ThresholdForValue's search range: the limit ι → ∞.
      return {noiseless(page) ? page.gamma() : 0.0, kInf};
    }
    return {1.0 / ThresholdIntervalStats(page, iota).psi, iota};
  };
  absl::StatusOr<LevelSolution> solved = SolveLevelForBudget(
      ceilings, [&](size_t i, double level) { return operate(i, level).rate; }, bandwidth);
  if (!solved.ok()) return solved.status();

  ContinuousPolicy policy;
  policy.level = solved->level;
  policy.rates = std::move(solved->rates);
  policy.thresholds.assign(m, kInf);
  policy.signal_crawl_probability.assign(m, 1.0);
  policy.freshness.assign(m, 0.0);
  for (size_t i = 0; i < m; ++i) {
    const PageModel& page = models[i];
    const double rate = policy.rates[i];
    if (page.change_rate() <= 0.0) {
      policy.freshness[i] = 1.0;
      continue;
    }
    if (!(rate > 0.0)) continue;
    if (!page.signals_informative()) {
      policy.thresholds[i] = 1.0 / rate;
      policy.freshness[i] = PeriodicFreshness(page.change_rate() / rate);
      continue;
    }
    // The threshold of this rate: the one found for Λ when the rate is
    // rate_i(Λ), else (the rate was interpolated within an ulp of Λ, see
    // SolveLevelForBudget) the inverse of f.
    double iota;
    if (std::fabs(rate - solved->rates_at_level[i]) <= 1e-12 * rate) {
      iota = operate(i, policy.level).threshold;
    } else if (noiseless(page) && rate <= page.gamma()) {
      iota = kInf;
    } else {
      const double interval = 1.0 / rate;
      const double scale = 1.0 / page.change_rate();
      iota = FindRootIncreasing(
          [&](double x) { return ThresholdIntervalStats(page, x).psi - interval; }, 0.0, scale,
          1e13 * scale);
    }
    policy.thresholds[i] = iota;
    if (std::isfinite(iota)) {
      policy.freshness[i] = ThresholdIntervalStats(page, iota).freshness();
    } else if (noiseless(page)) {
      // Crawled on signals only, each followed with probability
      // p = rate/γ: crawls end exactly the stale spells that begin with a
      // followed signal, so the page is fresh a fraction λp = rate/Δ of the
      // time.
      policy.signal_crawl_probability[i] = std::min(1.0, rate / page.gamma());
      policy.freshness[i] = rate / page.change_rate();
    }
    // (ν > 0 with ι beyond the search range: rate and freshness ~ 0.)
  }
  policy.accuracy = WeightedAccuracy(models, policy.freshness);
  return policy;
}

// ---------------------------------------------------------------------------

absl::StatusOr<RandomizedPolicy> SolveAzarRandomized(const std::vector<PageParams>& pages,
                                                     double bandwidth) {
  absl::StatusOr<Problem> problem = PrepareProblem(pages, bandwidth, /*cap_recall=*/false);
  if (!problem.ok()) return problem.status();
  const std::vector<PageModel>& models = problem->models;
  const std::vector<double>& ceilings = problem->ceilings;
  const size_t m = pages.size();

  // Pages that may be crawled, by μ̃/Δ ascending (Algorithm 2, step 1).
  std::vector<size_t> order;
  for (size_t i = 0; i < m; ++i) {
    if (ceilings[i] > 0.0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ceilings[a] < ceilings[b]; });
  const size_t n = order.size();
  std::vector<double> root(n);  // sqrt(μ̃ Δ)
  for (size_t k = 0; k < n; ++k) {
    const PageModel& page = models[order[k]];
    root[k] = std::sqrt(page.importance() * page.change_rate());
  }
  // Algorithm 2 drops a prefix of this order, shrinking r = Σ sqrt(μ̃Δ) and
  // s = ΣΔ as it goes; suffix sums give each r, s without the cancellation of
  // repeated subtraction.
  std::vector<double> r(n + 1, 0.0), s(n + 1, 0.0);
  for (size_t k = n; k-- > 0;) {
    r[k] = r[k + 1] + root[k];
    s[k] = s[k + 1] + models[order[k]].change_rate();
  }
  // Dropped while μ̃/Δ <= Λ_k = (r_k/(R + s_k))² (Eq. [11] on the pages
  // k..n−1); the first kept page keeps all later ones (their ratios are
  // larger and Λ no longer changes). The last page alone is always kept:
  // μ̃Δ/(R + Δ)² < μ̃/Δ.
  size_t first = 0;
  double level = 0.0;
  for (; first < n; ++first) {
    const double scale = r[first] / (bandwidth + s[first]);
    level = scale * scale;
    if (ceilings[order[first]] > level) break;
  }

  RandomizedPolicy policy;
  policy.level = level;
  policy.rates.assign(m, 0.0);
  const double factor = (bandwidth + s[first]) / r[first];
  for (size_t k = first; k < n; ++k) {
    const size_t i = order[k];
    policy.rates[i] = std::max(0.0, root[k] * factor - models[i].change_rate());
  }
  CompensatedSum randomized, periodic;
  for (size_t i = 0; i < m; ++i) {
    const PageModel& page = models[i];
    const double rho = policy.rates[i];
    if (page.change_rate() <= 0.0) {
      randomized.Add(page.importance());
    } else if (rho > 0.0) {
      randomized.Add(page.importance() * rho / (rho + page.change_rate()));
    }
    periodic.Add(PeriodicObjective(rho, page.importance(), page.change_rate()));
  }
  policy.randomized_accuracy = randomized.Total();
  policy.periodic_accuracy = periodic.Total();
  return policy;
}

}  // namespace policy
}  // namespace recrawl
