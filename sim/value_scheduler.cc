#include "sim/value_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "policy/crawl_value.h"

namespace recrawl {
namespace sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// After a rescan the level keeps about this many candidates; when more than
// kMaxCandidates accumulate it is raised back to kTargetCandidates.
constexpr size_t kTargetCandidates = 24;
constexpr size_t kMaxCandidates = 96;

}  // namespace

std::vector<policy::PageModel> NormalisedBeliefs(const std::vector<policy::PageParams>& pages,
                                                 const policy::CrawlPolicy& policy) {
  double total = 0;
  for (const auto& p : pages) total += p.importance;
  std::vector<policy::PageModel> out;
  out.reserve(pages.size());
  for (const auto& p : pages) {
    policy::PageParams q = p;
    q.importance = total > 0 ? p.importance / total : 0.0;
    out.push_back(policy.Belief(*policy::PageModel::Create(q)));
  }
  return out;
}

ValueScheduler::ValueScheduler(std::vector<policy::PageModel> beliefs, std::vector<int> max_terms,
                               ValueSchedulerOptions options)
    : beliefs_(std::move(beliefs)), max_terms_(std::move(max_terms)), options_(options) {
  const size_t m = beliefs_.size();
  ceiling_.resize(m);
  for (size_t i = 0; i < m; ++i) ceiling_[i] = policy::ValueCeiling(beliefs_[i]);
  last_crawl_.assign(m, 0.0);
  signals_.assign(m, 0);
  version_.assign(m, 0);
  candidate_pos_.assign(m, -1);
  cached_value_.assign(m, 0.0);
  cached_time_.assign(m, 0.0);
  cache_void_.assign(m, 1);
}

double ValueScheduler::Value(int page, double t) const {
  return policy::NcisValue(beliefs_[page], t - last_crawl_[page], signals_[page],
                           max_terms_[page]);
}

void ValueScheduler::OnSignal(int page, double t) {
  if (!beliefs_[page].signals_informative()) return;  // e.g. GREEDY's belief
  if (t - last_crawl_[page] < options_.discard_window) return;  // App. C
  ++signals_[page];
  cache_void_[page] = 1;
  if (options_.argmax == ValueSchedulerOptions::Argmax::kLazyBound && started_ &&
      candidate_pos_[page] < 0) {
    // Its value jumped: look at it again at the next pick.
    heap_.push({t, page, ++version_[page]});
  }
}

void ValueScheduler::OnCrawl(int page, double t, bool changed) {
  last_crawl_[page] = t;
  signals_[page] = 0;
  if (options_.argmax == ValueSchedulerOptions::Argmax::kBruteForce || !started_) return;
  if (candidate_pos_[page] >= 0) RemoveCandidate(page);
  ++version_[page];
  Place(page, t, 0.0);
}

int ValueScheduler::NextBruteForce(double t) {
  int best = kIdle;
  double best_value = -kInf;
  for (int i = 0; i < static_cast<int>(beliefs_.size()); ++i) {
    const double v = Value(i, t);
    if (v > best_value) {
      best_value = v;
      best = i;
    }
  }
  return best;
}

double ValueScheduler::SlopeBound(int page, double t) const {
  const policy::PageModel& b = beliefs_[page];
  if (b.alpha() <= 0 || b.importance() <= 0) return 0.0;
  const double x = b.alpha() * b.EffectiveElapsed(t - last_crawl_[page], signals_[page]);
  if (!(x < kInf)) return 0.0;  // a noiseless signal: V sits at its ceiling
  return b.importance() * (x <= 1 ? std::exp(-1.0) : x * std::exp(-x));
}

void ValueScheduler::AddCandidate(int page) {
  candidate_pos_[page] = static_cast<int32_t>(candidates_.size());
  candidates_.push_back(page);
}

void ValueScheduler::RemoveCandidate(int page) {
  const int32_t pos = candidate_pos_[page];
  const int32_t last = candidates_.back();
  candidates_[pos] = last;
  candidate_pos_[last] = pos;
  candidates_.pop_back();
  candidate_pos_[page] = -1;
}

