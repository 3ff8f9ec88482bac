#include "shard/probe_queue.h"

#include <cmath>
#include <optional>

namespace recrawl {
namespace shard {
namespace {

// Weight of the newest pick in the pick level's exponential average.
constexpr double kPickLevelWeight = 1.0 / 200;

}  // namespace

void ProbeQueue::ObservePick(double value) {
  if (!std::isfinite(value) || value < 0.0) return;
  pick_level_ = pick_level_ == 0.0 ? value : pick_level_ + kPickLevelWeight * (value - pick_level_);
}

double ProbeQueue::AfterCrawl(uint32_t page, double t, double tau, bool changed,
                              const LearningState& state, const policy::PageParams& ranked) {
  if (options_.probe_crawls <= 0 || !changed || !(pick_level_ > 0.0)) {
    return -1.0;
  }
  if (state.unchanged_tau > 0.0f || state.crawls > static_cast<uint32_t>(options_.probe_crawls)) {
    return -1.0;  // an unchanged crawl already bounds Δ, or enough tries
  }
  if (!(ranked.importance > 0.0)) return -1.0;  // never worth a crawl
  // Ranked at or above Λ eventually: Algorithm 1 crawls it without help.
  if (ranked.change_rate > 0.0 && ranked.importance >= pick_level_ * ranked.change_rate) {
    return -1.0;
  }
  const double threshold = ranked.importance / pick_level_;  // Δ*
  const double delay = options_.probe_delay_scale / threshold;
  // This crawl already saw a change within the probe's interval (it may
  // have been the probe): a probe would only repeat it.
  if (!(tau > delay)) return -1.0;
  const double at = t + delay;
  if (!std::isfinite(at)) return -1.0;
  queue_.push({at, t, page});
  return at;
}

bool ProbeQueue::PopDue(double t, uint32_t* page, double* after) {
  if (!Due(t)) return false;
  *page = queue_.top().page;
  *after = queue_.top().after;
  queue_.pop();
  return true;
}

bool ProbeQueue::TakeDue(double t, CrawlIndex* index, PageId* page) {
  uint32_t due = 0;
  double after = 0.0;
  while (PopDue(t, &due, &after)) {
    const std::optional<PageView> view = index->View(due);
    if (!view.has_value() || view->last_crawl != after) continue;
    if (!index->LeaseAt(due, t)) continue;
    *page = due;
    ++taken_;
    return true;
  }
  return false;
}

}  // namespace shard
}  // namespace recrawl
