#include "services/shard_health.h"

#include "spdlog/spdlog.h"

namespace recrawl {
namespace services {
namespace {

// Adds the counts and rates of one shard to the cluster's total.
void AddToTotal(const ShardStats& shard, ShardStats* total) {
  total->set_urls(total->urls() + shard.urls());
  total->set_hosts(total->hosts() + shard.hosts());
  total->set_leases_in_flight(total->leases_in_flight() + shard.leases_in_flight());
  total->set_signals_per_second(total->signals_per_second() + shard.signals_per_second());
  total->set_picks_per_second(total->picks_per_second() + shard.picks_per_second());
  total->set_reports_per_second(total->reports_per_second() + shard.reports_per_second());
  total->set_signals_total(total->signals_total() + shard.signals_total());
  total->set_leases_total(total->leases_total() + shard.leases_total());
  total->set_reports_total(total->reports_total() + shard.reports_total());
  total->set_expired_leases_total(total->expired_leases_total() + shard.expired_leases_total());
  total->set_released_leases_total(total->released_leases_total() + shard.released_leases_total());
}

}  // namespace

ShardHealth::ShardHealth(coordinator::Coordinator* core, absl::Mutex* core_mu, const Clock* clock,
                         ShardChannels* channels, double probe_deadline)
    : core_(core),
      core_mu_(core_mu),
      clock_(clock),
      channels_(channels),
      probe_deadline_(probe_deadline),
      last_stats_(static_cast<size_t>(core->directory().num_shards())) {}

ShardHealth::Probed ShardHealth::Probe(const std::vector<std::string>& addresses) {
  ShardCalls<GetStatsRequest, ShardStats> probes;
  for (const std::string& address : addresses) AddShardCall(&probes, -1, address);
  CallInParallel(channels_, probe_deadline_, &ShardAsync::GetStats, &probes);
  Probed probed;
  absl::MutexLock core_lock(core_mu_);
  absl::MutexLock lock(&mu_);
  const double now = clock_->Now();
  for (const auto& probe : probes) {
    coordinator::ShardDirectory::Probe result{
        probe->address, probe->status.ok(), static_cast<int>(probe->response.shard_index()),
        static_cast<int>(probe->response.num_shards()), probe->response.routing()};
    absl::Status s = core_->directory().Record(result, now);
    std::string& last_refusal = last_refusal_[probe->address];
    if (!s.ok() && last_refusal != s.message()) {
      spdlog::error("refusing a shard: {}", std::string(s.message()));
    }
    last_refusal = std::string(s.message());
    if (s.ok() && result.ok) last_stats_[result.shard_index] = probe->response;
  }
  probed.changes = core_->Tick(now);
  probed.live = core_->directory().Live(now);
  return probed;
}

void ShardHealth::Refresh() {
  ShardCalls<GetStatsRequest, ShardStats> calls;
  {
    absl::MutexLock lock(core_mu_);
    const std::vector<bool> live = core_->directory().Live(clock_->Now());
    for (size_t s = 0; s < live.size(); ++s) {
      if (live[s]) AddShardCall(&calls, static_cast<int>(s), core_->directory().shard(s).address);
    }
  }
  CallInParallel(channels_, probe_deadline_, &ShardAsync::GetStats, &calls);
  absl::MutexLock lock(&mu_);
  for (const auto& call : calls) {
    // Only a shard that still says it is this one; the probes judge the rest.
    if (call->status.ok() && static_cast<int>(call->response.shard_index()) == call->shard) {
      last_stats_[call->shard] = call->response;
    }
  }
}

void ShardHealth::AddShardFigures(const std::vector<bool>& live, double now,
                                  ClusterStats* stats) const {
  absl::MutexLock lock(&mu_);
  ShardStats* total = stats->mutable_total();
  total->set_time(now);
  uint32_t live_shards = 0;
  for (size_t s = 0; s < last_stats_.size(); ++s) {
    live_shards += live[s] ? 1 : 0;
    stats->add_live(live[s]);
    *stats->add_shards() = last_stats_[s];
    AddToTotal(last_stats_[s], total);
  }
  stats->set_live_shards(live_shards);
}

}  // namespace services
}  // namespace recrawl
