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

  // A change-indicating signal for the page at time t (counted in n_cis).
  virtual void RecordSignal(PageId page, double t) = 0;
  // The page was crawled at t: τ_elap and n_cis restart; its host may not be
  // crawled again before t + the host's minimum delay. Ends any lease.
  virtual void RecordCrawl(PageId page, double t) = 0;

  // Leases: a leased page is not offered by PickTop until ReleaseLease or
  // RecordCrawl. (Deadlines are the shard's business.)
  virtual void Lease(PageId page) = 0;
  virtual void ReleaseLease(PageId page) = 0;

  // Politeness: minimum time between two crawls of the host's pages, and a
  // time before which none of its pages may be offered.
  virtual void SetHostDelay(HostId host, double min_delay) = 0;
  virtual void BlockHost(HostId host, double until) = 0;

  // Up to k pages with the highest crawl value at time t, best first, among
  // pages that are not leased and whose host is allowed at t. At most one
  // page per host is returned when the host has a minimum delay > 0 (the
  // second could not be crawled at t anyway).
  virtual std::vector<PickedPage> PickTop(double t, int k) = 0;

  // Crawl value of one page at t under the current policy.
  virtual double Value(PageId page, double t) const = 0;

  virtual void SetPolicy(const policy::CrawlPolicy& policy) = 0;
  virtual const policy::CrawlPolicy& policy() const = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_CRAWL_INDEX_H_
