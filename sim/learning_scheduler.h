// Algorithm 1 with beliefs learnt online, as a shard learns them
// (docs/design.md, "Learning"; main paper App. E): GREEDY-NCIS (or any
// policy of crawl_policy.h) over a ValueScheduler whose per-page model
// starts at a prior and is replaced after each crawl outcome by the shard's
// own fit (shard/learning.h). The main paper's experiments give the policies the
// true (Δ, λ, ν) ("we assume that these parameters are known to the
// policies", App. E); this is what a crawler that must estimate them gets.
//
// Per crawl the scheduler does what Shard::RecordSuccess does: it feeds
// (τ_elap, n_cis, changed) to LearnFromCrawl, fits (Δ, λ, ν) by App. E's
// maximum likelihood with the prior's pseudo-crawls (Fit), and upserts the
// page into the index with the model Fit ranks by (the fit, made
// optimistic while the page has few outcomes: LearningOptions::optimism)
// when it moved by more than the shard's push threshold
// (ChangedMeaningfully). A page not yet crawled ranks by its prior made
// optimistic (shard::PriorRanking), and at the 2nd, 4th, 8th, ... signal
// since a crawl a page's signal rate is re-estimated with the open interval
// counted (shard::SignalRate, WithSignalRate), as in the shard. Like the
// shard, it hides
// signals of precision below min_signal_precision from the index. The
// importance μ is taken as known: App. E estimates it from request logs
// "with good accuracy", and learning it is not what is tested here.
//
// With host pooling (LearningSchedulerOptions::host_pooling) every crawl
// outcome is also pooled into its page's host (shard/host_learning.h), and a
// page is fitted with its host's pooled fit as its prior (shard::FitPage).
// When a host's fit is recomputed, every page of the host is refitted with
// the new prior and re-ranked if its model moved by more than the push
// threshold: pages not crawled yet start from what their host has shown.
#ifndef RECRAWL_SIM_LEARNING_SCHEDULER_H_
#define RECRAWL_SIM_LEARNING_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "shard/host_learning.h"
#include "shard/learning.h"
#include "shard/probe_queue.h"
#include "sim/scheduler.h"
#include "sim/value_scheduler.h"

namespace recrawl {
namespace sim {

struct LearningSchedulerOptions {
  // The crawl value the learnt model is ranked by.
  policy::CrawlPolicy policy = policy::CrawlPolicy::GreedyNcis();
  // False: rank by the prior for ever (the reference that learning must
  // improve on).
  bool learn = true;
  // The shard's defaults (shard/shard.h, ShardOptions): its learning
  // options, push_threshold and min_signal_precision. Copied, not included:
  // the simulator must not depend on the shard core (RocksDB, protobuf).
  shard::LearningOptions learning;
  double push_threshold = 0.02;
  double min_signal_precision = 0.01;
  ValueSchedulerOptions::Argmax argmax = ValueSchedulerOptions::Argmax::kLazyBound;
  int target_candidates = 0;  // ValueSchedulerOptions::target_candidates
  // Pool outcomes per host (Create's `hosts`) into each page's prior.
  bool host_pooling = false;
  shard::HostLearningOptions host;
};

class LearningScheduler : public Scheduler {
 public:
  // `priors[i]`: page i's importance μ (raw; normalised here as the other
  // value policies do) and the prior (Δ₀, λ₀, ν₀) its learning starts from.
  // `hosts[i]`: page i's host id (>= 0), required (one per page) with
  // options.host_pooling and ignored without; a host's pooled learning
  // starts from the prior of its first page.
  static absl::StatusOr<std::unique_ptr<LearningScheduler>> Create(
      const std::vector<policy::PageParams>& priors, const LearningSchedulerOptions& options,
      const std::vector<int32_t>& hosts = {});

  void OnSignal(int page, double t) override;
  int Next(double t) override;
  void OnCrawl(int page, double t, bool changed) override;

  // The model page i is currently ranked by (normalised importance; before
  // the min_signal_precision view).
  const policy::PageParams& Model(int page) const { return model_[page]; }
  const shard::LearningState& Learning(int page) const { return learning_[page]; }
  // Index upserts made, and crawl outcomes or fits that were rejected.
  int64_t updates() const { return updates_; }
  // Probe crawls made (shard/probe_queue.h).
  int64_t probes() const { return static_cast<int64_t>(probes_.taken()); }
  int64_t rejected() const { return rejected_; }
  // Host fits made (host pooling).
  int64_t host_refits() const { return host_refits_; }
  const shard::HostLearningState& Host(int host) const { return host_[host]; }

 private:
  LearningScheduler(std::unique_ptr<ValueScheduler> values, std::vector<policy::PageParams> model,
                    std::vector<shard::LearningState> learning,
                    const LearningSchedulerOptions& options);

  // The page's fit: with its host's prior under host pooling.
  shard::LearnedModel FitModel(int page);
  // The learning options the page's signal rate is estimated with.
  shard::LearningOptions PageOptions(int page) const;
  // After host h's prior was refitted: refits its pages, re-ranking those
  // whose model moved meaningfully.
  void RerankHost(int host, int except_page);

  std::unique_ptr<ValueScheduler> values_;
  std::vector<policy::PageParams> model_;
  std::vector<shard::LearningState> learning_;
  std::vector<double> last_crawl_;
  std::vector<int64_t> n_cis_;  // signals since the last crawl
  LearningSchedulerOptions options_;
  shard::ProbeQueue probes_;
  int64_t updates_ = 0;
  int64_t rejected_ = 0;
  // Host pooling: page i's host, the hosts' states and their pages.
  std::vector<int32_t> host_of_;
  std::vector<shard::HostLearningState> host_;
  std::vector<std::vector<int32_t>> host_pages_;
  int64_t host_refits_ = 0;
};

// What the index is given for a model: signals of precision λΔ/(λΔ + ν)
// below `min_precision` are dropped (recall and false rate 0), as the shard
// does (Shard::IndexView): such a signal is worth almost no elapsed time,
// and the exact NCIS value costs time linear in ν/Δ.
policy::PageParams IndexView(const policy::PageParams& model, double min_precision);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_LEARNING_SCHEDULER_H_
