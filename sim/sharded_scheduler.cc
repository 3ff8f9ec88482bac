#include "sim/sharded_scheduler.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace sim {

absl::StatusOr<std::unique_ptr<ShardedScheduler>> ShardedScheduler::Create(
    const std::vector<policy::PageParams>& pages, const std::vector<int>& shard_of,
    const policy::CrawlPolicy& policy, double bandwidth, const ShardedOptions& options) {
  coordinator::CoordinatorOptions c;
  c.num_shards = options.num_shards;
  c.bandwidth = bandwidth;
  c.mode = options.mode;
  c.adaptive = options.adaptive;
  c.rebalance_period = options.rebalance_period;
  c.directory.failure_timeout = std::numeric_limits<double>::infinity();
  if (absl::Status s = coordinator::Coordinator::Validate(c); !s.ok()) return s;
  if (shard_of.size() != pages.size()) {
    return absl::InvalidArgumentError("shard_of: one shard per page is needed");
  }
  std::vector<std::vector<policy::PageParams>> shard_pages(options.num_shards);
  std::vector<Shard> shards(options.num_shards);
  std::vector<int> local(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    const int s = shard_of[i];
    if (s < 0 || s >= options.num_shards) {
      return absl::InvalidArgumentError(absl::StrCat("shard_of[", i, "]: ", s, " is not a shard"));
    }
    local[i] = static_cast<int>(shard_pages[s].size());
    shard_pages[s].push_back(pages[i]);
    shards[s].global.push_back(static_cast<int>(i));
  }
  for (int s = 0; s < options.num_shards; ++s) {
    ValueSchedulerOptions shard_options;
    shard_options.target_candidates = CandidatesForPages(shard_pages[s].size());
    absl::StatusOr<std::unique_ptr<ValueScheduler>> scheduler = ValueScheduler::Create(
        shard_pages[s], std::vector<policy::CrawlPolicy>(shard_pages[s].size(), policy),
        shard_options);
    if (!scheduler.ok()) return scheduler.status();
    shards[s].scheduler = *std::move(scheduler);
  }
  return std::unique_ptr<ShardedScheduler>(
      new ShardedScheduler(std::move(shards), shard_of, std::move(local), c));
}

ShardedScheduler::ShardedScheduler(std::vector<Shard> shards, std::vector<int> shard_of,
                                   std::vector<int> local,
                                   const coordinator::CoordinatorOptions& options)
    : shards_(std::move(shards)),
      shard_of_(std::move(shard_of)),
      local_(std::move(local)),
      coordinator_(options, 0.0) {
  // Every shard answers once, for ever (failure_timeout = ∞).
  for (int s = 0; s < options.num_shards; ++s) {
    coordinator_.directory()
        .Record({absl::StrCat("shard-", s), true, s, options.num_shards, "site"}, 0.0)
        .IgnoreError();
  }
  coordinator_.Tick(0.0);
}

void ShardedScheduler::OnSignal(int page, double t) {
  shards_[shard_of_[page]].scheduler->OnSignal(local_[page], t);
}

void ShardedScheduler::OnCrawl(int page, double t, bool changed) {
  shards_[shard_of_[page]].scheduler->OnCrawl(local_[page], t, changed);
}

int ShardedScheduler::Next(double t) {
  coordinator_.Tick(t);
  const std::vector<double> slot = {t};
  std::vector<std::vector<double>> by_shard;
  std::vector<int> picks(shards_.size(), kIdle);
  if (coordinator_.mode() == coordinator::Mode::kMerge) {
    // Each shard offers its best page (a peek of one).
    std::vector<std::vector<double>> peeked(shards_.size());
    for (size_t s = 0; s < shards_.size(); ++s) {
      picks[s] = shards_[s].scheduler->Next(t);
      if (picks[s] != kIdle) peeked[s] = {shards_[s].scheduler->Value(picks[s], t)};
    }
    // Every shard offered all it could win (one slot): the merge is whole.
    const std::vector<int> asked(shards_.size(), 1);
    size_t assigned = 0;
    by_shard = coordinator_.MergeSlots(slot, peeked, asked, &assigned);
  } else {
    by_shard = coordinator_.DealSlots(slot);
  }
  for (size_t s = 0; s < shards_.size(); ++s) {
    if (by_shard[s].empty()) continue;
    Shard& shard = shards_[s];
    if (picks[s] == kIdle) picks[s] = shard.scheduler->Next(t);
    if (picks[s] == kIdle) return kIdle;
    coordinator_.RecordLeases(static_cast<int>(s), {shard.scheduler->Value(picks[s], t)});
    return shard.global[picks[s]];
  }
  return kIdle;
}

}  // namespace sim
}  // namespace recrawl
