#include "sim/bandwidth_experiment.h"

#include <chrono>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/parallel.h"
#include "sim/policies.h"
#include "sim/simulator.h"
#include "sim/windowed_accuracy.h"

namespace recrawl {
namespace sim {
namespace {

// App. D.
constexpr int kPaperPages = 1000;
constexpr double kPaperHorizon = 400;
constexpr double kLowRate = 100, kHighRate = 150;
constexpr double kUpAt = 133, kDownAt = 266;  // of kPaperHorizon
constexpr int kWindowCrawls = 1000;
// Fig. 12 plots every time step; we report 400 evenly spaced times (every
// time unit at the paper's horizon) and tabulate every 10th.
constexpr int kSeriesPoints = 400;
constexpr int kTableEvery = 10;

std::string Name(double rate) { return absl::StrCat(rate); }

// The label of a (policy, schedule) column.
std::string Column(const std::string& policy, const NamedSchedule& s) {
  return absl::StrCat(policy, " R=", s.name);
}

// samples[schedule][policy][time] of one repetition.
using RepSamples = std::vector<std::vector<std::vector<double>>>;

absl::Status RunRep(const BandwidthExperiment& e, uint64_t seed, uint64_t rep, RepSamples& out) {
  const Instance inst = GenerateInstance(e.world, seed, rep);
  const int m = static_cast<int>(inst.pages.size());
  bool simulate = false;
  for (const auto& p : e.policies) simulate |= !IsAnalytic(p);
  out.assign(e.schedules.size(), std::vector<std::vector<double>>(e.policies.size()));
  for (size_t v = 0; v < e.schedules.size(); ++v) {
    const BandwidthSchedule& bandwidth = e.schedules[v].bandwidth;
    WorldConfig config = e.world;
    config.bandwidth = bandwidth;
    Realization world;
    if (simulate) world = Realize(config, inst, seed, rep);
    for (size_t k = 0; k < e.policies.size(); ++k) {
      const std::string& name = e.policies[k];
      std::vector<double>& series = out[v][k];
      if (IsAnalytic(name)) {
        // The optimal continuous policy for the bandwidth in force at t.
        std::map<double, double> by_rate;
        for (double t : e.times) {
          const double rate = bandwidth.At(t);
          if (!by_rate.count(rate)) {
            absl::StatusOr<double> a = AnalyticAccuracy(name, inst.pages, rate);
            if (!a.ok()) return a.status();
            by_rate[rate] = *a;
          }
          series.push_back(by_rate[rate]);
        }
        continue;
      }
      absl::StatusOr<std::unique_ptr<Scheduler>> sched =
          MakeScheduler(name, inst.pages, bandwidth.rate[0]);
      if (!sched.ok()) return sched.status();
      const CrawlLog log = RunScheduler(world, m, **sched);
      series = AccuracyOverLastCrawls(CollectRequests(inst, world, log, seed, rep),
                                      SortedCrawlTimes(log), e.window_crawls, e.times);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BandwidthExperiment> Fig12Experiment(const ExperimentOverrides& o) {
  if (o.m.size() > 1) {
    return absl::InvalidArgumentError("--m: fig12 takes a single page count");
  }
  BandwidthExperiment e;
  e.world.num_pages = o.m.empty() ? kPaperPages : o.m[0];
  e.world.horizon = o.horizon > 0 ? o.horizon : kPaperHorizon;
  e.world.recall = Distribution::Beta(0.25, 0.25);
  e.world.false_rate = Distribution::Uniform(0.1, 0.6);
  const double scale = e.world.horizon / kPaperHorizon;
  const double up = kUpAt * scale, down = kDownAt * scale;
  e.schedules = {
      {absl::StrCat(Name(kLowRate), "-", Name(kHighRate), "-", Name(kLowRate)),
       {{0.0, up, down}, {kLowRate, kHighRate, kLowRate}}},
      {Name(kLowRate), BandwidthSchedule::Constant(kLowRate)},
      {Name(kHighRate), BandwidthSchedule::Constant(kHighRate)},
  };
  e.policies = o.policies.empty() ? std::vector<std::string>{"GREEDY"} : o.policies;
  e.window_crawls = kWindowCrawls;
  for (int k = 1; k <= kSeriesPoints; ++k) {
    e.times.push_back(e.world.horizon * k / kSeriesPoints);
  }
  e.table_every = kTableEvery;
  e.title = absl::StrFormat(
      "Fig. 12 (App. D): accuracy over the last %d crawls; R = %g, %g from t = %g, %g from "
      "t = %g (m = %d)",
      e.window_crawls, kLowRate, kHighRate, up, kLowRate, down, e.world.num_pages);
  return e;
}

absl::StatusOr<BandwidthResult> RunBandwidthExperiment(const BandwidthExperiment& e,
                                                       const RunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<RepSamples> samples(o.reps);
  absl::Status status =
      ForEachTask(o.reps, o.threads, [&](size_t r) { return RunRep(e, o.seed, r, samples[r]); });
  if (!status.ok()) return status;
  BandwidthResult result;
  result.series.assign(e.schedules.size(), std::vector<std::vector<MeanSe>>(e.policies.size()));
  std::vector<double> x(o.reps);
  for (size_t v = 0; v < e.schedules.size(); ++v) {
    for (size_t k = 0; k < e.policies.size(); ++k) {
      for (size_t j = 0; j < e.times.size(); ++j) {
        for (int r = 0; r < o.reps; ++r) x[r] = samples[r][v][k][j];
        result.series[v][k].push_back(Summarize(x));
      }
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Report BandwidthReport(const BandwidthExperiment& e, const BandwidthResult& r,
                       const RunOptions& o) {
  Report report;
  report.title = e.title;
  report.footer = RunFooter(o.reps, o.seed, o.threads, r.seconds);
  report.table.header = {"t", "R"};
  report.csv.header = {"t", "schedule", "R", "policy", "accuracy", "stderr"};
  const BandwidthSchedule& changing = e.schedules[0].bandwidth;
  report.plot.title =
      absl::StrFormat("Fig. 12: R = %s (switches at t = %g, %g), m = %d", e.schedules[0].name,
                      changing.start[1], changing.start[2], e.world.num_pages);
  report.plot.xlabel = "t";
  report.plot.ylabel = absl::StrCat("accuracy over the last ", e.window_crawls, " crawls");
  for (size_t k = 0; k < e.policies.size(); ++k) {
    for (size_t v = 0; v < e.schedules.size(); ++v) {
      report.table.header.push_back(Column(e.policies[k], e.schedules[v]));
      PlotLine line;
      line.title = Column(e.policies[k], e.schedules[v]);
      line.x = e.times;
      for (const MeanSe& a : r.series[v][k]) line.y.push_back(a.mean);
      report.plot.lines.push_back(std::move(line));
    }
  }
  for (size_t j = 0; j < e.times.size(); ++j) {
    const double t = e.times[j];
    const std::string ts = absl::StrFormat("%g", t);
    if ((j + 1) % e.table_every == 0) {
      std::vector<std::string> row = {ts, absl::StrCat(e.schedules[0].bandwidth.At(t))};
      for (size_t k = 0; k < e.policies.size(); ++k) {
        for (size_t v = 0; v < e.schedules.size(); ++v) {
          row.push_back(FormatMeanSe(r.series[v][k][j]));
        }
      }
      report.table.rows.push_back(std::move(row));
    }
    for (size_t v = 0; v < e.schedules.size(); ++v) {
      for (size_t k = 0; k < e.policies.size(); ++k) {
        const MeanSe& a = r.series[v][k][j];
        report.csv.rows.push_back(
            {ts, e.schedules[v].name, absl::StrCat(e.schedules[v].bandwidth.At(t)), e.policies[k],
             absl::StrFormat("%.6f", a.mean), absl::StrFormat("%.6f", a.stderr_)});
      }
    }
  }
  return report;
}

}  // namespace sim
}  // namespace recrawl
