#include "shard/index/brute_force_index.h"

#include <algorithm>
#include <utility>

#include "policy/crawl_value.h"
#include "shard/index/page_value.h"

namespace recrawl {
namespace shard {

BruteForceIndex::BruteForceIndex(const policy::CrawlPolicy& policy) : policy_(policy) {}

void BruteForceIndex::Upsert(PageId page, const policy::PageParams& params, HostId host,
                             double last_crawl) {
  if (page >= pages_.size()) {
    pages_.resize(static_cast<size_t>(page) + 1,
                  Page{false, false, 0, 0, 0.0, ZeroModel(), ZeroModel()});
  }
  Page& p = pages_[page];
  const policy::PageModel model = policy::PageModel::Create(IndexedParams(params)).value();
  if (!p.present) {
    p.present = true;
    p.leased = false;
    p.n_cis = 0;
    p.last_crawl = last_crawl;
    ++size_;
  }
  p.host = host;
  p.model = model;
  p.belief = policy_.Belief(model);
  hosts_.Get(host);
}

void BruteForceIndex::Remove(PageId page) {
  if (!Contains(page)) return;
  pages_[page].present = false;
  --size_;
}

bool BruteForceIndex::Contains(PageId page) const {
  return page < pages_.size() && pages_[page].present;
}

void BruteForceIndex::RecordSignals(PageId page, double, int64_t count) {
  if (!Contains(page) || count <= 0) return;
  Page& p = pages_[page];
  p.n_cis = std::min(kMaxSignals, p.n_cis + std::min(count, kMaxSignals));
}

void BruteForceIndex::RecordCrawl(PageId page, double t) {
  if (!Contains(page)) return;
  Page& p = pages_[page];
  p.last_crawl = t;
  p.n_cis = 0;
  p.leased = false;
  hosts_.Get(p.host).last_crawl = t;
}

void BruteForceIndex::Lease(PageId page) {
  if (Contains(page)) pages_[page].leased = true;
}

bool BruteForceIndex::LeaseAt(PageId page, double t) {
  if (!Contains(page) || pages_[page].leased || !hosts_.Allowed(pages_[page].host, t)) {
    return false;
  }
  Lease(page);
  hosts_.Hold(pages_[page].host, t);
  return true;
}

void BruteForceIndex::ReleaseLease(PageId page) {
  if (Contains(page)) pages_[page].leased = false;
}

void BruteForceIndex::SetHostDelay(HostId host, double min_delay) {
  hosts_.Get(host).min_delay = min_delay;
}

void BruteForceIndex::BlockHost(HostId host, double until) {
  hosts_.Get(host).blocked_until = until;
}

std::vector<PickedPage> BruteForceIndex::PickTop(double t, int k) {
  std::vector<PickedPage> all;
  for (PageId i = 0; i < pages_.size(); ++i) {
    const Page& p = pages_[i];
    if (!p.present || p.leased || !hosts_.Allowed(p.host, t)) continue;
    all.push_back({i, Value(i, t)});
  }
  std::sort(all.begin(), all.end(), BetterPick);
  std::vector<PickedPage> top;
  std::vector<HostId> used;
  for (const PickedPage& c : all) {
    if (static_cast<int>(top.size()) >= k) break;
    const HostId host = pages_[c.page].host;
    if (hosts_.OnePerPick(host)) {
      if (std::find(used.begin(), used.end(), host) != used.end()) continue;
      used.push_back(host);
    }
    top.push_back(c);
  }
  return top;
}

std::vector<SlotPick> BruteForceIndex::PickSlots(const std::vector<double>& slot_times) {
  std::vector<SlotPick> picks;
  for (size_t slot = 0; slot < slot_times.size(); ++slot) {
    const double t = slot_times[slot];
    const std::vector<PickedPage> top = PickTop(t, 1);
    if (top.empty()) continue;
    const PageId page = top[0].page;
    Lease(page);
    hosts_.Hold(pages_[page].host, t);
    picks.push_back({page, top[0].value, t, slot});
  }
  return picks;
}

std::optional<PageView> BruteForceIndex::View(PageId page) const {
  if (!Contains(page)) return std::nullopt;
  const Page& p = pages_[page];
  PageView view;
  view.params = p.model.params();
  view.host = p.host;
  view.last_crawl = p.last_crawl;
  view.n_cis = p.n_cis;
  view.leased = p.leased;
  return view;
}

double BruteForceIndex::Value(PageId page, double t) const {
  if (!Contains(page)) return 0.0;
  const Page& p = pages_[page];
  return BeliefValue(p.belief, policy_, t - p.last_crawl, p.n_cis);
}

void BruteForceIndex::SetPolicy(const policy::CrawlPolicy& policy) {
  policy_ = policy;
  for (Page& p : pages_) {
    if (p.present) p.belief = policy_.Belief(p.model);
  }
}

size_t BruteForceIndex::MemoryBytes() const {
  return pages_.capacity() * sizeof(Page) + hosts_.MemoryBytes();
}

}  // namespace shard
}  // namespace recrawl
