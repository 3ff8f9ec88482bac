// Algorithm 1 of the main paper in the simulator: at every slot crawl
// argmax_i V_i(τ_eff_i(t)), with V one of the crawl values of
// policy/crawl_value.h chosen per page (GREEDY, GREEDY-CIS, GREEDY-NCIS,
// G-NCIS-APPROX-J, and the per-page mix of GREEDY-CIS+, Sec. 6.7), and
// optionally App. C's rule of discarding signals that arrive within T_DELAY
// of the page's last crawl (GREEDY-NCIS-D).
//
// The argmax is the shard's own scheduling index (shard/index), so the
// simulator measures the code that serves fetchers; kBruteForce swaps in the
// index's O(m) oracle. Each page is given to the index as the policy's
// belief about it, valued by the exact NCIS formula (which reduces to GREEDY
// and GREEDY-CIS on those beliefs) or by G-NCIS-APPROX-J.
#ifndef RECRAWL_SIM_VALUE_SCHEDULER_H_
#define RECRAWL_SIM_VALUE_SCHEDULER_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "shard/index/crawl_index.h"
#include "sim/scheduler.h"

namespace recrawl {
namespace sim {

struct ValueSchedulerOptions {
  enum class Argmax { kLazyBound, kBruteForce };
  Argmax argmax = Argmax::kLazyBound;
  // Signals arriving less than this long after the page's last crawl are
  // discarded (App. C; GREEDY-NCIS-D uses 5/R). 0 keeps every signal.
  double discard_window = 0.0;
  // The scheduling index's candidate pool target (0: the index's default);
  // see CandidatesForPages.
  int target_candidates = 0;
};

// The scheduling index's candidate pool target for m pages in the papers'
// experiments: √m. The index's default (1,024, sized for a shard's R) holds
// every page at m ≤ 1,000, where each pick then re-bounds far more
// candidates than can win. Measured on fig. 6 GREEDY-NCIS (R = 100, same
// picks at every target): the fastest targets were 8 at m = 100 (3.1× the
// default), 16 to 32 at m = 1,000 (4.4×) and 32 to 128 at m = 10,000 (1.7×);
// at semi's m = 100,000 targets from 256 to 1,024 ran alike.
int CandidatesForPages(size_t num_pages);

// μ̃: importance normalised to sum 1 over `pages`. The argmax does not
// depend on it, but the values the index reports are then the paper's, and
// they are comparable across shards that share one normalisation.
std::vector<policy::PageParams> NormalisedImportance(std::vector<policy::PageParams> pages);

class ValueScheduler : public Scheduler {
 public:
  // `per_page[i]` is the policy page i is valued under; all must agree on
  // the number of NCIS terms (exact or the same J).
  static absl::StatusOr<std::unique_ptr<ValueScheduler>> Create(
      const std::vector<policy::PageParams>& pages,
      const std::vector<policy::CrawlPolicy>& per_page, ValueSchedulerOptions options);

  void OnSignal(int page, double t) override;
  int Next(double t) override;
  void OnCrawl(int page, double t, bool changed) override;

  double Value(int page, double t) const;
  // The value of the page the last Next call returned.
  double last_value() const { return last_value_; }
  // The index, for crawls outside the argmax (ProbeQueue::TakeDue leases
  // probes from it; a lease ends at OnCrawl, as a pick's does).
  shard::CrawlIndex* index() { return index_.get(); }

  // Replaces what the policy believes about `page` (importance as given to
  // Create, i.e. normalised if it was) by an index Upsert, as a shard does
  // when its estimate of a URL moves (learning_scheduler.h). The page keeps
  // its last crawl time and the signals counted since (none were counted
  // while the old belief ignored signals, so call this at a crawl). Fails,
  // changing nothing, for parameters PageModel rejects.
  absl::Status UpdateModel(int page, const policy::PageParams& params);

 private:
  ValueScheduler(std::unique_ptr<shard::CrawlIndex> index,
                 std::vector<policy::CrawlPolicy> per_page, std::vector<char> informative,
                 ValueSchedulerOptions options);

  std::unique_ptr<shard::CrawlIndex> index_;
  std::vector<policy::CrawlPolicy> per_page_;
  std::vector<char> informative_;  // whether the belief uses signals
  std::vector<double> last_crawl_;
  ValueSchedulerOptions options_;
  double last_value_ = 0.0;
};

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_VALUE_SCHEDULER_H_
