// The adaptive-interval schedules crawlers ship today, driven at the same
// bandwidth as the other policies: each page has a revisit interval I_i that
// is adjusted after every crawl by whether the page had changed, its due time
// is last_crawl_i + I_i, and every slot serves the most overdue page (the
// earliest due time; ties to the lowest page index).
//
//  * Apache Nutch AdaptiveFetchSchedule (shipped defaults
//    db.fetch.schedule.adaptive.inc_rate = 0.4, dec_rate = 0.2):
//      changed:   I ← I·(1 − 0.2)      unchanged: I ← I·(1 + 0.4)
//  * StormCrawler AdaptiveScheduler:
//      changed:   I ← 0.5·I + 0.5·I_min   unchanged: I ← 1.5·I
//
// Both clamp I to [I_min, I_max]. Their shipped bounds are wall-clock (Nutch:
// 1 minute .. 365 days around a 30-day default), meaningless in the model's
// time unit, so we keep the ratios that matter: the initial interval is the
// round-robin period I_0 = m/R (every page equally often, what a crawler
// starts with), I_max = 12·I_0 (Nutch's 365/30), I_min = I_0/100 (Nutch's
// minimum is far below any interval the bandwidth allows; I_0/100 still lets a
// fast-changing page be crawled 100 times as often as the average one).
#ifndef RECRAWL_SIM_ADAPTIVE_SCHEDULERS_H_
#define RECRAWL_SIM_ADAPTIVE_SCHEDULERS_H_

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "sim/scheduler.h"

namespace recrawl {
namespace sim {

struct AdaptiveIntervalRule {
  enum class Kind { kNutch, kStormCrawler };
  Kind kind = Kind::kNutch;
  double initial = 1.0;  // I_0
  double min = 0.01;     // I_min
  double max = 12.0;     // I_max

  // The documented defaults above for m pages at bandwidth R.
  static AdaptiveIntervalRule Defaults(Kind kind, int num_pages, double bandwidth);
  double Update(double interval, bool changed) const;
};

class AdaptiveIntervalScheduler : public Scheduler {
 public:
  AdaptiveIntervalScheduler(int num_pages, AdaptiveIntervalRule rule);
  int Next(double t) override;
  void OnCrawl(int page, double t, bool changed) override;
  double interval(int page) const { return interval_[page]; }

 private:
  using Due = std::pair<double, int>;  // (due time, page)
  AdaptiveIntervalRule rule_;
  std::vector<double> interval_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
};

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_ADAPTIVE_SCHEDULERS_H_
