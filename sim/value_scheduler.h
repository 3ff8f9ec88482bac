// Algorithm 1 of the main paper: at every slot crawl argmax_i V_i(τ_eff_i(t)),
// with V one of the crawl values of policy/crawl_value.h chosen per page
// (GREEDY, GREEDY-CIS, GREEDY-NCIS, G-NCIS-APPROX-J, and the per-page mix of
// GREEDY-CIS+, Sec. 6.7), and optionally App. C's rule of discarding signals
// that arrive within T_DELAY of the page's last crawl (GREEDY-NCIS-D).
//
// The argmax is exact either way. kBruteForce scans all pages every slot
// (O(m), the test oracle). kLazyBound keeps a level L and the candidate set
// {i : V_i(t) >= L}; every other page sits in a heap keyed by the earliest
// time its value could reach L. That time comes from a bound on the slope:
// between signals V_i grows with τ_elap at rate
//   dV/dι = μ̃ α e^{−αι} ψ(ι) <= μ̃ α ι e^{−αι}
// (differentiate V = μ̃(w − e^{−αι}ψ) with Lemma 3's w' = e^{−αι}ψ'; ψ(ι) <= ι
// as no crawl interval exceeds the threshold). Each truncated term of
// G-NCIS-APPROX-J has derivative μ̃ α e^{−αι} R^i(γ(ι−iβ))/γ >= 0, a part of
// the same sum, so the bound and monotonicity hold there too. Since ι only
// grows, sup_{x>=ι} α x e^{−αx} is 1/e for αι <= 1 and αι e^{−αι} after.
// The candidates hold the argmax whenever they are non-empty; when empty the
// pages are rescanned and L lowered. Within the candidates the same bound
// gives each an upper bound from its last evaluation; candidates are
// evaluated in decreasing order of that bound until the best exact value
// beats every remaining bound (a signal voids its page's bound, as V jumps). This is the simulator's stand-in for
// shard/index (a CrawlIndex can replace it behind the Scheduler interface).
#ifndef RECRAWL_SIM_VALUE_SCHEDULER_H_
#define RECRAWL_SIM_VALUE_SCHEDULER_H_

#include <cstdint>
#include <queue>
#include <vector>

#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "sim/scheduler.h"

namespace recrawl {
namespace sim {

struct ValueSchedulerOptions {
  enum class Argmax { kLazyBound, kBruteForce };
  Argmax argmax = Argmax::kLazyBound;
  // Signals arriving less than this long after the page's last crawl are
  // discarded (App. C; GREEDY-NCIS-D uses 5/R). 0 keeps every signal.
  double discard_window = 0.0;
};

class ValueScheduler : public Scheduler {
 public:
  // `beliefs[i]` is page i as the policy models it, importance normalised
  // (μ̃); `max_terms[i]` the NCIS terms it evaluates (0 = exact). Use
  // ForPolicy to build both from the true pages and one CrawlPolicy.
  ValueScheduler(std::vector<policy::PageModel> beliefs, std::vector<int> max_terms,
                 ValueSchedulerOptions options);

  void OnSignal(int page, double t) override;
  int Next(double t) override;
  void OnCrawl(int page, double t, bool changed) override;

  double Value(int page, double t) const;
  int64_t rescans() const { return rescans_; }

 private:
  struct Due {
    double time;
    int32_t page;
    uint32_t version;
    bool operator>(const Due& o) const { return time > o.time; }
  };
  int NextBruteForce(double t);
  // Puts `page` (valued v at t, not a candidate) in the heap at the earliest
  // time it could reach level_, or makes it a candidate if v >= level_.
  void Place(int page, double t, double v);
  void AddCandidate(int page);
  void RemoveCandidate(int page);
  void Rescan(double t);
  // sup of dV/dτ_elap over the page's future until its next event.
  double SlopeBound(int page, double t) const;

  std::vector<policy::PageModel> beliefs_;
  std::vector<int> max_terms_;
  std::vector<double> ceiling_;  // μ̃/Δ: sup of V
  ValueSchedulerOptions options_;
  std::vector<double> last_crawl_;
  std::vector<int64_t> signals_;
  std::vector<uint32_t> version_;
  std::vector<int32_t> candidate_pos_;  // -1: in the heap
  std::vector<int32_t> candidates_;
  // Per candidate (by page): value at cached_time_ (a lower bound later, V
  // does not fall between crawls) and whether a signal voided its bound.
  std::vector<double> cached_value_;
  std::vector<double> cached_time_;
  std::vector<char> cache_void_;
  std::vector<std::pair<double, int32_t>> bounds_;  // (upper bound, page)
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> heap_;
  double level_ = 0.0;
  bool started_ = false;
  int64_t rescans_ = 0;
  std::vector<double> scratch_;
};

// Normalised beliefs for a discrete policy: page i's importance becomes μ̃_i
// and its model is policy.Belief(page).
std::vector<policy::PageModel> NormalisedBeliefs(const std::vector<policy::PageParams>& pages,
                                                 const policy::CrawlPolicy& policy);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_VALUE_SCHEDULER_H_
