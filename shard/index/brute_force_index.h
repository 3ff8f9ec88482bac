// CrawlIndex by an O(m) scan per pick: Algorithm 1's argmax as printed. It is
// the oracle the scheduling index is tested against and the baseline of the
// index benchmark, so it favours obviousness over speed.
#ifndef RECRAWL_SHARD_INDEX_BRUTE_FORCE_INDEX_H_
#define RECRAWL_SHARD_INDEX_BRUTE_FORCE_INDEX_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "policy/crawl_policy.h"
#include "policy/page_model.h"
#include "shard/index/crawl_index.h"
#include "shard/index/hosts.h"

namespace recrawl {
namespace shard {

class BruteForceIndex : public CrawlIndex {
 public:
  explicit BruteForceIndex(const policy::CrawlPolicy& policy = policy::CrawlPolicy::GreedyNcis());

  void Upsert(PageId page, const policy::PageParams& params, HostId host,
              double last_crawl) override;
  void Remove(PageId page) override;
  bool Contains(PageId page) const override;
  size_t size() const override { return size_; }
  void RecordSignals(PageId page, double t, int64_t count) override;
  void RecordCrawl(PageId page, double t) override;
  void Lease(PageId page) override;
  bool LeaseAt(PageId page, double t) override;
  void ReleaseLease(PageId page) override;
  void SetHostDelay(HostId host, double min_delay) override;
  void BlockHost(HostId host, double until) override;
  std::vector<PickedPage> PickTop(double t, int k) override;
  // The loop the interface describes, literally: the reference for
  // SchedulingIndex::PickSlots.
  std::vector<SlotPick> PickSlots(const std::vector<double>& slot_times) override;
  double Value(PageId page, double t) const override;
  std::optional<PageView> View(PageId page) const override;
  void SetPolicy(const policy::CrawlPolicy& policy) override;
  const policy::CrawlPolicy& policy() const override { return policy_; }

  // Bytes held by the index (page and host tables), for the benchmark.
  size_t MemoryBytes() const;

 private:
  struct Page {
    bool present = false;
    bool leased = false;
    HostId host = 0;
    int64_t n_cis = 0;
    double last_crawl = 0.0;
    policy::PageModel model;   // as given
    policy::PageModel belief;  // policy_.Belief(model), precomputed
  };

  policy::CrawlPolicy policy_;
  std::vector<Page> pages_;
  size_t size_ = 0;
  HostTable hosts_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_BRUTE_FORCE_INDEX_H_
