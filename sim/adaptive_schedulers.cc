#include "sim/adaptive_schedulers.h"

#include <algorithm>

namespace recrawl {
namespace sim {

AdaptiveIntervalRule AdaptiveIntervalRule::Defaults(Kind kind, int num_pages, double bandwidth) {
  AdaptiveIntervalRule r;
  r.kind = kind;
  r.initial = num_pages / bandwidth;
  r.min = r.initial / 100;
  r.max = r.initial * 12;
  return r;
}

double AdaptiveIntervalRule::Update(double interval, bool changed) const {
  double next;
  if (kind == Kind::kNutch) {
    next = changed ? interval * (1 - 0.2) : interval * (1 + 0.4);
  } else {
    next = changed ? 0.5 * interval + 0.5 * min : interval * 1.5;
  }
  return std::clamp(next, min, max);
}

AdaptiveIntervalScheduler::AdaptiveIntervalScheduler(int num_pages, AdaptiveIntervalRule rule)
    : rule_(rule), interval_(num_pages, rule.initial) {
  for (int i = 0; i < num_pages; ++i) due_.push({rule.initial, i});
}

int AdaptiveIntervalScheduler::Next(double t) { return due_.empty() ? kIdle : due_.top().second; }

void AdaptiveIntervalScheduler::OnCrawl(int page, double t, bool changed) {
  // Next() returned the top; the simulator crawls exactly that page.
  if (!due_.empty() && due_.top().second == page) due_.pop();
  interval_[page] = rule_.Update(interval_[page], changed);
  due_.push({t + interval_[page], page});
}

}  // namespace sim
}  // namespace recrawl
