// Low-discrepancy crawl schedules: Azar et al., Algorithm 3 (EDF
// derandomisation). Given crawl rates ρ_k with Σ ρ_k = R, slot j (at time
// j/R, j = 1, 2, ...) crawls one page so that, with p_k = ρ_k/R and N_k(t)
// the number of the first t slots given to page k,
//   |t·p_k − N_k(t)| <= 1   for every k and t.
//
// Page k's n-th crawl (n = N_k + 1) is a unit job released at the first slot
// t with t·p_k > n − 1 and due at slot ⌈n/p_k⌉; each slot runs the released
// job with the earliest deadline (ties: lowest page index). Any interval of
// slots [a, b] holds at most (b − a + 1)·p_k whole windows of page k, so with
// Σ p_k <= 1 EDF meets every deadline, giving N_k(t) >= ⌊t p_k⌋; and it never
// runs a job before its release, giving N_k(t) <= ⌈t p_k⌉.
//
// Each page has at most one job in flight (the next one is created when the
// previous one runs, which EDF would do first anyway: its deadline is
// earlier), kept in one of two heaps: waiting for release (keyed by release
// slot) or released (keyed by deadline). A slot costs O(log n) amortised.
#ifndef RECRAWL_POLICY_LDS_H_
#define RECRAWL_POLICY_LDS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace recrawl {
namespace policy {

// Relative slack allowed between Σ ρ_k and R (rates from a solver sum to R
// only up to rounding).
inline constexpr double kLdsRateSumTolerance = 1e-9;

class LdsScheduler {
 public:
  // Returned by Next() for a slot that no page may take: only when the rates
  // sum to less than R (then the schedule leaves that bandwidth unused).
  static constexpr int kIdle = -1;

  // `rates[k]` = ρ_k >= 0 (crawls per unit time), `bandwidth` = R > 0.
  // InvalidArgument if a rate is negative or not finite, R is not positive
  // and finite, there are more than 2^31 − 1 pages, or Σ ρ_k exceeds R by more
  // than kLdsRateSumTolerance (relative). When Σ ρ_k is within that tolerance
  // of R the schedule is full (no idle slots): p_k = ρ_k / max(R, Σρ), and
  // a slot that rounding left without a released job takes the job released
  // soonest.
  static absl::StatusOr<LdsScheduler> Create(const std::vector<double>& rates, double bandwidth);

  // The page crawled in the next slot (or kIdle); advances slot().
  int Next();

  // Number of slots scheduled so far (t after t calls to Next()).
  int64_t slot() const { return slot_; }
  // Time of slot j: j/R.
  double SlotTime(int64_t j) const { return static_cast<double>(j) / bandwidth_; }
  // N_k(slot()): crawls given to page k so far.
  int64_t crawls(int page) const { return crawls_[page]; }
  // p_k: the share of slots page k is entitled to.
  double share(int page) const { return share_[page]; }
  int num_pages() const { return static_cast<int>(share_.size()); }

 private:
  LdsScheduler(std::vector<double> share, double bandwidth, bool fill);

  // Slot at which page k's next job (its crawls_[k] + 1-th) is released: the
  // first slot t > after with t·p_k > crawls_[k]; INT64_MAX if never.
  int64_t ReleaseSlot(int page, int64_t after) const;
  // ⌈(crawls_[k] + 1)/p_k⌉ as a double (may be huge or +∞).
  double Deadline(int page) const;
  void Schedule(int page, int64_t after);  // queue page's next job

  // Min-heaps as vectors with std::push_heap / pop_heap and std::greater.
  using Waiting = std::pair<int64_t, int>;  // (release slot, page)
  using Ready = std::pair<double, int>;     // (deadline, page)

  std::vector<double> share_;
  std::vector<int64_t> crawls_;
  double bandwidth_;
  bool fill_;  // never idle (Σ ρ ≈ R)
  int64_t slot_ = 0;
  std::vector<Waiting> waiting_;
  std::vector<Ready> ready_;
};

// The first `slots` slots of the LdsScheduler schedule for these rates.
absl::StatusOr<std::vector<int>> LdsSchedule(const std::vector<double>& rates, double bandwidth,
                                             int64_t slots);

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_LDS_H_
