#include "policy/lambda_crawl.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/compensated_sum.h"
#include "policy/root_finding.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Algorithm 1 promises Σρ = R to this relative accuracy; checked on return.
constexpr double kBandwidthTolerance = 1e-12;

struct MuDelta {
  double mu;
  double delta;
};

absl::Status ValidateBandwidth(double bandwidth) {
  if (!(bandwidth > 0.0) || std::isinf(bandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bandwidth R must be finite and > 0, got ", bandwidth));
  }
  return absl::OkStatus();
}

absl::Status ValidatePages(absl::Span<const LambdaCrawlPage> pages) {
  for (size_t i = 0; i < pages.size(); ++i) {
    for (auto [field, value] :
         {std::pair<const char*, double>{"importance (mu)", pages[i].importance},
          {"change_rate (Delta)", pages[i].change_rate}}) {
      if (!(value > 0.0) || std::isinf(value)) {
        return absl::InvalidArgumentError(
            absl::StrCat("pages[", i, "].", field,
                         " must be finite and > 0 (LambdaCrawl, like Kolobov et al. "
                         "Sec. 4, assumes mu, Delta > 0: a page that is never requested "
                         "or never changes needs no crawl), got ",
                         value));
      }
    }
  }
  return absl::OkStatus();
}

// ρ_w(λ) of Eq. 7, (−Δ + sqrt(Δ² + 4c))/2 with c = μΔ/λ, rewritten as
// 2c / (Δ + sqrt(Δ² + 4c)) (multiply by the conjugate): the printed form
// cancels catastrophically when 4c << Δ², i.e. for pages that get a crawl
// rate far below their change rate.
double IncompleteRate(double mu, double delta, double lambda) {
  const double c = mu * delta / lambda;
  return 2.0 * c / (delta + std::sqrt(delta * delta + 4.0 * c));
}

// Complete-observation page at multiplier λ: p = min(1, μ/(λΔ)), so the
// crawl rate pΔ is min(Δ, μ/λ).
double CompleteProbability(double mu, double delta, double lambda) {
  // Compare the ratio itself (not μ/(λΔ) against 1) so that the page whose
  // μ/Δ defines λ is clamped exactly.
  const double ratio = mu / delta;
  return ratio >= lambda ? 1.0 : ratio / lambda;
}

// Total crawl rate of both groups at multiplier λ; strictly decreasing in λ
// when `incomplete` is not empty.
double TotalRate(const std::vector<MuDelta>& incomplete, const std::vector<MuDelta>& complete,
                 double lambda) {
  CompensatedSum sum;
  for (const MuDelta& p : incomplete) {
    sum.Add(IncompleteRate(p.mu, p.delta, lambda));
  }
  for (const MuDelta& p : complete) {
    sum.Add(std::min(p.delta, p.mu / lambda));
  }
  return sum.Total();
}

// The λ > 0 at which TotalRate = R. `incomplete` must not be empty (then the
// total rate runs from +∞ at λ → 0 down to 0 at λ → ∞).
//
// Bracket. Lower end: Kolobov's lower_bound_λ of Algorithm 1 computed over
// the incomplete pages alone, at which Σ_{W^-} ρ >= R already (proof of
// Prop. 4); the complete pages only add to the total. Upper end: ρ_w <= μ_w/λ
// (from ρ(ρ + Δ) = μΔ/λ) and min(Δ, μ/λ) <= μ/λ, so the total is <= Σμ/λ
// and λ = Σμ/R gives at most R. (Algorithm 1's upper_bound_λ is valid too
// but looser.) Both ends are then checked numerically and widened if
// rounding put them on the wrong side.
//
// The root is found in u = ln λ: the total behaves like e^{−u/2} … e^{−u},
// so Brent's method converges quickly, and a tolerance on u is a relative
// tolerance on λ, hence (the elasticity of the total is in [1/2, 1]) on Σρ.
double SolveMultiplier(const std::vector<MuDelta>& incomplete, const std::vector<MuDelta>& complete,
                       double bandwidth) {
  const double n = static_cast<double>(incomplete.size());
  double min_mu = kInf, max_mu = 0.0, min_delta = kInf, max_delta = 0.0;
  CompensatedSum total_mu;
  for (const MuDelta& p : incomplete) {
    min_mu = std::min(min_mu, p.mu);
    max_mu = std::max(max_mu, p.mu);
    min_delta = std::min(min_delta, p.delta);
    max_delta = std::max(max_delta, p.delta);
    total_mu.Add(p.mu);
  }
  for (const MuDelta& p : complete) total_mu.Add(p.mu);

  double lo = n * n * min_delta * min_mu / (n * max_delta * bandwidth + bandwidth * bandwidth);
  double hi = total_mu.Total() / bandwidth;
  const double min_lambda = std::numeric_limits<double>::min();
  if (!(lo > min_lambda)) lo = min_lambda;
  for (int i = 0; i < 4000 && lo > min_lambda && TotalRate(incomplete, complete, lo) < bandwidth;
       ++i) {
    lo *= 0.5;
  }
  for (int i = 0; i < 4000 && TotalRate(incomplete, complete, hi) > bandwidth; ++i) {
    hi *= 2.0;
  }
  const auto excess = [&](double u) {
    return TotalRate(incomplete, complete, std::exp(u)) / bandwidth - 1.0;
  };
  RootOptions options;
  options.abs_tol = 1e-16;
  options.rel_tol = 2e-16;
  return std::exp(FindRoot(excess, std::log(lo), std::log(hi), options));
}

// Algorithm 2 without the quadratic worst case. A page is clamped (p = 1)
// exactly when μ_w/Δ_w >= λ, so the clamped set is a prefix of the pages
// sorted by μ/Δ in decreasing order. Scanning that order, the candidate
// multiplier with the first k pages clamped is
//   λ_k = Σ_{i>=k} μ_i / (R − Σ_{i<k} Δ_i)
// (Eq. 10 on the rest), and the answer is the first k whose next page is not
// violated, μ_k/Δ_k < λ_k. Clamping a page whose ratio is at least the
// current λ only lowers λ, so every page clamped on the way satisfies
// μ/Δ >= the final λ: this is the fixed point that Algorithm 2's repeated
// clamping reaches, in O(n log n) instead of O(n²).
class CompleteSolver {
 public:
  explicit CompleteSolver(std::vector<MuDelta> pages) : pages_(std::move(pages)) {
    std::sort(pages_.begin(), pages_.end(),
              [](const MuDelta& a, const MuDelta& b) { return a.mu * b.delta > b.mu * a.delta; });
    const size_t n = pages_.size();
    prefix_delta_.assign(n + 1, 0.0);
    suffix_mu_.assign(n + 1, 0.0);
    for (size_t i = 0; i < n; ++i) {
      prefix_delta_[i + 1] = prefix_delta_[i] + pages_[i].delta;
    }
    for (size_t i = n; i-- > 0;) {
      suffix_mu_[i] = suffix_mu_[i + 1] + pages_[i].mu;
    }
  }

  double total_change_rate() const { return prefix_delta_.back(); }

  // The multiplier for bandwidth R > 0 (min μ/Δ when R >= ΣΔ).
  double Multiplier(double bandwidth) const {
    const size_t n = pages_.size();
    if (n == 0) return 0.0;
    const double min_ratio = pages_[n - 1].mu / pages_[n - 1].delta;
    if (bandwidth >= total_change_rate()) return min_ratio;
    for (size_t k = 0; k < n; ++k) {
      const double remaining = bandwidth - prefix_delta_[k];
      if (!(remaining > 0.0)) break;  // only by rounding
      const double lambda = suffix_mu_[k] / remaining;
      if (pages_[k].mu / pages_[k].delta < lambda) return lambda;
    }
    return min_ratio;
  }

 private:
  std::vector<MuDelta> pages_;
  std::vector<double> prefix_delta_;  // Σ_{i<k} Δ_i
  std::vector<double> suffix_mu_;     // Σ_{i>=k} μ_i
};

CrawlAllocation IncompleteAllocation(const LambdaCrawlPage& page, double lambda) {
  CrawlAllocation a;
  a.complete_observation = false;
  a.rate = IncompleteRate(page.importance, page.change_rate, lambda);
  a.probability = kNaN;
  return a;
}

CrawlAllocation CompleteAllocation(const LambdaCrawlPage& page, double lambda) {
  CrawlAllocation a;
  a.complete_observation = true;
  a.probability = CompleteProbability(page.importance, page.change_rate, lambda);
  a.rate = a.probability * page.change_rate;
  return a;
}

std::vector<MuDelta> ToMuDelta(absl::Span<const LambdaCrawlPage> pages) {
  std::vector<MuDelta> out;
  out.reserve(pages.size());
  for (const LambdaCrawlPage& p : pages) {
    out.push_back({p.importance, p.change_rate});
  }
  return out;
}

// Fills `solution` with every page in the class its flag names, at the
// common multiplier λ, and sums the two groups' bandwidths.
void FillAtMultiplier(absl::Span<const LambdaCrawlPage> pages, double lambda,
                      LambdaCrawlSolution& solution) {
  solution.multiplier = lambda;
  solution.pages.resize(pages.size());
  CompensatedSum complete, incomplete;
  for (size_t i = 0; i < pages.size(); ++i) {
    if (pages[i].complete_observation) {
      solution.pages[i] = CompleteAllocation(pages[i], lambda);
      complete.Add(solution.pages[i].rate);
    } else {
      solution.pages[i] = IncompleteAllocation(pages[i], lambda);
      incomplete.Add(solution.pages[i].rate);
    }
  }
  solution.complete_bandwidth = complete.Total();
  solution.incomplete_bandwidth = incomplete.Total();
}

absl::Status CheckBandwidthUsed(double used, double bandwidth) {
  if (!(std::fabs(used - bandwidth) <= kBandwidthTolerance * bandwidth)) {
    return absl::InternalError(
        absl::StrCat("LambdaCrawl: crawl rates sum to ", used, " instead of R = ", bandwidth));
  }
  return absl::OkStatus();
}

std::vector<LambdaCrawlPage> WithFlag(absl::Span<const LambdaCrawlPage> pages, bool complete) {
  std::vector<LambdaCrawlPage> out(pages.begin(), pages.end());
  for (LambdaCrawlPage& p : out) p.complete_observation = complete;
  return out;
}

// −J̄ of the incomplete group at bandwidth R^- (Eq. 6 negated).
double IncompleteCost(const std::vector<MuDelta>& pages, double bandwidth) {
  if (!(bandwidth > 0.0)) return kInf;
  const double lambda = SolveMultiplier(pages, {}, bandwidth);
  CompensatedSum cost;
  for (const MuDelta& p : pages) {
    cost.Add(p.mu * std::log1p(p.delta / IncompleteRate(p.mu, p.delta, lambda)));
  }
  return cost.Total();
}

// −J̄ of the complete group at bandwidth R^o (Eq. 9 negated).
double CompleteCost(const std::vector<MuDelta>& pages, const CompleteSolver& solver,
                    double bandwidth) {
  if (!(bandwidth > 0.0)) return kInf;
  const double lambda = solver.Multiplier(bandwidth);
  CompensatedSum cost;
  for (const MuDelta& p : pages) {
    cost.Add(-p.mu * std::log(CompleteProbability(p.mu, p.delta, lambda)));
  }
  return cost.Total();
}

}  // namespace

