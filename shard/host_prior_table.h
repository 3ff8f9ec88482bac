// The host-pooled priors of a shard's pages (host_learning.h), per
// politeness host: every crawl outcome of a host's pages feeds its pooled
// learner, whose fit becomes the prior of the host's pages whose own prior
// is the shard's default — at their next crawl, and for a new URL of the
// host from its upsert on (made optimistic, as PriorRanking makes the
// default prior for a URL of an unknown host). A URL given its own prior
// keeps it. Before a host has been fitted (host_learning.h:
// min_outcomes) nothing changes.
//
// State: ~150 bytes per host with crawl outcomes. Persistence: the caller
// writes a host's state (ToRecord) into its HostRecord when Learn reports a
// refit (O(log n + n/1024) times for n outcomes) and every host learnt since
// its last write at a graceful stop (TakeUnwritten); a crash loses what the
// host learnt since its last refit, which only delays it.
//
// Not thread-safe (the shard serialises its calls).
#ifndef RECRAWL_SHARD_HOST_PRIOR_TABLE_H_
#define RECRAWL_SHARD_HOST_PRIOR_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
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

  // Pools one crawl outcome of a page of `host` (LearnFromCrawl's
  // arguments). True when the host's prior was refitted (write its record).
  bool Learn(HostId host, double tau, int64_t n_cis, bool changed, double t_delay);

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

  size_t size() const { return hosts_.size(); }
  size_t MemoryBytes() const;

 private:
  struct Host {
    HostLearningState state;
    uint32_t written_outcomes = 0;  // state.pooled.crawls at the last write
    // NewPageModel's answer, made at each refit.
    policy::PageParams new_page;
  };
  void UpdateNewPage(Host* h) const;

  policy::PageParams default_prior_;
  LearningOptions options_;
  HostLearningOptions host_options_;
  absl::flat_hash_map<HostId, Host> hosts_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_HOST_PRIOR_TABLE_H_
