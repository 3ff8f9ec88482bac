#include "demo/main_job.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "policy/crawl_policy.h"
#include "policy/optimal_policy.h"

namespace recrawl {
namespace demo {
namespace {

using Steady = std::chrono::steady_clock;

double SecondsSince(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

// Pages the loader is assumed to upsert per real second when it picks the
// start of the crawl (the pages' last crawl time) before loading them. A
// slower load starts the crawl late (said in a note), never early.
constexpr double kAssumedLoadRate = 50000.0;

std::string DisplayName(const std::string& policy) {
  return absl::AsciiStrToUpper(absl::StrReplaceAll(policy, {{"_", "-"}}));
}

std::string ColumnName(const PolicyRun& run) {
  return run.lease_only ? "leases only (baseline)" : DisplayName(run.policy);
}

// Mean of the windows of a phase [from, to) of the run.
double PhaseMean(const std::vector<double>& windows, double width, double from, double to) {
  double sum = 0.0, length = 0.0;
  for (size_t k = 0; k < windows.size(); ++k) {
    const double lo = std::max(from, k * width);
    const double hi = std::min(to, (k + 1) * width);
    if (hi > lo && !std::isnan(windows[k])) {
      sum += windows[k] * (hi - lo);
      length += hi - lo;
    }
  }
  return length > 0 ? sum / length : std::nan("");
}

double ScheduleEnd(const sim::BandwidthSchedule& s, size_t k, double end) {
  return k + 1 < s.start.size() ? s.start[k + 1] : end;
}

// Crawls the schedule asks for over [0, duration].
double AskedCrawls(const sim::BandwidthSchedule& s, double duration) {
  double crawls = 0.0;
  for (size_t k = 0; k < s.start.size(); ++k) {
    crawls += s.rate[k] * (ScheduleEnd(s, k, duration) - s.start[k]);
  }
  return crawls;
}

absl::StatusOr<PolicyRun> RunPolicy(const MainJobOptions& options, const std::string& policy,
                                    bool lease_only, const sim::BandwidthSchedule& schedule,
                                    const std::atomic<bool>& stop,
                                    const MainJobObserver& observer) {
  const std::string name =
      lease_only ? absl::StrCat(DisplayName(policy), " LEASES ONLY") : DisplayName(policy);
  absl::StatusOr<SimulatedWeb> web = SimulatedWeb::Create(options.web);
  if (!web.ok()) return web.status();

  deploy::LocalClusterOptions cluster_options = options.cluster;
  cluster_options.data_dir = absl::StrCat(options.cluster.data_dir, "/", policy);
  cluster_options.bandwidth = schedule.rate[0];
  // Start clean: a store left by an earlier run holds its crawl history.
  std::error_code error;
  std::filesystem::remove_all(cluster_options.data_dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("cannot remove ", cluster_options.data_dir, ": ", error.message()));
  }
  // The URLs' last crawl time lies this far (clock seconds) ahead while
  // they load; the shards must accept it.
  const double load_margin =
      options.cluster.time_scale * (2.0 + web->num_pages() / kAssumedLoadRate);
  cluster_options.shard_flags.push_back("--policy=" + policy);
  cluster_options.shard_flags.push_back(absl::StrCat("--max_clock_skew=", 300.0 + 2 * load_margin));

  PolicyRun run;
  run.policy = policy;
  run.lease_only = lease_only;
  const Steady::time_point began = Steady::now();
  deploy::LocalCluster cluster(cluster_options);
  observer.note(absl::StrCat(name, ": starting ", cluster_options.shards,
                             " shards and a coordinator under ", cluster_options.data_dir));
  if (absl::Status s = cluster.Start(); !s.ok()) return s;

  auto finish = [&](absl::Status status) -> absl::Status {
    absl::Status stopped = cluster.Stop();
    if (status.ok()) status = stopped;
    if (!options.keep_data) {
      std::error_code ignored;
      std::filesystem::remove_all(cluster_options.data_dir, ignored);
    }
    return status;
  };

  const double start = cluster.Now() + load_margin;
  observer.note(absl::StrCat(name, ": loading ", web->num_pages(), " pages"));
  const Steady::time_point load_began = Steady::now();
  absl::Status loaded = LoadWeb(cluster, *web, start, stop, [&](int64_t pages) { (void)pages; });
  run.load_seconds = SecondsSince(load_began);
  if (!loaded.ok()) return finish(loaded);
  const double late = cluster.Now() - start;
  observer.note(absl::StrFormat(
      "%s: loaded in %.1f s; crawl %s", name, run.load_seconds,
      late > 0 ? absl::StrFormat("starts %.1f simulated s late (slow load)", late)
               : absl::StrFormat("starts in %.1f real s", -late / options.cluster.time_scale)));

  CrawlRunOptions crawl;
  crawl.start = start;
  crawl.duration = options.duration;
  crawl.bandwidth = schedule;
  crawl.fetchers = options.fetchers;
  crawl.signals = options.signals;
  crawl.lookahead = options.lookahead;
  crawl.signals_to_shards = options.signals_to_shards;
  crawl.lease_only = lease_only;
  absl::StatusOr<CrawlRunResult> result = RunCrawl(
      cluster, *web, crawl, stop, [&](const CrawlProgress& p) { observer.progress(name, p); });
  if (!result.ok()) return finish(result.status());
  run.result = *std::move(result);
  if (absl::Status s = finish(absl::OkStatus()); !s.ok()) return s;
  run.wall_seconds = SecondsSince(began);
  return run;
}

}  // namespace

sim::BandwidthSchedule MainJobSchedule(double bandwidth, double duration) {
  return {{0.0, duration / 3, 2 * duration / 3}, {bandwidth, 1.5 * bandwidth, bandwidth}};
}

absl::StatusOr<MainJobResult> RunMainJob(const MainJobOptions& options,
                                         const std::atomic<bool>& stop,
                                         const MainJobObserver& observer) {
  if (!(options.duration > 0.0) || !std::isfinite(options.duration)) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration: must be positive and finite, got ", options.duration));
  }
  if (!(options.bandwidth > 0.0) || !std::isfinite(options.bandwidth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bandwidth: must be positive and finite, got ", options.bandwidth));
  }
  if (options.fetchers < 0 || (options.fetchers == 0 && !options.signals)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fetchers: must be >= 1, or 0 with signals on; got ", options.fetchers));
  }
  for (const std::string& p : options.policies) {
    if (absl::Status s = policy::CrawlPolicy::Parse(p).status(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("policy '", p, "': ", s.message()));
    }
  }
  MainJobOptions job = options;
  job.web.horizon = options.duration;
  // Windows line up with the thirds of the schedule.
  job.web.windows = 3 * std::max(1, options.web.windows / 3);

  MainJobResult out;
  out.schedule = MainJobSchedule(options.bandwidth, options.duration);
  {
    absl::StatusOr<SimulatedWeb> web = SimulatedWeb::Create(job.web);
    if (!web.ok()) return web.status();
    observer.note(absl::StrCat("BASELINE: solving problem (5) for ", web->num_pages(),
                               " pages at each bandwidth"));
    for (size_t k = 0; k < out.schedule.rate.size(); ++k) {
      const double rate = out.schedule.rate[k];
      // The schedule comes back to its first rate: solve each rate once.
      const size_t same =
          std::find(out.schedule.rate.begin(), out.schedule.rate.begin() + k, rate) -
          out.schedule.rate.begin();
      if (same < k) {
        out.baseline.push_back(out.baseline[same]);
        continue;
      }
      absl::StatusOr<policy::ContinuousPolicy> baseline =
          policy::SolveNoSignalBaseline(web->pages(), rate);
      if (!baseline.ok()) return baseline.status();
      out.baseline.push_back(baseline->accuracy);
    }
  }
  std::vector<std::pair<std::string, bool>> runs;
  for (const std::string& p : job.policies) runs.emplace_back(p, false);
  if (job.lease_only_baseline && !job.policies.empty()) {
    runs.emplace_back(job.policies[0], true);
  }
  for (const auto& [policy, lease_only] : runs) {
    absl::StatusOr<PolicyRun> run =
        RunPolicy(job, policy, lease_only, out.schedule, stop, observer);
    if (!run.ok()) return run.status();
    out.runs.push_back(*std::move(run));
  }
  return out;
}

std::string StatusLine(const std::string& policy, const CrawlProgress& p, double duration) {
  constexpr int kBar = 24;
  const double done = std::clamp(p.web_time / duration, 0.0, 1.0);
  const int filled = static_cast<int>(done * kBar);
  const double seconds = std::max(p.real_seconds, 1e-9);
  return absl::StrFormat(
      "%-12s [%s%s] %3.0f%%  t=%.1f/%.0f s  %.0f crawls/s  %.0f signals/s  "
      "freshness %.3f",
      policy, std::string(filled, '#'), std::string(kBar - filled, '.'), 100 * done, p.web_time,
      duration, p.crawls / seconds, p.signals / seconds, p.freshness);
}

std::string SummaryTable(const MainJobOptions& options, const MainJobResult& result) {
  const sim::BandwidthSchedule& s = result.schedule;
  const double asked = AskedCrawls(s, options.duration);
  std::string out;
  absl::StrAppend(&out, "| ");
  for (const PolicyRun& run : result.runs) {
    absl::StrAppend(&out, " | ", ColumnName(run));
  }
  absl::StrAppend(&out, " | BASELINE |\n|---");
  for (size_t k = 0; k <= result.runs.size(); ++k) absl::StrAppend(&out, "|---");
  absl::StrAppend(&out, "|\n");

  auto row = [&](const std::string& label, const std::function<std::string(const PolicyRun&)>& cell,
                 const std::string& baseline) {
    absl::StrAppend(&out, "| ", label);
    for (const PolicyRun& run : result.runs) {
      absl::StrAppend(&out, " | ", cell(run));
    }
    absl::StrAppend(&out, " | ", baseline, " |\n");
  };
  auto fixed3 = [](double v) { return absl::StrFormat("%.3f", v); };

  double baseline_overall = 0.0;
  for (size_t k = 0; k < s.start.size(); ++k) {
    baseline_overall +=
        result.baseline[k] * (ScheduleEnd(s, k, options.duration) - s.start[k]) / options.duration;
  }
  row(
      "freshness, whole run", [&](const PolicyRun& r) { return fixed3(r.result.totals.freshness); },
      fixed3(baseline_overall));
  for (size_t k = 0; k < s.start.size(); ++k) {
    const double from = s.start[k], to = ScheduleEnd(s, k, options.duration);
    row(
        absl::StrFormat("freshness, t %.0f-%.0f s at R = %g", from, to, s.rate[k]),
        [&](const PolicyRun& r) {
          return fixed3(PhaseMean(r.result.window_freshness,
                                  options.duration / r.result.window_freshness.size(), from, to));
        },
        fixed3(result.baseline[k]));
  }
  row(
      absl::StrFormat("crawls reported (asked: %.0f)", asked),
      [&](const PolicyRun& r) {
        return absl::StrFormat("%d (%.1f%%)", r.result.totals.crawls,
                               100.0 * r.result.totals.crawls / asked);
      },
      "-");
  row(
      "crawls of unchanged pages",
      [&](const PolicyRun& r) {
        return absl::StrFormat("%d (%.1f%%)", r.result.totals.unchanged_crawls,
                               100.0 * r.result.totals.unchanged_crawls /
                                   std::max<int64_t>(1, r.result.totals.crawls));
      },
      "-");
  row(
      "reports rejected",
      [&](const PolicyRun& r) { return absl::StrCat(r.result.totals.rejected_reports); }, "-");
  row(
      "signals delivered (counted by shards; sent again)",
      [&](const PolicyRun& r) {
        return absl::StrFormat("%d (%d; %d)", r.result.totals.signals,
                               r.result.totals.signals_counted, r.result.totals.signals_resent);
      },
      "-");
  // A rate over a part that did not run (no fetchers, no signals) is "-".
  auto rate = [](int64_t count, double seconds) {
    return seconds > 0.0 ? absl::StrFormat("%.0f", count / seconds) : std::string("-");
  };
  row(
      "crawls/s, real time (until the last fetcher stopped)",
      [&](const PolicyRun& r) { return rate(r.result.totals.crawls, r.result.fetch_seconds); },
      "-");
  row(
      "leases/s, real time",
      [&](const PolicyRun& r) { return rate(r.result.totals.leases, r.result.fetch_seconds); },
      "-");
  row(
      "signals/s, real time (until all were acknowledged)",
      [&](const PolicyRun& r) { return rate(r.result.totals.signals, r.result.ping_seconds); },
      "-");
  row(
      "real seconds the crawl took / the signals took / scheduled",
      [&](const PolicyRun& r) {
        return absl::StrFormat("%.1f / %.1f / %.1f", r.result.fetch_seconds, r.result.ping_seconds,
                               options.duration / options.cluster.time_scale);
      },
      "-");
  // Where the CPU went during the crawl (CrawlRunResult::CpuUse): the
  // servers' per item of the crawl's work; run with --fetchers=0 or
  // --signals=false to see the signal or the crawl path alone.
  row(
      "CPU s during the crawl: shards / coordinator / fetchers / pinger / web",
      [&](const PolicyRun& r) {
        const CrawlRunResult::CpuUse& c = r.result.cpu;
        return absl::StrFormat("%.1f / %.1f / %.1f / %.1f / %.1f", c.shards, c.coordinator,
                               c.fetchers, c.pinger, c.web);
      },
      "-");
  row(
      "server CPU µs per crawl / per signal (all of it to each)",
      [&](const PolicyRun& r) {
        const double server = r.result.cpu.shards + r.result.cpu.coordinator;
        auto per = [server](int64_t n) {
          return n > 0 ? absl::StrFormat("%.1f", 1e6 * server / n) : std::string("-");
        };
        return absl::StrCat(per(r.result.totals.crawls), " / ", per(r.result.totals.signals));
      },
      "-");
  row(
      "index work per crawl: valuations / wake-ups; rebuilds / raises in all",
      [&](const PolicyRun& r) {
        const CrawlRunResult::IndexUse& w = r.result.index;
        const double crawls = static_cast<double>(std::max<int64_t>(r.result.totals.crawls, 1));
        return absl::StrFormat("%.1f / %.2f; %d / %d", w.valuations / crawls, w.wakeups / crawls,
                               w.rebuilds, w.raises);
      },
      "-");
  row(
      "load average at crawl start / end",
      [&](const PolicyRun& r) {
        return absl::StrFormat("%.1f / %.1f", r.result.load_at_start, r.result.load_at_end);
      },
      "-");
  row(
      "real seconds: load / cluster up",
      [&](const PolicyRun& r) {
        return absl::StrFormat("%.1f / %.1f", r.load_seconds, r.wall_seconds);
      },
      "-");

  // A crawl that fell short of the schedule measured the machine, not the
  // policy: say so next to the numbers.
  for (const PolicyRun& run : result.runs) {
    const double share = run.result.totals.crawls / asked;
    if (!run.lease_only && share < 0.95) {
      absl::StrAppend(&out,
                      absl::StrFormat("\nWARNING: %s crawled %.0f%% of the %.0f crawls the "
                                      "schedule asked for: its freshness is not comparable "
                                      "(the machine was too busy; try a lower --time_scale).\n",
                                      ColumnName(run), 100 * share, asked));
    }
  }

  // Freshness over time.
  if (!result.runs.empty()) {
    const size_t windows = result.runs[0].result.window_freshness.size();
    const double width = options.duration / windows;
    absl::StrAppend(&out, "\nFreshness per window of ", absl::StrFormat("%g", width),
                    " simulated s:\n\n| t | R");
    for (const PolicyRun& run : result.runs) {
      absl::StrAppend(&out, " | ", ColumnName(run));
    }
    absl::StrAppend(&out, " | BASELINE |\n|---|---");
    for (size_t k = 0; k <= result.runs.size(); ++k) absl::StrAppend(&out, "|---");
    absl::StrAppend(&out, "|\n");
    for (size_t w = 0; w < windows; ++w) {
      const double t = w * width;
      size_t step = 0;
      while (step + 1 < s.start.size() && s.start[step + 1] <= t + 1e-9) ++step;
      absl::StrAppend(&out, absl::StrFormat("| %.4g | %g", t, s.rate[step]));
      for (const PolicyRun& run : result.runs) {
        absl::StrAppend(&out, " | ", fixed3(run.result.window_freshness[w]));
      }
      absl::StrAppend(&out, " | ", fixed3(result.baseline[step]), " |\n");
    }
  }
  return out;
}

}  // namespace demo
}  // namespace recrawl