absl::StatusOr<LambdaCrawlSolution> LambdaCrawlIncomplObs(absl::Span<const LambdaCrawlPage> pages,
                                                          double bandwidth) {
  if (absl::Status s = ValidateBandwidth(bandwidth); !s.ok()) return s;
  if (absl::Status s = ValidatePages(pages); !s.ok()) return s;
  LambdaCrawlSolution solution;
  if (pages.empty()) return solution;
  const std::vector<LambdaCrawlPage> incomplete = WithFlag(pages, false);
  FillAtMultiplier(incomplete, SolveMultiplier(ToMuDelta(pages), {}, bandwidth), solution);
  if (absl::Status s = CheckBandwidthUsed(solution.incomplete_bandwidth, bandwidth); !s.ok()) {
    return s;
  }
  return solution;
}

absl::StatusOr<LambdaCrawlSolution> LambdaCrawlComplObs(absl::Span<const LambdaCrawlPage> pages,
                                                        double bandwidth) {
  if (absl::Status s = ValidateBandwidth(bandwidth); !s.ok()) return s;
  if (absl::Status s = ValidatePages(pages); !s.ok()) return s;
  LambdaCrawlSolution solution;
  if (pages.empty()) return solution;
  const CompleteSolver solver(ToMuDelta(pages));
  const std::vector<LambdaCrawlPage> complete = WithFlag(pages, true);
  FillAtMultiplier(complete, solver.Multiplier(bandwidth), solution);
  if (absl::Status s = CheckBandwidthUsed(solution.complete_bandwidth,
                                          std::min(bandwidth, solver.total_change_rate()));
      !s.ok()) {
    return s;
  }
  return solution;
}

