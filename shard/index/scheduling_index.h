// The fast CrawlIndex: Algorithm 1's argmax without scanning every page.
//
// Why it works (main paper Lemma 1, Sec. 5.2): V_i grows with τ_eff, so page
// i's value crosses a level Λ at the due time
//   d_i(Λ) = last_crawl_i + ι_i(Λ) − β_i n_i,
// and while some eligible page has V ≥ Λ only pages past their due time can
// be the argmax. The index keeps
//   * a level Λ (level()), raised as candidates pile up and lowered by a
//     rebuild when no candidate is left (the running estimate of the values
//     picked, Sec. 5.2);
//   * a min-heap of the other pages keyed by a LOWER BOUND on d_i(Λ). The
//     bound is learnt lazily: a page that wakes with V < Λ moves its bound
//     ahead by (Λ − V)/M, M an upper bound on dV/dτ_eff (see SlopeBound), and
//     keeps it across crawl cycles, so in steady state a page wakes about
//     once per crawl. A signal moves the key earlier by β (O(log m)); a
//     crawl re-keys at t + ι_lb without evaluating V;
//   * the candidates (V ≥ Λ when they woke) with their last exact value and
//     slope bound; PickTop evaluates exactly only those whose upper bound can
//     still beat the best exact value (App. F's tiers in miniature).
// Keys are lower bounds and every eligible page with V ≥ Λ is a candidate,
// so PickTop returns the same pages as BruteForceIndex (ties broken by id)
// whenever its k-th pick is ≥ Λ; otherwise it lowers Λ by a rebuild.
#ifndef RECRAWL_SHARD_INDEX_SCHEDULING_INDEX_H_
#define RECRAWL_SHARD_INDEX_SCHEDULING_INDEX_H_

#include <cstdint>
#include <vector>

#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "shard/index/crawl_index.h"
#include "shard/index/hosts.h"

namespace recrawl {
namespace shard {

class SchedulingIndex : public CrawlIndex {
 public:
  struct Options {
    // A rebuild sets Λ so that about this many pages are candidates.
    int target_candidates = 32;
    // Above this many candidates Λ is raised back to target_candidates.
    int max_candidates = 256;
  };
  // Work counters, for tests and the benchmark.
  struct Stats {
    uint64_t evaluations = 0;  // exact V evaluations
    uint64_t wakeups = 0;      // heap pops
    uint64_t rebuilds = 0;     // O(m) rebuilds (Λ lowered, policy changed)
    uint64_t raises = 0;       // Λ raised
  };

  explicit SchedulingIndex(
      const policy::CrawlPolicy& policy = policy::CrawlPolicy::GreedyNcis());
  SchedulingIndex(const policy::CrawlPolicy& policy, const Options& options);

  void Upsert(PageId page, const policy::PageParams& params, HostId host,
              double last_crawl) override;
  void Remove(PageId page) override;
  bool Contains(PageId page) const override;
  size_t size() const override { return size_; }
  void RecordSignal(PageId page, double t) override;
  void RecordCrawl(PageId page, double t) override;
  void Lease(PageId page) override;
  void ReleaseLease(PageId page) override;
  void SetHostDelay(HostId host, double min_delay) override;
  void BlockHost(HostId host, double until) override;
  std::vector<PickedPage> PickTop(double t, int k) override;
  double Value(PageId page, double t) const override;
  void SetPolicy(const policy::CrawlPolicy& policy) override;
  const policy::CrawlPolicy& policy() const override { return policy_; }

  double level() const { return level_; }
  const Stats& stats() const { return stats_; }
  // Bytes held by the index's tables (capacity, not size).
  size_t MemoryBytes() const;

 private:
  enum State : uint8_t { kAbsent, kQueued, kCandidate, kLeased };

  // 48 bytes. The model is stored as floats (the index's view of the page;
  // Upsert rounds the parameters) and derived quantities are recomputed on
  // demand, which keeps the index within 64 bytes a page.
  struct Page {
    float importance;
    float change_rate;
    float recall;
    float false_rate;
    double last_crawl;
    // Lower bound on ι(adm_), the τ_eff at which V reaches the admission
    // level (+∞: not before the next signal or crawl).
    float iota_lb;
    uint32_t n_cis;
    HostId host;
    uint32_t pos;  // heap position or candidate slot
    State state;
  };
  struct Candidate {
    PageId page;
    double value;    // exact V at `at` (a lower bound later on)
    double at;       // −∞ after a signal
    double slope;    // bound on dV/dt after `at`; +∞ after a signal
    double ceiling;  // μ/Δ of the belief: V never exceeds it
  };

  policy::PageModel Belief(const Page& p) const;
  double PageValue(const Page& p, const policy::PageModel& belief,
                   double t) const;
  double EffectiveElapsed(const Page& p, const policy::PageModel& b,
                          double t) const;
  double SlopeBound(const Page& p, const policy::PageModel& b, double t) const;
  double KeyOf(const Page& p, const policy::PageModel& b) const;
  void Refine(Page& p, const policy::PageModel& b, double t, double value,
              double slope);

  void Wake(PageId id, double t, std::vector<PageId>* deferred);
  void Drain(double t);
  void AddCandidate(PageId id, double value, double t, double slope,
                    double ceiling);
  void RemoveCandidate(PageId id);
  void Detach(PageId id);  // from heap or candidates
  void Enqueue(PageId id);
  double UpperBound(const Candidate& c, double t) const;
  std::vector<PickedPage> Select(double t, int k);
  void Rebuild(double t, int target);
  void Raise(double t);
  void RekeyAll();

  // Min-heap of (key, page) with positions in Page::pos.
  void HeapPush(PageId id, double key);
  void HeapUpdate(PageId id, double key);
  void HeapErase(PageId id);
  PageId HeapPop();
  void SiftUp(uint32_t i);
  void SiftDown(uint32_t i);
  void HeapSet(uint32_t i, double key, PageId id);

  policy::CrawlPolicy policy_;
  Options options_;
  std::vector<Page> pages_;
  size_t size_ = 0;
  HostTable hosts_;
  std::vector<double> heap_keys_;
  std::vector<PageId> heap_ids_;
  std::vector<Candidate> candidates_;
  double level_ = 0.0;  // Λ: every eligible page with V ≥ Λ is a candidate
  double adm_ = 0.0;    // admission level, slightly below Λ
  bool needs_rebuild_ = true;
  bool needs_rekey_ = false;
  Stats stats_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_SCHEDULING_INDEX_H_
