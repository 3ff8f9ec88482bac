// The host-pooled priors of a shard's pages (host_learning.h), per
// politeness host: every crawl outcome of a host's pages feeds its pooled
// learner, whose fit becomes the prior of the host's pages whose own prior
// is the shard's default — at their next crawl, and for a new URL of the
// host from its upsert on (made optimistic, as PriorRanking makes the
// default prior for a URL of an unknown host). A URL given its own prior
// keeps it. Before a host has been fitted (host_learning.h:
// min_outcomes) nothing changes.
//
// A host's learner is made when a second of its pages has an outcome: until
// then the host's outcomes are those of one page, whose own state holds
// them (its crawl summaries are what the pooled state would be, with
// another prior), so the table keeps only that page's id and builds the
// pooled state from the page's state when the second page comes
// (HostLearningFromPage), or when the page is removed. A host whose pages
// are pooled from the start has the fits and refit points it would have
// had with a learner from its first outcome; one whose first page had
// reached min_outcomes alone is fitted when its second page has an outcome.
// A host with one crawled page gets no host prior, for that page (which
// would count its own outcomes twice) nor for new pages of the host.
//
// State: 4 bytes per host id (an index, dense by HostId), 100 bytes per
// host with outcomes on two pages or more (HostLearningState without the
// pooled prior, which is the default for every host, and a flag, in one
// array), and ~40 more per fitted host (its new-page model, in a hash
// map). Persistence: the caller writes a pooled host's state (ToRecord)
// into its HostRecord when Learn or RemovePage reports a refit
// (O(log n + n/1024) times for n outcomes) and every host learnt since its
// last write at a graceful stop (TakeUnwritten); a crash loses what the
// host learnt since its last refit, which only delays it. A host with one
// crawled page has nothing to write: a restart finds its page again
// (NotePage).
//
// Not thread-safe (the shard serialises its calls).
#ifndef RECRAWL_SHARD_HOST_PRIOR_TABLE_H_
#define RECRAWL_SHARD_HOST_PRIOR_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "policy/page_model.h"
#include "shard/host_learning.h"
#include "shard/index/crawl_index.h"
#include "shard/learning.h"
#include "shard/store/records.pb.h"

namespace recrawl {
namespace shard {

class HostPriorTable {
 public:
  // `default_prior`: the shard's default (Δ, λ, ν), which is also each
  // host's pooled prior. Options are checked by the caller
  // (CheckHostLearningOptions).
  HostPriorTable(const policy::PageParams& default_prior, const LearningOptions& options,
                 const HostLearningOptions& host_options);

  // Pools one crawl outcome of `page` of `host` (LearnFromCrawl's
  // arguments), learnt into the page's own state but not yet stored there:
  // `learning_of` gives the stored state of another page of the host (the
  // host's first page, when `page` is its second with an outcome). True
  // when the host's prior was refitted (write its record).
  bool Learn(HostId host, PageId page, double tau, int64_t n_cis, bool changed, double t_delay,
             absl::FunctionRef<LearningState(PageId)> learning_of);
  // A page of `host` with outcomes, as a restart finds it: the host's one
  // page with outcomes if the host has neither a pooled state (Restore) nor
  // such a page yet. Call after the hosts' Restore.
  void NotePage(HostId host, PageId page);
  // Before `page` of `host` is removed, with its state: if the host's
  // outcomes are that page's alone, the host is pooled from them (its id
  // may be reused). True when that fitted the host (write its record).
  bool RemovePage(HostId host, PageId page, const LearningState& learning);

  // Whether `prior` is the shard's default, which the host prior replaces.
  bool IsDefault(const policy::PageParams& prior) const;
  // Whether the host has a fitted prior.
  bool Fitted(HostId host) const;

  // For a page of a fitted host whose prior is the default: its fit with
  // the host's prior in place of the default (host_learning.h: FitPage; the
  // page's state keeps its own prior, so the host's latest prior applies at
  // each fit). nullopt otherwise (fit the page as before).
  std::optional<LearnedModel> FitPage(HostId host, double importance,
                                      const LearningState& page) const;
  // SignalRate (learning.h) of such a page, with the host's prior and its
  // weight as FitPage fits it; nullopt otherwise.
  std::optional<double> SignalRate(HostId host, const LearningState& page, double open_signals,
                                   double open_time) const;
  // The model a new page of `host` with the default prior is ranked by:
  // the host prior made optimistic; nullopt before the host is fitted.
  std::optional<policy::PageParams> NewPageModel(HostId host, double importance) const;

  bool ToRecord(HostId host, HostLearningRecord* record) const;
  // InvalidArgument naming the field for an inconsistent record.
  absl::Status Restore(HostId host, const HostLearningRecord& record);
  // Hosts learnt since their last write, marked as written.
  std::vector<HostId> TakeUnwritten();
  void MarkWritten(HostId host);

  // Hosts with a pooled state.
  size_t size() const { return pooled_.size(); }
  size_t MemoryBytes() const;

 private:
  // A HostLearningState as kept: its pooled state without the prior, which
  // is default_prior_ for every host.
  static constexpr size_t kSummariesOffset = offsetof(LearningState, unchanged_tau);
  struct Host {
    // The pooled LearningState's bytes from unchanged_tau on.
    unsigned char summaries[sizeof(LearningState) - kSummariesOffset];
    float change_rate;
    float recall;
    float false_rate;
    uint32_t fitted_outcomes;
    bool unwritten;  // learnt since its last write
  };
  HostLearningState Expand(const Host& h) const;
  static void Compact(const HostLearningState& state, Host* h);
  // entries_[host]: 0 (no outcome), kOnePage | page (the host's outcomes
  // are that page's), or 1 + the host's index in pooled_.
  static constexpr uint32_t kOnePage = uint32_t{1} << 31;
  uint32_t Entry(HostId host) const { return host < entries_.size() ? entries_[host] : 0; }
  uint32_t& MutableEntry(HostId host);
  // The host's pooled state, or null.
  const Host* Pooled(HostId host) const;
  // The host's pooled state if it is fitted and `page` has the default
  // prior, or null.
  const Host* FittedFor(HostId host, const LearningState& page) const;
  Host* MutablePooled(HostId host);
  // A new pooled host, learnt since its last write.
  Host* AddPooled(HostId host, const HostLearningState& state);
  // RefitHostIfDue on the host's `state` (Expand), kept in `h`, with the
  // new-page model made at a refit. True at a refit.
  bool Refit(HostId host, HostLearningState* state, Host* h);
  void UpdateNewPage(HostId host, const HostLearningState& state);

  policy::PageParams default_prior_;
  LearningOptions options_;
  HostLearningOptions host_options_;
  std::vector<uint32_t> entries_;
  std::vector<Host> pooled_;
  // NewPageModel's answer for each fitted host, made at each refit.
  absl::flat_hash_map<HostId, policy::PageParams> new_page_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_HOST_PRIOR_TABLE_H_