absl::StatusOr<LambdaCrawlSolution> LambdaCrawl(absl::Span<const LambdaCrawlPage> pages,
                                                double bandwidth,
                                                const LambdaCrawlOptions& options) {
  if (absl::Status s = ValidateBandwidth(bandwidth); !s.ok()) return s;
  if (absl::Status s = ValidatePages(pages); !s.ok()) return s;
  std::vector<MuDelta> incomplete, complete;
  for (const LambdaCrawlPage& p : pages) {
    (p.complete_observation ? complete : incomplete).push_back({p.importance, p.change_rate});
  }
  if (incomplete.empty()) return LambdaCrawlComplObs(pages, bandwidth);
  if (complete.empty()) return LambdaCrawlIncomplObs(pages, bandwidth);

  LambdaCrawlSolution solution;
  if (options.split_search == LambdaCrawlOptions::SplitSearch::kMultiplierMatching) {
    FillAtMultiplier(pages, SolveMultiplier(incomplete, complete, bandwidth), solution);
  } else {
    // Algorithm 3 as printed: golden-section search for the R^o in
    // [0, min(R, Σ_{W^o} Δ)] that minimises J_h (maximises Eq. 13), each
    // evaluation solving both groups (Algorithms 1 and 2) for its share.
    const CompleteSolver complete_solver(complete);
    const auto cost = [&](double r_complete) {
      return IncompleteCost(incomplete, bandwidth - r_complete) +
             CompleteCost(complete, complete_solver, r_complete);
    };
    const double inv_phi = (std::sqrt(5.0) - 1.0) / 2.0;
    double a = 0.0;
    double b = std::min(bandwidth, complete_solver.total_change_rate());
    double c = b - inv_phi * (b - a);
    double d = a + inv_phi * (b - a);
    double fc = cost(c), fd = cost(d);
    const double tolerance = options.golden_section_tolerance * bandwidth;
    for (int it = 0; it < 400 && b - a > tolerance; ++it) {
      if (fc <= fd) {  // the minimum is in [a, d]
        b = d;
        d = c;
        fd = fc;
        c = b - inv_phi * (b - a);
        fc = cost(c);
      } else {  // in [c, b]
        a = c;
        c = d;
        fc = fd;
        d = a + inv_phi * (b - a);
        fd = cost(d);
      }
    }
    double r_complete = 0.5 * (a + b);
    // The optimum may be the end R^o = Σ_{W^o} Δ (every complete page
    // crawled on each change); the search only approaches it.
    const double saturated = complete_solver.total_change_rate();
    if (saturated < bandwidth && cost(saturated) <= cost(r_complete)) {
      r_complete = saturated;
    }
    const double lambda_incomplete = SolveMultiplier(incomplete, {}, bandwidth - r_complete);
    const double lambda_complete = complete_solver.Multiplier(r_complete);
    solution.multiplier = lambda_incomplete;
    solution.pages.resize(pages.size());
    CompensatedSum sum_complete, sum_incomplete;
    for (size_t i = 0; i < pages.size(); ++i) {
      if (pages[i].complete_observation) {
        solution.pages[i] = CompleteAllocation(pages[i], lambda_complete);
        sum_complete.Add(solution.pages[i].rate);
      } else {
        solution.pages[i] = IncompleteAllocation(pages[i], lambda_incomplete);
        sum_incomplete.Add(solution.pages[i].rate);
      }
    }
    solution.complete_bandwidth = sum_complete.Total();
    solution.incomplete_bandwidth = sum_incomplete.Total();
  }
  if (absl::Status s = CheckBandwidthUsed(
          solution.complete_bandwidth + solution.incomplete_bandwidth, bandwidth);
      !s.ok()) {
    return s;
  }
  return solution;
}

