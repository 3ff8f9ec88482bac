// Exploration crawls at short intervals ("probes"), which the crawl value
// never asks for but learning needs.
//
// A crawl long after a page's last one finds a change whatever its change
// rate Δ is (e^{−Δτ} is small for large τ), so it says little about Δ. Only
// a crawl soon after the last one can show that a page rarely changes, and
// Algorithm 1 never crawls a page that soon: its value is low then. A page
// whose first crawls all found a change therefore keeps a Δ̂ near the
// prior's or above, and once its ceiling μ/Δ̂ is below the pick level Λ it
// is never crawled again, even when it changes rarely and the policy given
// its true Δ would crawl it often (docs/results.md, "Learning": at m = 10000
// such pages were a good part of what learning lost).
//
// So after a crawl that found a change, of a page with no unchanged crawl
// yet and at most `LearningOptions::probe_crawls` outcomes, whose ranked
// model's ceiling is below Λ, the page is crawled once more after
//   τ_p = probe_delay_scale / Δ*,   Δ* = μ/Λ,
// Δ* being the change rate at which its ceiling would reach Λ. At τ_p a
// page with Δ = Δ*/3 is unchanged with probability 0.72 and one with
// Δ = 3Δ* with probability 0.05: the outcome tells whether the page is worth
// crawling, which the long intervals could not. A crawl that saw the change
// within τ_p already answered that (the probe's own crawl among them), so
// it schedules none: where the prior is right, a page well below Λ is
// probed about once, not after each of its first crawls (the main job,
// whose priors are the true parameters, lost 1.7 points of freshness to
// probes without this rule and 0.7 with it).
//
// Λ is estimated by the pick level, an exponential average of the picks'
// values over about 200 picks, which both the shard and the simulator see.
// Probes live in memory only: a restarted shard has none pending, and the
// next changed crawl of such a page schedules its probe again.
#ifndef RECRAWL_SHARD_PROBE_QUEUE_H_
#define RECRAWL_SHARD_PROBE_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

#include "policy/page_model.h"
#include "shard/index/crawl_index.h"
#include "shard/learning.h"

namespace recrawl {
namespace shard {

class ProbeQueue {
 public:
  explicit ProbeQueue(const LearningOptions& options) : options_(options) {}

  // The value of a page the argmax picked.
  void ObservePick(double value);
  // The pick level, the rule above's estimate of Λ (0 before the first
  // pick).
  double pick_level() const { return pick_level_; }

  // After a crawl at t of `page` was learnt: `state` is its learning state
  // with the outcome in, `ranked` the model it is now ranked by. Schedules
  // its probe when the rule above asks for one. Returns the probe's time,
  // or a negative value when there is none.
  // `tau` is the time since the crawl before: a change seen over an interval
  // no longer than the probe's says what the probe would, so there is none.
  double AfterCrawl(uint32_t page, double t, double tau, bool changed, const LearningState& state,
                    const policy::PageParams& ranked);

  // Whether a probe is due at or before t.
  bool Due(double t) const { return !queue_.empty() && queue_.top().at <= t; }
  // The earliest probe due at or before t, if any, removed from the queue:
  // its page and the time of the crawl that scheduled it. False when none
  // is due.
  bool PopDue(double t, uint32_t* page, double* after);
  // Takes due probes off the queue until `index` leases one's page for a
  // crawl at t (CrawlIndex::LeaseAt) and returns it in `page`. Probes whose
  // page was crawled since the crawl they follow, is gone, is leased or
  // whose host is held are dropped on the way. False when none was leased.
  bool TakeDue(double t, CrawlIndex* index, PageId* page);

  size_t size() const { return queue_.size(); }
  // Probes leased by TakeDue so far.
  uint64_t taken() const { return taken_; }

 private:
  struct Probe {
    double at;
    double after;  // the crawl it follows
    uint32_t page;
  };
  struct Later {
    bool operator()(const Probe& a, const Probe& b) const {
      return a.at > b.at || (a.at == b.at && a.page > b.page);
    }
  };

  const LearningOptions options_;
  double pick_level_ = 0.0;
  uint64_t taken_ = 0;
  std::priority_queue<Probe, std::vector<Probe>, Later> queue_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_PROBE_QUEUE_H_
