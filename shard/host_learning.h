// Host pooling for the per-URL learner (shard/learning.h): one
// LearningState per host, fed with every crawl outcome of the host's pages,
// whose fit (Δ_h, λ_h, ν_h) is the prior of the host's pages. A new URL of a
// known host starts from what its host has shown rather than from the
// population prior, and a page with few outcomes leans on it; the prior
// counts as pseudo-crawls (main paper App. E with a prior, docs/design.md,
// "Learning"), so a page's own outcomes outweigh it once it has more of
// them than the prior's bounded weight.
//
// The pooled fit is one (Δ, λ, ν) for all of a host's pages: the maximum of
// the pooled likelihood, a compromise between pages whose parameters differ.
// It is recomputed (one Fit, a few µs) when the host's outcome count reaches
// the next refit point, not after every crawl: after a fit at n outcomes the
// next is at n + clamp(n / 4, min_refit_interval, max_refit_interval), so a
// host of N outcomes costs O(log N + N / max_refit_interval) fits.
//
// Strength of the host prior: the page's fit counts it as
// `prior_weight + min(n_h / outcomes_per_weight, max_prior_weight −
// prior_weight)` pseudo-crawls (LearningOptions::prior_weight before the
// host has been fitted), n_h the host outcomes at its last fit. The weight
// grows with the host's evidence and is bounded by max_prior_weight.
//
// Spread weight (HostLearningOptions::spread_weight): the weight also
// shrinks with how unalike the host's pages are, as a normal–normal
// shrinkage weighs a group mean. Each page with at least
// spread_min_page_outcomes outcomes gives its own estimates of two
// parameters, each with its sampling variance v:
//   - x = log α̂, α = (1 − λ)Δ the rate of the changes no signal announced
//     (what the crawl outcomes measure; it moves with Δ and with λ), fitted
//     from the page's summaries with the pooled state's prior at
//     spread_prior_weight pseudo-crawls and optimism 0; v from that fit's
//     curvature (LearnedModel::log_alpha_variance);
//   - x = log γ̂, γ = λΔ + ν the signal rate, γ̂ = (signals + w₀γ₀τ̄) /
//     (signal time + w₀τ̄) with w₀ = spread_prior_weight and τ̄ the page's
//     mean interval; v = 1 / (signals + w₀γ₀τ̄), a Poisson count's.
// Per parameter, the between-page variance is estimated by DerSimonian and
// Laird's method of moments with w = 1/v: Q = Σ w (x − x̄_w)²,
// τ² = max(0, (Q − (N − 1)) / (Σ w − Σ w² / Σ w)), the observed spread less
// what the pages' sampling noise explains. One outcome's sampling variance
// is c = Σ n / Σ w (n the pages' outcomes), and a prior of between-page
// variance τ² is worth c / τ² outcomes. The spread weight is the smaller
// c / τ² of the two parameters (the one prior weight serves them all), and
// the host prior's weight is that, clamped between
// LearningOptions::prior_weight and the count-based weight above: a host of
// alike pages keeps the count-based weight, one of unalike pages falls to
// the base. A parameter with fewer than spread_min_pages samples, or with
// τ² = 0, does not bound it. The state keeps running sums (HostSpread), and
// a page's sample is replaced at each of its outcomes (UpdateHostSpread),
// so per host it is bounded and per page nothing is kept.
//
// Optimism (LearningOptions::optimism): the host prior's extra pseudo-crawls
// count as outcomes for the optimistic bound, whose level c / (1 + n)
// becomes c / (1 + n + extra): a page of a well-learnt host is explored less
// than one that only has the population prior.
//
// Layout: HostLearningState is a plain struct of floats, doubles and
// integers (208 bytes: the pooled LearningState, 92, 16 of the last fit, 4
// of padding and 96 of the spread's sums), meant to be kept per host id and
// stored as its bytes or field by field. The functions are pure and
// thread-safe for distinct states; a state needs external synchronisation
// if shared.
#ifndef RECRAWL_SHARD_HOST_LEARNING_H_
#define RECRAWL_SHARD_HOST_LEARNING_H_

#include <cstdint>

#include "absl/status/status.h"
#include "policy/page_model.h"
#include "shard/learning.h"