double PageHarmonicCost(double change_rate, const CrawlAllocation& allocation) {
  if (allocation.complete_observation) {
    if (!(allocation.probability > 0.0)) return kInf;
    return -std::log(allocation.probability);
  }
  if (!(allocation.rate > 0.0)) return kInf;
  // −ln(ρ/(Δ + ρ)) = ln(1 + Δ/ρ), accurate when ρ >> Δ.
  return std::log1p(change_rate / allocation.rate);
}

double PageBinaryCost(double change_rate, const CrawlAllocation& allocation) {
  if (allocation.complete_observation) return 1.0 - allocation.probability;
  return change_rate / (change_rate + allocation.rate);
}

namespace {

template <typename PageCost>
absl::StatusOr<double> TotalCost(absl::Span<const LambdaCrawlPage> pages,
                                 absl::Span<const CrawlAllocation> policy, PageCost page_cost) {
  if (pages.size() != policy.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy has ", policy.size(), " allocations for ", pages.size(), " pages"));
  }
  if (absl::Status s = ValidatePages(pages); !s.ok()) return s;
  CompensatedSum sum;
  for (size_t i = 0; i < pages.size(); ++i) {
    sum.Add(pages[i].importance * page_cost(pages[i].change_rate, policy[i]));
  }
  return sum.Total();
}

}  // namespace

absl::StatusOr<double> HarmonicCost(absl::Span<const LambdaCrawlPage> pages,
                                    absl::Span<const CrawlAllocation> policy) {
  return TotalCost(pages, policy, PageHarmonicCost);
}

absl::StatusOr<double> BinaryCost(absl::Span<const LambdaCrawlPage> pages,
                                  absl::Span<const CrawlAllocation> policy) {
  return TotalCost(pages, policy, PageBinaryCost);
}

}  // namespace policy
}  // namespace recrawl
