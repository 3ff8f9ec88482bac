#include "policy/lds.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace policy {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
// Slots beyond this are treated as never reached (and stay exact in double).
constexpr double kMaxSlot = 9.0e15;

}  // namespace

absl::StatusOr<LdsScheduler> LdsScheduler::Create(const std::vector<double>& rates,
                                                  double bandwidth) {
  if (!(bandwidth > 0.0) || std::isinf(bandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bandwidth must be positive and finite, got ", bandwidth));
  }
  if (rates.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(absl::StrCat("too many pages: ", rates.size()));
  }
  // Σρ in long double: only compared against R, to ~1e-9.
  long double sum = 0.0L;
  for (size_t k = 0; k < rates.size(); ++k) {
    if (!(rates[k] >= 0.0) || std::isinf(rates[k])) {
      return absl::InvalidArgumentError(
          absl::StrCat("rate of page ", k, " must be >= 0 and finite, got ", rates[k]));
    }
    sum += rates[k];
  }
  const double total = static_cast<double>(sum);
  if (total > bandwidth * (1.0 + kLdsRateSumTolerance)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rates sum to ", total, ", more than the bandwidth ", bandwidth));
  }
  const bool fill = total >= bandwidth * (1.0 - kLdsRateSumTolerance);
  const double denominator = std::max(bandwidth, total);
  std::vector<double> share(rates.size());
  for (size_t k = 0; k < rates.size(); ++k) share[k] = rates[k] / denominator;
  return LdsScheduler(std::move(share), bandwidth, fill);
}

LdsScheduler::LdsScheduler(std::vector<double> share, double bandwidth, bool fill)
    : share_(std::move(share)), crawls_(share_.size(), 0), bandwidth_(bandwidth), fill_(fill) {
  // Every page's first job is released at slot 1 (1·p_k > 0).
  for (int k = 0; k < num_pages(); ++k) {
    if (share_[k] > 0.0) ready_.emplace_back(Deadline(k), k);
  }
  std::make_heap(ready_.begin(), ready_.end(), std::greater<Ready>());
}

int64_t LdsScheduler::ReleaseSlot(int page, int64_t after) const {
  const double p = share_[page];
  const double n = static_cast<double>(crawls_[page]);
  // The predicate t·p > n is evaluated exactly as written (one rounded
  // product), so the release is the first slot at which the naive
  // definition holds; floor(n/p) + 1 is only the starting guess.
  const double guess = std::floor(n / p) + 1.0;
  if (!(guess <= kMaxSlot)) return kNever;
  int64_t t = std::max(after + 1, static_cast<int64_t>(guess));
  while (t > after + 1 && static_cast<double>(t - 1) * p > n) --t;
  while (!(static_cast<double>(t) * p > n)) {
    if (static_cast<double>(t) > kMaxSlot) return kNever;
    ++t;
  }
  return t;
}

double LdsScheduler::Deadline(int page) const {
  return std::ceil(static_cast<double>(crawls_[page] + 1) / share_[page]);
}

void LdsScheduler::Schedule(int page, int64_t after) {
  const int64_t release = ReleaseSlot(page, after);
  if (release == kNever) return;
  waiting_.emplace_back(release, page);
  std::push_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
}

int LdsScheduler::Next() {
  const int64_t t = ++slot_;
  // Release every job whose release slot has come.
  while (!waiting_.empty() && waiting_.front().first <= t) {
    std::pop_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
    const int page = waiting_.back().second;
    waiting_.pop_back();
    ready_.emplace_back(Deadline(page), page);
    std::push_heap(ready_.begin(), ready_.end(), std::greater<Ready>());
  }
  int page;
  if (!ready_.empty()) {
    std::pop_heap(ready_.begin(), ready_.end(), std::greater<Ready>());
    page = ready_.back().second;
    ready_.pop_back();
  } else if (fill_ && !waiting_.empty()) {
    // Σ p_k = 1 up to rounding: a slot without a released job can only come
    // from a product t·p_k rounded down onto an integer. Run the job
    // released soonest rather than waste the slot.
    std::pop_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
    page = waiting_.back().second;
    waiting_.pop_back();
  } else {
    return kIdle;
  }
  ++crawls_[page];
  Schedule(page, t);
  return page;
}

absl::StatusOr<std::vector<int>> LdsSchedule(const std::vector<double>& rates, double bandwidth,
                                             int64_t slots) {
  if (slots < 0) {
    return absl::InvalidArgumentError(absl::StrCat("slots must be >= 0, got ", slots));
  }
  absl::StatusOr<LdsScheduler> scheduler = LdsScheduler::Create(rates, bandwidth);
  if (!scheduler.ok()) return scheduler.status();
  std::vector<int> schedule;
  schedule.reserve(static_cast<size_t>(slots));
  for (int64_t j = 0; j < slots; ++j) schedule.push_back(scheduler->Next());
  return schedule;
}

}  // namespace policy
}  // namespace recrawl
