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
// prior_weight)` pseudo-crawls in the likelihood of α and αβ
// (LearningOptions::prior_weight before the host has been fitted), n_h the
// host outcomes at its last fit, and its signal rate γ_h as
// `signal_prior_weight + min(n_h / outcomes_per_weight,
// max_signal_prior_weight − signal_prior_weight)` pseudo-intervals. Each
// weight grows with the host's evidence and is bounded by its own maximum:
// a page learns γ from every signal, α and αβ only from crawl outcomes.
// Optimism (LearningOptions::optimism): the likelihood's extra pseudo-crawls
// count as outcomes for the optimistic bound, whose level c / (1 + n)
// becomes c / (1 + n + extra): a page of a well-learnt host is explored less
// than one that only has the population prior.
//
// Layout: HostLearningState is a plain struct of floats and integers (108
// bytes: the pooled LearningState, 92, and 16 of the last fit), meant to be
// kept per host id and stored as its bytes or field by field. The functions
// are pure and thread-safe for distinct states; a state needs external
// synchronisation if shared.
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
  // LearningOptions::prior_weight and signal_prior_weight, and the bounds
  // of its weights: in the likelihood of α and αβ, and for γ. A γ bound of
  // 4 rather than 8 gained 0.04–0.05 points at m = 1000 in the simulator
  // and lost nothing at m = 10000; larger likelihood bounds (16–128) lost
  // (docs/results.md, "Host pooling", "Separate weights").
  double outcomes_per_weight = 20.0;
  double max_prior_weight = 8.0;
  double max_signal_prior_weight = 4.0;
};

// InvalidArgument naming the field: min_outcomes or min_refit_interval 0,
// max_refit_interval < min_refit_interval, outcomes_per_weight not > 0,
// max_prior_weight < base.prior_weight or max_signal_prior_weight <
// base.signal_prior_weight (or either not finite).
absl::Status CheckHostLearningOptions(const HostLearningOptions& options,
                                      const LearningOptions& base);

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
// summaries with the population prior, not fitted yet (RefitHostIfDue). The
// same state as pooling each of the page's outcomes in turn, since a
// LearningState's summaries do not depend on its prior.
HostLearningState HostLearningFromPage(const LearningState& page,
                                       const policy::PageParams& population_prior);

// The host prior, with importance 0.
policy::PageParams HostPrior(const HostLearningState& host);

// How many pseudo-crawls the host prior is worth in the likelihood of α
// and αβ (see above).
double HostPriorWeight(const HostLearningState& host, const LearningOptions& options,
                       const HostLearningOptions& host_options);

// How many pseudo-intervals the host prior's γ_h is worth (see above).
double HostSignalPriorWeight(const HostLearningState& host, const LearningOptions& options,
                             const HostLearningOptions& host_options);

// `options` for fitting `page` with the host prior: prior_weight =
// HostPriorWeight, signal_prior_weight = HostSignalPriorWeight, optimism
// scaled so that its level is c / (1 + page.crawls + extra pseudo-crawls
// of the likelihood).
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
