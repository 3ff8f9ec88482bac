#include "demo/crawl_run.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/admin_client.h"
#include "client/fetcher_client.h"
#include "client/ping_client.h"
#include "cluster/tokens.h"
#include "demo/cpu_time.h"

namespace recrawl {
namespace demo {
namespace {

using cluster::Role;
using Steady = std::chrono::steady_clock;

double SecondsSince(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

double LoadAverage() {
  double load = 0.0;
  return getloadavg(&load, 1) == 1 ? load : -1.0;
}

// The shards' index work so far, summed.
absl::StatusOr<CrawlRunResult::IndexUse> IndexUseOf(client::AdminClient& admin) {
  absl::StatusOr<ClusterStats> stats = admin.GetClusterStats();
  if (!stats.ok()) return stats.status();
  CrawlRunResult::IndexUse use;
  for (const ShardStats& shard : stats->shards()) {
    use.valuations += shard.index().valuations();
    use.wakeups += shard.index().wakeups();
    use.rebuilds += shard.index().rebuilds();
    use.raises += shard.index().raises();
  }
  return use;
}

// The web and the counters the threads share.
struct Shared {
  absl::Mutex mu;
  SimulatedWeb* web ABSL_PT_GUARDED_BY(mu) = nullptr;
  CrawlProgress totals ABSL_GUARDED_BY(mu);
  int64_t early_leases ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
  // When the fetchers and the pinger finished (real seconds from the start).
  double fetch_seconds ABSL_GUARDED_BY(mu) = 0.0;
  double ping_seconds ABSL_GUARDED_BY(mu) = 0.0;
  // This process's CPU seconds, by part (CrawlRunResult::CpuUse).
  double fetcher_cpu ABSL_GUARDED_BY(mu) = 0.0;
  double pinger_cpu ABSL_GUARDED_BY(mu) = 0.0;
  double web_cpu ABSL_GUARDED_BY(mu) = 0.0;
  std::atomic<bool> done{false};

  void Fail(absl::Status status) {
    absl::MutexLock lock(&mu);
    if (error.ok()) error = std::move(status);
    done = true;
  }
};

// Leases, fetches from the web and reports until a slot reaches the end of
// the run or the run is stopped.
void FetchLoop(const deploy::LocalCluster& cluster, const CrawlRunOptions& options, int index,
               const std::atomic<bool>& stop, Shared& shared) {
  client::FetcherOptions fetcher;
  fetcher.holder = absl::StrCat("demo-fetcher-", index);
  // Come back now and then to look at the stop flag.
  fetcher.max_wait = absl::Seconds(1);
  fetcher.lookahead = options.lookahead;
  client::FetcherClient client(cluster.ClientOptionsFor(cluster::Role::kFetcher), fetcher);
  const double end = options.start + options.duration;
  std::vector<CrawlReport> reports;
  const double cpu_start = ThreadCpuSeconds();
  double web_cpu = 0.0;
  // This thread's CPU, into the shared account, whichever way it returns.
  struct Account {
    Shared& shared;
    const double& cpu_start;
    const double& web_cpu;
    ~Account() {
      const double cpu = ThreadCpuSeconds() - cpu_start;
      absl::MutexLock lock(&shared.mu);
      shared.fetcher_cpu += cpu - web_cpu;
      shared.web_cpu += web_cpu;
    }
  } account{shared, cpu_start, web_cpu};
  while (!stop && !shared.done) {
    absl::StatusOr<std::vector<CoordinatorLease>> leases = client.Lease(options.lease_batch);
    if (!leases.ok()) {
      shared.Fail(absl::Status(leases.status().code(), absl::StrCat("fetcher ", index, ": Lease: ",
                                                                    leases.status().message())));
      return;
    }
    reports.clear();
    bool past_end = false;
    double last_slot = 0.0;
    {
      absl::MutexLock lock(&shared.mu);
      const double web_start = ThreadCpuSeconds();
      struct WebTime {
        double& total;
        double start;
        ~WebTime() { total += ThreadCpuSeconds() - start; }
      } web_time{web_cpu, web_start};
      for (const CoordinatorLease& lease : *leases) {
        if (lease.slot_time() >= end) {
          past_end = true;
          continue;
        }
        const int page = shared.web->PageOfUrl(lease.url());
        if (page < 0) {
          shared.error = absl::InternalError(absl::StrCat("fetcher ", index,
                                                          ": leased a URL the web does "
                                                          "not have: ",
                                                          lease.url()));
          shared.done = true;
          return;
        }
        ++shared.totals.leases;
        last_slot = std::max(last_slot, lease.slot_time());
        if (options.lease_only) continue;
        if (lease.slot_time() < options.start) ++shared.early_leases;
        const double t = std::max(lease.slot_time(), options.start);
        const FetchOutcome outcome = shared.web->Fetch(page, t - options.start);
        CrawlReport& report = reports.emplace_back();
        report.set_lease_id(lease.lease_id());
        report.set_fetch_time(t);
        report.set_outcome(outcome.changed ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
      }
    }
    if (!reports.empty()) {
      absl::StatusOr<ReportCrawlsResponse> response = client.Report(reports);
      if (!response.ok()) {
        shared.Fail(absl::Status(
            response.status().code(),
            absl::StrCat("fetcher ", index, ": Report: ", response.status().message())));
        return;
      }
      absl::MutexLock lock(&shared.mu);
      shared.totals.crawls += response->changed() + response->unchanged();
      shared.totals.unchanged_crawls += response->unchanged();
      shared.totals.rejected_reports += response->result().rejected_size();
    }
    if (past_end) return;
    // A fetcher fetches each URL at its slot time, so it is busy until the
    // batch's last slot before it leases again: each call then takes up to
    // a lookahead's worth of slots, not the few that came due since the last.
    // It sleeps until then, at most 20 ms at a time so that it sees a stop
    // (a poll every millisecond would cost the fetchers more CPU than their
    // calls).
    for (double now = cluster.Now(); !stop && !shared.done && now < last_slot;
         now = cluster.Now()) {
      const double real_seconds = (last_slot - now) / cluster.options().time_scale;
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(real_seconds, 0.02)));
    }
  }
}

// Pushes the web's signals as the cluster's clock passes their times.
void PingLoop(const deploy::LocalCluster& cluster, const CrawlRunOptions& options,
              const std::atomic<bool>& stop, Shared& shared) {
  client::PingOptions ping;
  ping.route_to_shards = options.signals_to_shards;
  if (ping.route_to_shards) ping.shard_token = cluster.TokenOf(cluster::Role::kInternal);
  absl::StatusOr<std::unique_ptr<client::PingClient>> pinger =
      client::PingClient::Create(cluster.ClientOptionsFor(cluster::Role::kPinger), ping);
  if (!pinger.ok()) {
    shared.Fail(
        absl::Status(pinger.status().code(), absl::StrCat("pinger: ", pinger.status().message())));
    return;
  }
  std::vector<WebSignal> due;
  std::vector<Signal> signals;
  const double cpu_start = ThreadCpuSeconds();
  double web_cpu = 0.0;
  struct Account {
    Shared& shared;
    const double& cpu_start;
    const double& web_cpu;
    ~Account() {
      const double cpu = ThreadCpuSeconds() - cpu_start;
      absl::MutexLock lock(&shared.mu);
      shared.pinger_cpu += cpu - web_cpu;
      shared.web_cpu += web_cpu;
    }
  } account{shared, cpu_start, web_cpu};
  for (bool last = false; !last && !stop;) {
    const double web_now = cluster.Now() - options.start;
    last = shared.done || web_now >= options.duration;
    due.clear();
    signals.clear();
    {
      absl::MutexLock lock(&shared.mu);
      const double web_start = ThreadCpuSeconds();
      shared.web->PopSignalsUntil(std::min(web_now, options.duration), &due);
      for (const WebSignal& s : due) {
        Signal& signal = signals.emplace_back();
        signal.set_url(shared.web->Url(s.page));
        signal.set_time(options.start + s.time);
        signal.set_source(SIGNAL_SOURCE_INDEXNOW);
      }
      web_cpu += ThreadCpuSeconds() - web_start;
    }
    // Outside the web's lock: Add blocks while the stream is full, and the
    // fetchers must not wait for the signals.
    for (Signal& signal : signals) {
      if (absl::Status status = (*pinger)->Add(std::move(signal)); !status.ok()) {
        shared.Fail(absl::Status(status.code(), absl::StrCat("pinger: ", status.message())));
        return;
      }
    }
    // A partial batch goes now rather than when it fills: a signal that
    // waits is one the shards cannot use for the slots in between.
    if (absl::Status status = (*pinger)->Flush(); !status.ok()) {
      shared.Fail(absl::Status(status.code(), absl::StrCat("pinger: ", status.message())));
      return;
    }
    {
      absl::MutexLock lock(&shared.mu);
      const client::PingStats stats = (*pinger)->stats();
      shared.totals.signals =
          stats.counted + stats.registered + stats.duplicate + stats.stale + stats.unknown;
      shared.totals.signals_counted = stats.counted;
      shared.totals.signals_resent = stats.retried;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

absl::Status LoadWeb(const deploy::LocalCluster& cluster, const SimulatedWeb& web,
                     double last_crawl_time, const std::atomic<bool>& stop,
                     const std::function<void(int64_t)>& on_batch) {
  const client::ClientOptions options = cluster.ClientOptionsFor(cluster::Role::kOperator);
  client::AdminClient admin(options);
  constexpr int kBatch = 20000;
  // An upsert sets the same fields again, so items a shard did not answer
  // in time (the coordinator's --shard_deadline) are sent again.
  constexpr int kRounds = 8;
  std::vector<UrlSpec> specs;
  for (int begin = 0; begin < web.num_pages(); begin += kBatch) {
    const int end = std::min(web.num_pages(), begin + kBatch);
    specs.clear();
    for (int i = begin; i < end; ++i) {
      const policy::PageParams& p = web.pages()[i];
      UrlSpec& spec = specs.emplace_back();
      spec.set_url(web.Url(i));
      spec.set_importance(p.importance);
      spec.mutable_prior()->set_change_rate(p.change_rate);
      spec.mutable_prior()->set_recall(p.recall);
      spec.mutable_prior()->set_false_rate(p.false_rate);
      spec.set_last_crawl_time(last_crawl_time);
    }
    absl::Duration backoff = options.backoff.initial;
    for (int round = 1; !specs.empty(); ++round) {
      if (stop) return absl::CancelledError("stopped while loading the web");
      absl::StatusOr<UpsertUrlsResponse> response = admin.UpsertUrls(specs);
      if (!response.ok()) {
        return absl::Status(response.status().code(),
                            absl::StrCat("loading pages ", begin, "..", end - 1, ": ",
                                         response.status().message()));
      }
      std::vector<UrlSpec> again;
      for (const ItemStatus& item : response->result().rejected()) {
        const UrlSpec& spec = specs[item.index()];
        const auto code = static_cast<absl::StatusCode>(item.code());
        if ((code != absl::StatusCode::kDeadlineExceeded &&
             code != absl::StatusCode::kUnavailable) ||
            round == kRounds) {
          return absl::Status(code, absl::StrCat("loading ", spec.url(), ": ", item.message()));
        }
        again.push_back(spec);
      }
      specs = std::move(again);
      if (!specs.empty()) {
        absl::SleepFor(backoff);
        backoff = std::min(backoff * 2, options.backoff.max);
      }
    }
    on_batch(end);
  }
  return absl::OkStatus();
}

absl::StatusOr<CrawlRunResult> RunCrawl(
    const deploy::LocalCluster& cluster, SimulatedWeb& web, const CrawlRunOptions& options,
    const std::atomic<bool>& stop, const std::function<void(const CrawlProgress&)>& on_progress) {
  if (!(options.duration > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration: must be > 0, got ", options.duration));
  }
  if (options.fetchers < 0 || (options.fetchers == 0 && !options.signals)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fetchers: must be >= 1, or 0 with signals on; got ", options.fetchers));
  }
  const sim::BandwidthSchedule& schedule = options.bandwidth;
  if (schedule.start.empty() || schedule.start.size() != schedule.rate.size()) {
    return absl::InvalidArgumentError("bandwidth: schedule has no steps");
  }
  client::AdminClient admin(cluster.ClientOptionsFor(cluster::Role::kOperator));
  if (auto set = admin.SetBandwidth(schedule.rate[0], COORDINATOR_MODE_UNSPECIFIED); !set.ok()) {
    return set.status();
  }

  Shared shared;
  {
    absl::MutexLock lock(&shared.mu);
    shared.web = &web;
  }
  // Wait for web time 0.
  while (!stop && cluster.Now() < options.start) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double load_at_start = LoadAverage();
  const Steady::time_point began = Steady::now();
  // The servers' CPU from here until the threads are joined.
  std::vector<double> shard_cpu(cluster.num_shards());
  for (int s = 0; s < cluster.num_shards(); ++s) {
    shard_cpu[s] = -ProcessCpuSeconds(cluster.shard_pid(s));
  }
  double coordinator_cpu = -ProcessCpuSeconds(cluster.coordinator_pid());
  absl::StatusOr<CrawlRunResult::IndexUse> index_before = IndexUseOf(admin);
  if (!index_before.ok()) return index_before.status();
  std::vector<std::thread> threads;
  for (int k = 0; k < options.fetchers; ++k) {
    threads.emplace_back([&, k] {
      FetchLoop(cluster, options, k, stop, shared);
      absl::MutexLock lock(&shared.mu);
      shared.fetch_seconds = std::max(shared.fetch_seconds, SecondsSince(began));
    });
  }
  if (options.signals) {
    threads.emplace_back([&] {
      PingLoop(cluster, options, stop, shared);
      absl::MutexLock lock(&shared.mu);
      shared.ping_seconds = SecondsSince(began);
    });
  }

  size_t next_step = 1;
  Steady::time_point last_progress = began;
  auto progress = [&]() {
    CrawlProgress p;
    {
      absl::MutexLock lock(&shared.mu);
      p = shared.totals;
      p.web_time = std::min(cluster.Now() - options.start, options.duration);
      p.freshness = web.FreshnessUntil(p.web_time);
    }
    p.real_seconds = SecondsSince(began);
    on_progress(p);
    last_progress = Steady::now();
  };
  while (!stop && !shared.done && cluster.Now() < options.start + options.duration) {
    const double web_now = cluster.Now() - options.start;
    if (next_step < schedule.start.size() && web_now >= schedule.start[next_step]) {
      if (auto set = admin.SetBandwidth(schedule.rate[next_step], COORDINATOR_MODE_UNSPECIFIED);
          !set.ok()) {
        shared.Fail(set.status());
        break;
      }
      ++next_step;
    }
    if (SecondsSince(last_progress) >= options.progress_period) progress();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (std::thread& t : threads) t.join();
  shared.done = true;
  for (int s = 0; s < cluster.num_shards(); ++s) {
    shard_cpu[s] += ProcessCpuSeconds(cluster.shard_pid(s));
  }
  coordinator_cpu += ProcessCpuSeconds(cluster.coordinator_pid());
  absl::StatusOr<CrawlRunResult::IndexUse> index_after = IndexUseOf(admin);
  if (!index_after.ok()) return index_after.status();

  CrawlRunResult result;
  result.index.valuations = index_after->valuations - index_before->valuations;
  result.index.wakeups = index_after->wakeups - index_before->wakeups;
  result.index.rebuilds = index_after->rebuilds - index_before->rebuilds;
  result.index.raises = index_after->raises - index_before->raises;
  for (double cpu : shard_cpu) result.cpu.shards += cpu;
  result.cpu.coordinator = coordinator_cpu;
  result.load_at_start = load_at_start;
  result.load_at_end = LoadAverage();
  {
    absl::MutexLock lock(&shared.mu);
    if (!shared.error.ok()) return shared.error;
    result.totals = shared.totals;
    result.early_leases = shared.early_leases;
    result.fetch_seconds = shared.fetch_seconds;
    result.ping_seconds = shared.ping_seconds;
    result.cpu.fetchers = shared.fetcher_cpu;
    result.cpu.pinger = shared.pinger_cpu;
    result.cpu.web = shared.web_cpu;
  }
  if (stop) return absl::CancelledError("stopped");
  result.totals.web_time = options.duration;
  result.totals.real_seconds = SecondsSince(began);
  result.totals.freshness = web.FreshnessUntil(options.duration);
  on_progress(result.totals);
  result.window_freshness = web.CloseWindows(options.duration);
  result.web = web.counts();
  return result;
}

}  // namespace demo
}  // namespace recrawl