namespace recrawl {
namespace shard {

struct HostLearningOptions {
  // Host outcomes before the host's first fit: until then its pages keep the
  // population prior (the pooled state's own prior).
  uint32_t min_outcomes = 10;
  // Refit schedule (see above).
  uint32_t min_refit_interval = 8;
  uint32_t max_refit_interval = 1024;
  // Host outcomes per pseudo-crawl the host prior gains over
  // LearningOptions::prior_weight, and the bound on its weight.
  double outcomes_per_weight = 20.0;
  double max_prior_weight = 8.0;
  // The spread weight (see above): off, the weight is the count-based one.
  // Off by default: in the simulator's host-structured worlds it loses
  // against the count-based weight (docs/results.md, "Host pooling").
  bool spread_weight = false;
  // A page's outcomes before its own estimate counts in the spread.
  uint32_t spread_min_page_outcomes = 10;
  // Pages with an estimate before the spread bounds the weight.
  uint32_t spread_min_pages = 3;
  // Pseudo-crawls of the pooled prior in a page's own estimate: enough to
  // keep a page whose outcomes all changed (or none did) finite, few enough
  // not to pull the estimates together.
  double spread_prior_weight = 1.0;
};

// InvalidArgument naming the field: min_outcomes or min_refit_interval 0,
// max_refit_interval < min_refit_interval, outcomes_per_weight not > 0 or
// max_prior_weight < base.prior_weight (or not finite), with spread_weight
// spread_min_page_outcomes 0, spread_min_pages < 2 or spread_prior_weight
// not > 0 (or not finite).
absl::Status CheckHostLearningOptions(const HostLearningOptions& options,
                                      const LearningOptions& base);

// Running sums over the pages' samples of one parameter (see above): N,
// Σ w, Σ w x, Σ w x², Σ w², Σ n. Doubles: a page's sample is subtracted and
// added back at each of its outcomes.
struct SpreadSums {
  uint32_t pages = 0;
  double weights = 0.0;
  double weighted_sum = 0.0;
  double weighted_squares = 0.0;
  double squared_weights = 0.0;
  double outcomes = 0.0;
};

struct HostSpread {
  SpreadSums change;  // x = log α̂
  SpreadSums signal;  // x = log γ̂
};

struct HostLearningState {
  // Every crawl outcome of the host's pages, with the population prior.
  LearningState pooled;
  // The host prior (Δ_h, λ_h, ν_h): the pooled fit's estimate at
  // `fitted_outcomes`, or the population prior before the first fit.
  float change_rate = 0.0f;
  float recall = 0.0f;
  float false_rate = 0.0f;
  // pooled.crawls at the last fit (0: not fitted yet).
  uint32_t fitted_outcomes = 0;
  // The pages' own estimates (with HostLearningOptions::spread_weight).
  HostSpread spread;
};

// A host with no outcome: its prior is `population_prior` (importance unused).
HostLearningState InitHostLearning(const policy::PageParams& population_prior);

enum class HostUpdate {
  kRejected,  // input LearnFromCrawl rejects; the state is unchanged
  kLearned,   // outcome pooled; the host prior is unchanged
  kRefitted,  // outcome pooled and the host prior refitted: pages ranked by
              // the old host prior may be re-ranked (FitPage)
};

// Pools one crawl outcome of one of the host's pages (the arguments of
// LearnFromCrawl) and refits the host prior when due (RefitHostIfDue).
HostUpdate LearnHostFromCrawl(double tau, int64_t n_cis, bool changed, double t_delay,
                              const LearningOptions& options,
                              const HostLearningOptions& host_options, HostLearningState* host);

// Refits the host prior if its pooled outcomes have reached the next refit
// point (kRefitted), else kLearned. A failed fit keeps the previous host
// prior (and is retried at the next refit point).
HostUpdate RefitHostIfDue(const LearningOptions& options, const HostLearningOptions& host_options,
                          HostLearningState* host);

// A host whose outcomes so far are those of one page: `page`'s crawl
// summaries with the population prior, not fitted yet (RefitHostIfDue), and
// the page's spread sample. The same state as pooling each of the page's
// outcomes in turn (LearnHostFromCrawl and UpdateHostSpread), since a
// LearningState's summaries do not depend on its prior.
HostLearningState HostLearningFromPage(const LearningState& page,
                                       const policy::PageParams& population_prior,
                                       const LearningOptions& options,
                                       const HostLearningOptions& host_options);

// With spread_weight: replaces a page's spread sample made from `before`
// (its state before an outcome; InitLearning for a page new to the host) by
// the one made from `after` (its state after it; InitLearning for a page
// that leaves the host). Samples depend on the page's summaries and the
// host's pooled prior only, not on the page's own prior, so what is
// subtracted is what was added. Up to two Fits. Without spread_weight,
// nothing.
void UpdateHostSpread(const LearningState& before, const LearningState& after,
                      const LearningOptions& options, const HostLearningOptions& host_options,
                      HostLearningState* host);

// The between-page variance τ² of one parameter and one outcome's sampling
// variance c (see above); false with fewer than `min_pages` samples.
bool SpreadVariances(const SpreadSums& sums, uint32_t min_pages, double* between,
                     double* per_outcome);

// The spread's weight, the smaller c / τ² of log α and log γ; +∞ where
// neither bounds it (too few samples, or τ² = 0).
double HostSpreadWeight(const HostLearningState& host, const HostLearningOptions& host_options);

// The host prior, with importance 0.
policy::PageParams HostPrior(const HostLearningState& host);

// How many pseudo-crawls the host prior is worth (see above): the
// count-based weight, and with spread_weight the spread's c / τ² clamped
// between LearningOptions::prior_weight and it.
double HostPriorWeight(const HostLearningState& host, const LearningOptions& options,
                       const HostLearningOptions& host_options);

// `options` for fitting `page` with the host prior: prior_weight =
// HostPriorWeight, optimism scaled so that its level is
// c / (1 + page.crawls + extra pseudo-crawls).
LearningOptions PageLearningOptions(const LearningState& page, const HostLearningState& host,
                                    const LearningOptions& options,
                                    const HostLearningOptions& host_options);

// Sets `page`'s prior to the host prior (SetPrior: what its crawls taught
// is kept) and fits it with PageLearningOptions. A page not crawled yet
// (InitLearning state) gets the host prior made optimistic, the model it
// ranks by before its first outcome. A few µs.
LearnedModel FitPage(const HostLearningState& host, double importance,
                     const LearningOptions& options, const HostLearningOptions& host_options,
                     LearningState* page);

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_HOST_LEARNING_H_