void ValueScheduler::Place(int page, double t, double v) {
  cached_value_[page] = v;
  cached_time_[page] = t;
  cache_void_[page] = 0;
  if (v >= level_) {
    AddCandidate(page);
    return;
  }
  if (ceiling_[page] < level_) return;  // cannot reach the level before a rescan
  const double slope = SlopeBound(page, t);
  if (slope <= 0) return;  // V cannot grow before the next signal
  // Slightly early so that rounding in V never makes the bound late.
  const double wait = (level_ - v) / slope * (1 - 1e-9);
  if (!(wait < kInf)) return;
  if (!(t + wait > t)) {
    // Too close to the level to schedule: a candidate below the level does
    // no harm (the argmax is still among the candidates).
    AddCandidate(page);
    return;
  }
  heap_.push({t + wait, page, version_[page]});
}

void ValueScheduler::Rescan(double t) {
  ++rescans_;
  const int m = static_cast<int>(beliefs_.size());
  scratch_.resize(m);
  for (int i = 0; i < m; ++i) scratch_[i] = Value(i, t);
  std::vector<double> sorted = scratch_;
  const size_t k = std::min<size_t>(kTargetCandidates, m) - 1;
  std::nth_element(sorted.begin(), sorted.begin() + k, sorted.end(), std::greater<double>());
  level_ = sorted[k];
  if (level_ <= 0) {
    // Fewer than k pages have positive value: keep the level positive so
    // that pages stuck at zero are not candidates.
    double smallest_positive = kInf;
    for (double v : scratch_) {
      if (v > 0) smallest_positive = std::min(smallest_positive, v);
    }
    level_ = smallest_positive < kInf ? smallest_positive : std::numeric_limits<double>::min();
  }
  candidates_.clear();
  std::fill(candidate_pos_.begin(), candidate_pos_.end(), -1);
  heap_ = decltype(heap_)();
  for (int i = 0; i < m; ++i) {
    ++version_[i];
    Place(i, t, scratch_[i]);
  }
}

int ValueScheduler::Next(double t) {
  if (beliefs_.empty()) return kIdle;
  if (options_.argmax == ValueSchedulerOptions::Argmax::kBruteForce) return NextBruteForce(t);
  started_ = true;
  while (!heap_.empty() && heap_.top().time <= t) {
    const Due d = heap_.top();
    heap_.pop();
    if (d.version != version_[d.page] || candidate_pos_[d.page] >= 0) continue;
    ++version_[d.page];
    Place(d.page, t, Value(d.page, t));
  }
  if (candidates_.empty()) Rescan(t);
  if (candidates_.empty()) return NextBruteForce(t);  // every value is 0
  // Exact argmax over the candidates, evaluating them in decreasing order of
  // their upper bounds; ties go to the lowest page index, as in the scan.
  bounds_.clear();
  for (int32_t page : candidates_) {
    double ub = kInf;
    if (!cache_void_[page]) {
      ub = std::min(ceiling_[page], cached_value_[page] +
                                        SlopeBound(page, cached_time_[page]) *
                                            (t - cached_time_[page]) * (1 + 1e-9));
    }
    bounds_.emplace_back(ub, page);
  }
  std::sort(bounds_.begin(), bounds_.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  int best = -1;
  double best_value = -kInf;
  for (const auto& [ub, page] : bounds_) {
    if (ub < best_value) break;
    const double v = Value(page, t);
    cached_value_[page] = v;
    cached_time_[page] = t;
    cache_void_[page] = 0;
    if (v > best_value || (v == best_value && page < best)) {
      best_value = v;
      best = page;
    }
  }
  if (candidates_.size() > kMaxCandidates) {
    // Raise the level to the kTargetCandidates-th cached value (each a lower
    // bound of the current value) and send the rest back to the heap.
    scratch_.clear();
    for (int32_t page : candidates_) scratch_.push_back(cached_value_[page]);
    std::nth_element(scratch_.begin(), scratch_.begin() + kTargetCandidates - 1, scratch_.end(),
                     std::greater<double>());
    level_ = scratch_[kTargetCandidates - 1];
    std::vector<std::pair<int, double>> demote;
    for (int32_t page : candidates_) {
      if (cached_value_[page] < level_) demote.emplace_back(page, cached_value_[page]);
    }
    for (const auto& [page, v] : demote) {
      RemoveCandidate(page);
      ++version_[page];
      Place(page, cached_time_[page], v);
    }
  }
  return best;
}

}  // namespace sim
}  // namespace recrawl
