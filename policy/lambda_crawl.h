// The LambdaCrawl family of Kolobov et al., "Staying up to Date with Online
// Content Changes Using Reinforcement Learning for Scheduling" (Sec. 4):
// optimal crawl rates / probabilities for the harmonic staleness penalty
// under a bandwidth constraint R, for pages with incomplete change
// observations (W^-: changes are only seen by crawling), complete ones (W^o:
// every change is notified), and a mix of both. Plus evaluators of the
// harmonic cost J_h (Eqs. 5, 8, 12) and the binary cost J_b (Eqs. 16, 17).
//
// All functions are pure. Kolobov assumes μ_w > 0 and Δ_w > 0 for every page
// (a page that never changes or is never requested needs no crawl); inputs
// violating that are rejected with InvalidArgument naming the field.
#ifndef RECRAWL_POLICY_LAMBDA_CRAWL_H_
#define RECRAWL_POLICY_LAMBDA_CRAWL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace recrawl {
namespace policy {

// One source w.
struct LambdaCrawlPage {
  double importance = 0.0;   // μ_w > 0
  double change_rate = 0.0;  // Δ_w > 0
  // w ∈ W^o: the tracker is notified of every change (and of nothing else).
  // Only LambdaCrawl() (the mixed problem) reads this flag.
  bool complete_observation = false;
};

// The policy for one page.
struct CrawlAllocation {
  // Which policy class the page was solved in: false → crawled as a Poisson
  // process of rate `rate` (class Π^-); true → crawled with probability
  // `probability` on each change notification (class Π^o).
  bool complete_observation = false;
  // Crawl rate: ρ_w for incomplete pages, p_w Δ_w for complete pages. The
  // rates of all pages sum to the bandwidth used.
  double rate = 0.0;
  // p_w ∈ (0, 1] for complete pages; NaN for incomplete pages (not
  // applicable).
  double probability = 0.0;
};

struct LambdaCrawlSolution {
  std::vector<CrawlAllocation> pages;  // in input order
  // The Lagrange multiplier λ of the bandwidth constraint shared by all
  // pages (Kolobov's λ; not the recall λ of the main paper). At the optimum
  //   incomplete pages:          μ_w Δ_w / (ρ_w (ρ_w + Δ_w)) = λ,
  //   complete pages, p_w < 1:   μ_w / (p_w Δ_w) = λ,
  //   complete pages, p_w = 1:   μ_w / Δ_w >= λ.
  // When every page is complete and R >= ΣΔ (all p_w = 1, bandwidth left
  // over) it is min_w μ_w/Δ_w, the value's left derivative in R. 0 when
  // there are no pages. With SplitSearch::kGoldenSection the two groups'
  // multipliers differ slightly and this is the incomplete group's.
  double multiplier = 0.0;
  // The split of R: bandwidth given to complete-observation pages (R^o) and
  // to incomplete-observation pages (R^- = R − R^o, or 0 if there are none).
  // R^o + R^- < R only when every page is complete and R > ΣΔ.
  double complete_bandwidth = 0.0;
  double incomplete_bandwidth = 0.0;
};

// LambdaCrawl-IncomplObs (Algorithm 1, Problem 1): treats *every* page as an
// incomplete-observation page, whatever its flag (Fig. 2's "LC-IO" does this
// to complete pages), and returns ρ maximising Eq. 6 with Σ ρ_w = R:
// ρ_w(λ) = (−Δ_w + sqrt(Δ_w² + 4 μ_w Δ_w / λ)) / 2 (Eq. 7) with λ found by
// safeguarded root finding so that |Σρ − R| <= 1e-12 R.
absl::StatusOr<LambdaCrawlSolution> LambdaCrawlIncomplObs(absl::Span<const LambdaCrawlPage> pages,
                                                          double bandwidth);

// LambdaCrawl-ComplObs (Algorithm 2, Problem 2): treats every page as a
// complete-observation page and returns p maximising Eq. 9 with
// Σ p_w Δ_w = min(R, ΣΔ), 0 < p_w <= 1. R >= ΣΔ gives every p_w = 1 (more
// crawls than changes cannot help). O(n log n).
absl::StatusOr<LambdaCrawlSolution> LambdaCrawlComplObs(absl::Span<const LambdaCrawlPage> pages,
                                                        double bandwidth);

struct LambdaCrawlOptions {
  enum class SplitSearch {
    // Solve for the common multiplier λ directly:
    //   Σ_{W^-} ρ_w(λ) + Σ_{W^o} min(Δ_w, μ_w/λ) = R
    // by safeguarded root finding, then R^o = Σ_{W^o} min(Δ_w, μ_w/λ).
    // That is the split where the two parts of Eq. 13 have equal marginal
    // value per unit of bandwidth, λ^o(R^o) = λ^-(R − R^o), i.e. the
    // maximiser of Eq. 13 along the split; accurate to ~1e-15 R. Default.
    kMultiplierMatching,
    // Golden-section search on the value of Eq. 13 (Kolobov's Algorithm 3
    // as printed). Comparing values of a smooth maximum in floating point
    // cannot locate it better than ~sqrt(machine epsilon) relative, so this
    // stalls around 1e-8..1e-7 R whatever the tolerance; kept for
    // comparison.
    kGoldenSection,
  };
  SplitSearch split_search = SplitSearch::kMultiplierMatching;
  // Stop kGoldenSection when the bracket on R^o is narrower than this
  // fraction of R.
  double golden_section_tolerance = 1e-13;
};

// LambdaCrawl (Algorithm 3, Problem 3): the mixed problem. Pages with
// complete_observation = true are solved in Π^o, the others in Π^-, under
// one bandwidth R split into R^o ∈ [0, min(R, Σ_{W^o} Δ)] and R − R^o so as
// to maximise Eq. 13.
absl::StatusOr<LambdaCrawlSolution> LambdaCrawl(
    absl::Span<const LambdaCrawlPage> pages, double bandwidth,
    const LambdaCrawlOptions& options = LambdaCrawlOptions());

// Per-page costs per unit of importance (multiply by μ_w and sum over pages
// for the policy cost). They depend only on Δ_w and the allocation.
//
// Harmonic: the time-averaged expected H(N_w(t)):
//   incomplete: −ln(ρ/(Δ + ρ)) = ln(1 + Δ/ρ)   (Eq. 5)
//   complete:   −ln p                         (Eq. 8)
// +∞ when ρ = 0 or p = 0.
double PageHarmonicCost(double change_rate, const CrawlAllocation& allocation);
// Binary: the fraction of time the copy is stale, P(N_w(t) > 0):
//   incomplete: Δ/(Δ + ρ)   (Eq. 16)
//   complete:   1 − p       (Eq. 17)
double PageBinaryCost(double change_rate, const CrawlAllocation& allocation);

// J_h = Σ_w μ_w PageHarmonicCost (Eq. 12: Eq. 5 over the incomplete pages
// plus Eq. 8 over the complete ones, as chosen by each allocation's flag).
// The paper reports J_h / n. InvalidArgument when the sizes differ or a page
// is invalid.
absl::StatusOr<double> HarmonicCost(absl::Span<const LambdaCrawlPage> pages,
                                    absl::Span<const CrawlAllocation> policy);
// J_b = Σ_w μ_w PageBinaryCost (Eqs. 16 + 17).
absl::StatusOr<double> BinaryCost(absl::Span<const LambdaCrawlPage> pages,
                                  absl::Span<const CrawlAllocation> policy);

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_LAMBDA_CRAWL_H_
