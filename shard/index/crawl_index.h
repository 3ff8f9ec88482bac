// The scheduling index: which known URLs have the highest crawl value now.
//
// Algorithm 1 of the main paper crawls argmax_i V_i(τ_eff_i(t)) at every slot
// t = j/R. A shard holds millions of pages, so implementations must answer
// PickTop in sublinear time while pages are upserted, removed, signalled and
// crawled between picks. BruteForceIndex (the O(m) scan) is the test oracle
// and the benchmark baseline; SchedulingIndex is the fast one.
//
// All times are explicit parameters (same unit as the change rates), and
// every call is non-decreasing in time except where stated. No I/O; not
// thread-safe (the shard serialises access).
#ifndef RECRAWL_SHARD_INDEX_CRAWL_INDEX_H_
#define RECRAWL_SHARD_INDEX_CRAWL_INDEX_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "policy/crawl_policy.h"
#include "policy/page_model.h"

namespace recrawl {
namespace shard {

using PageId = uint32_t;
using HostId = uint32_t;

struct PickedPage {
  PageId page;
  double value;  // V_i(τ_eff_i(t)) under the index's policy, raw importance
};

// One slot of PickSlots: the page picked for the slot at `time`, which is
// slot_times[slot] (slots with no eligible page leave gaps in `slot`).
struct SlotPick {
  PageId page;
  double value;  // as PickedPage::value, at `time`
  double time;
  size_t slot;
};

// n_cis saturates here in every implementation (SchedulingIndex keeps it in
// 16 bits), so that they value a page alike whatever arrives.
inline constexpr int64_t kMaxSignals = 65535;

// What the index holds about a page, so that its owner need not keep a copy.
struct PageView {
  // As the index values them: IndexedParams (page_value.h) of what Upsert
  // was given, i.e. rounded to float.
  policy::PageParams params;
  HostId host = 0;
  double last_crawl = 0.0;
  int64_t n_cis = 0;  // signals since the last crawl, at most kMaxSignals
  bool leased = false;
};

class CrawlIndex {
 public:
  virtual ~CrawlIndex() = default;

  // Adds a page or replaces its parameters. `params.importance` is the raw
  // importance μ (the argmax does not depend on normalisation). The page's
  // crawl state starts at (last_crawl, no signals); an existing page keeps
  // its crawl state and lease, only the model changes.
  virtual void Upsert(PageId page, const policy::PageParams& params, HostId host,
                      double last_crawl) = 0;
  virtual void Remove(PageId page) = 0;
  virtual bool Contains(PageId page) const = 0;
  virtual size_t size() const = 0;

  // `count` >= 0 change-indicating signals for the page at time t, added to
  // n_cis at once (as many RecordSignal calls would, but in one step: e.g.
  // a shard replaying its journal at start-up; on a freshly upserted page
  // this sets n_cis). n_cis saturates at kMaxSignals.
  virtual void RecordSignals(PageId page, double t, int64_t count) = 0;
  // One signal: RecordSignals(page, t, 1).
  void RecordSignal(PageId page, double t) { RecordSignals(page, t, 1); }
  // The page was crawled at t: τ_elap and n_cis restart; its host may not be
  // crawled again before t + the host's minimum delay. Ends any lease.
  virtual void RecordCrawl(PageId page, double t) = 0;

  // Leases: a leased page is not offered by PickTop until ReleaseLease or
  // RecordCrawl. (Deadlines are the shard's business.)
  virtual void Lease(PageId page) = 0;
  virtual void ReleaseLease(PageId page) = 0;
  // Leases `page` for a crawl at t outside the argmax (an exploration crawl:
  // shard/probe_queue.h) as PickSlots leases a pick, host hold included.
  // False, changing nothing, when the page is absent or leased or its host
  // does not allow a crawl at t.
  virtual bool LeaseAt(PageId page, double t) = 0;

  // Politeness: minimum time between two crawls of the host's pages, and a
  // time before which none of its pages may be offered.
  virtual void SetHostDelay(HostId host, double min_delay) = 0;
  virtual void BlockHost(HostId host, double until) = 0;

  // Up to k pages with the highest crawl value at time t, best first, among
  // pages that are not leased and whose host is allowed at t. At most one
  // page per host is returned when the host has a minimum delay > 0 (the
  // second could not be crawled at t anyway).
  virtual std::vector<PickedPage> PickTop(double t, int k) = 0;

  // Algorithm 1 over consecutive slots, for a lease batch. For each time in
  // `slot_times` (non-decreasing, each >= the previous call's times) the
  // page PickTop(time, 1) would give is picked and leased at once, and when
  // its host has a minimum delay > 0 the host is held back until
  // time + min_delay (as by BlockHost, never shortening an earlier block),
  // as a crawl at the slot time would hold it. Slots with no eligible page
  // are left out of the result. Equal, pick for pick, to that loop of
  // PickTop + Lease + BlockHost; implementations may share work across the
  // slots. The caller records the holds in its own host table if it keeps
  // one (the picks say which host, through View, and the time).
  virtual std::vector<SlotPick> PickSlots(const std::vector<double>& slot_times) = 0;
  // PickSlots at t0, t0 + dt, ..., t0 + (k − 1)·dt (slots at rate 1/dt).
  std::vector<SlotPick> PickEvenSlots(double t0, double dt, int k) {
    std::vector<double> times;
    times.reserve(k > 0 ? k : 0);
    for (int j = 0; j < k; ++j) times.push_back(t0 + j * dt);
    return PickSlots(times);
  }

  // Values one page: its crawl value V_i(τ_eff_i(t)) at t under the current
  // policy (Theorem 1, Sec. 5.1; raw importance μ), the value PickTop ranks
  // by and PickedPage::value reports. 0 for a page not in the index.
  virtual double Value(PageId page, double t) const = 0;
  // The index's state of a page; nullopt when it is not in the index.
  virtual std::optional<PageView> View(PageId page) const = 0;

  virtual void SetPolicy(const policy::CrawlPolicy& policy) = 0;
  virtual const policy::CrawlPolicy& policy() const = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_CRAWL_INDEX_H_
