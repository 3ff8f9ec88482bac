#include "sim/sharded_scheduler.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace sim {

absl::StatusOr<std::unique_ptr<ShardedScheduler>> ShardedScheduler::Create(
    const std::vector<policy::PageParams>& pages, const std::vector<int>& shard_of,
    const policy::CrawlPolicy& policy, double bandwidth, const ShardedOptions& options) {
  if (options.num_shards < 1) {
    return absl::InvalidArgumentError("num_shards: must be at least 1");
  }
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
  return std::unique_ptr<ShardedScheduler>(new ShardedScheduler(
      std::move(shards), shard_of, std::move(local), bandwidth, options));
}

ShardedScheduler::ShardedScheduler(std::vector<Shard> shards, std::vector<int> shard_of,
                                   std::vector<int> local, double bandwidth,
                                   const ShardedOptions& options)
    : shards_(std::move(shards)),
      shard_of_(std::move(shard_of)),
      local_(std::move(local)),
      bandwidth_(bandwidth),
      options_(options),
      budgets_(coordinator::EqualSplit(bandwidth,
                                       std::vector<bool>(shards_.size(), true))),
      dealer_(static_cast<int>(shards_.size())),
      levels_(shards_.size(), 0.0),
      next_rebalance_(options.rebalance_period) {
  dealer_.SetBudgets(budgets_);
}

void ShardedScheduler::OnSignal(int page, double t) {
  shards_[shard_of_[page]].scheduler->OnSignal(local_[page], t);
}

void ShardedScheduler::OnCrawl(int page, double t, bool changed) {
  shards_[shard_of_[page]].scheduler->OnCrawl(local_[page], t, changed);
}

int ShardedScheduler::Next(double t) {
  return options_.mode == ShardedOptions::Mode::kMerge ? NextMerged(t) : NextSplit(t);
}

int ShardedScheduler::NextMerged(double t) {
  int best = kIdle;
  double best_value = 0.0;
  for (const Shard& shard : shards_) {
    const int page = shard.scheduler->Next(t);
    if (page == kIdle) continue;
    const double value = shard.scheduler->Value(page, t);
    if (best == kIdle || value > best_value) {
      best = shard.global[page];
      best_value = value;
    }
  }
  return best;
}

int ShardedScheduler::NextSplit(double t) {
  if (t >= next_rebalance_) EndPeriod(t);
  const int dealt = dealer_.Deal();
  if (dealt < 0) return kIdle;
  Shard& shard = shards_[dealt];
  const int page = shard.scheduler->Next(t);
  if (page == kIdle) return kIdle;
  shard.value_sum += shard.scheduler->Value(page, t);
  ++shard.picks;
  return shard.global[page];
}

void ShardedScheduler::EndPeriod(double t) {
  for (size_t s = 0; s < shards_.size(); ++s) {
    Shard& shard = shards_[s];
    levels_[s] = shard.picks > 0 ? shard.value_sum / shard.picks : 0.0;  // 0: unknown
    shard.value_sum = 0.0;
    shard.picks = 0;
  }
  if (options_.mode == ShardedOptions::Mode::kAdaptive) {
    budgets_ = coordinator::AdaptiveStep(bandwidth_, budgets_, levels_,
                                         std::vector<bool>(shards_.size(), true),
                                         options_.adaptive);
    dealer_.SetBudgets(budgets_);
  }
  while (next_rebalance_ <= t) next_rebalance_ += options_.rebalance_period;
}

}  // namespace sim
}  // namespace recrawl
