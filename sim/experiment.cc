#include "sim/experiment.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/metrics.h"
#include "sim/parallel.h"
#include "sim/policies.h"
#include "sim/report.h"
#include "sim/rng.h"
#include "sim/simulator.h"

namespace recrawl {
namespace sim {
namespace {

struct Sample {
  double accuracy = 0, wasted = 0, harmonic = 0;
};

// Instance numbers keep settings apart: setting s, repetition r.
uint64_t InstanceNumber(size_t setting, int rep) { return setting * 1000003ull + rep; }

absl::Status RunTask(const Experiment& e, size_t s, int rep, uint64_t seed,
                     std::vector<Sample>& out) {
  const Setting& setting = e.settings[s];
  const uint64_t n = InstanceNumber(s, rep);
  Instance inst = setting.make_instance ? setting.make_instance(seed, n)
                                        : GenerateInstance(setting.world, seed, n);
  const std::vector<policy::PageParams> beliefs =
      setting.make_beliefs ? setting.make_beliefs(inst, seed, n) : inst.pages;
  const double bandwidth = setting.world.bandwidth.rate[0];
  bool simulate = false;
  for (const auto& p : e.policies) simulate |= !IsAnalytic(p);
  Realization world;
  if (simulate) world = Realize(setting.world, inst, seed, n);
  for (size_t k = 0; k < e.policies.size(); ++k) {
    const std::string& name = e.policies[k];
    if (IsAnalytic(name)) {
      absl::StatusOr<double> a = AnalyticAccuracy(name, inst.pages, bandwidth);
      if (!a.ok()) return a.status();
      out[k] = {*a, 0, 0};
      continue;
    }
    absl::StatusOr<std::unique_ptr<Scheduler>> sched = MakeScheduler(name, beliefs, bandwidth);
    if (!sched.ok()) return sched.status();
    CrawlLog log = RunScheduler(world, static_cast<int>(inst.pages.size()), **sched);
    RunMetrics m = Evaluate(inst, world, log, seed, n);
    out[k] = {m.accuracy(), m.wasted_share(), m.harmonic_cost()};
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExperimentResult> RunExperiment(const Experiment& e, const RunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const size_t num_settings = e.settings.size(), num_policies = e.policies.size();
  // samples[setting][rep][policy]
  std::vector<std::vector<std::vector<Sample>>> samples(
      num_settings, std::vector<std::vector<Sample>>(o.reps, std::vector<Sample>(num_policies)));
  // Largest settings first so that the threads finish together.
  std::vector<std::pair<size_t, int>> tasks;
  std::vector<size_t> order(num_settings);
  for (size_t s = 0; s < num_settings; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return e.settings[a].world.num_pages > e.settings[b].world.num_pages;
  });
  for (size_t s : order) {
    for (int r = 0; r < o.reps; ++r) tasks.emplace_back(s, r);
  }
  absl::Status status = ForEachTask(tasks.size(), o.threads, [&](size_t t) {
    const auto [s, r] = tasks[t];
    return RunTask(e, s, r, o.seed, samples[s][r]);
  });
  if (!status.ok()) return status;

  ExperimentResult result;
  result.cells.assign(num_settings, std::vector<Cell>(num_policies));
  std::vector<double> accuracy(o.reps);
  for (size_t s = 0; s < num_settings; ++s) {
    for (size_t k = 0; k < num_policies; ++k) {
      double wasted = 0, harmonic = 0;
      for (int r = 0; r < o.reps; ++r) {
        const Sample& x = samples[s][r][k];
        accuracy[r] = x.accuracy;
        wasted += x.wasted;
        harmonic += x.harmonic;
      }
      const MeanSe a = Summarize(accuracy);
      Cell& c = result.cells[s][k];
      c.mean = a.mean;
      c.stderr_ = a.stderr_;
      c.wasted_share = wasted / o.reps;
      c.harmonic_cost = harmonic / o.reps;
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void PrintMarkdown(const Experiment& e, const ExperimentResult& r, std::ostream& out) {
  Table t;
  t.header = e.columns;
  t.header.insert(t.header.end(), e.policies.begin(), e.policies.end());
  for (size_t s = 0; s < e.settings.size(); ++s) {
    std::vector<std::string> row = e.settings[s].values;
    for (const Cell& c : r.cells[s]) row.push_back(FormatMeanSe({c.mean, c.stderr_, 1}));
    t.rows.push_back(std::move(row));
  }
  PrintMarkdownTable(t, out);
}

absl::Status WriteCsv(const Experiment& e, const ExperimentResult& r, const std::string& path) {
  Table t;
  t.header = e.columns;
  for (const char* c : {"policy", "accuracy", "stderr", "wasted_share", "harmonic_cost"}) {
    t.header.push_back(c);
  }
  for (size_t s = 0; s < e.settings.size(); ++s) {
    for (size_t k = 0; k < e.policies.size(); ++k) {
      const Cell& c = r.cells[s][k];
      std::vector<std::string> row = e.settings[s].values;
      row.push_back(e.policies[k]);
      for (double v : {c.mean, c.stderr_, c.wasted_share, c.harmonic_cost}) {
        row.push_back(absl::StrFormat("%.6f", v));
      }
      t.rows.push_back(std::move(row));
    }
  }
  return WriteCsvTable(t, path);
}

absl::Status WritePlot(const Experiment& e, const ExperimentResult& r, const std::string& path) {
  // The last column is the x axis; settings that differ in the columns
  // before it (e.g. the shards experiment's world) get lines of their own.
  Plot plot;
  plot.title = e.title;
  plot.xlabel = e.columns.back();
  plot.ylabel = "accuracy";
  plot.log_x = plot.xlabel == "m";
  std::vector<std::string> groups;  // in order of first appearance
  std::vector<size_t> group_of(e.settings.size());
  for (size_t s = 0; s < e.settings.size(); ++s) {
    const std::vector<std::string>& v = e.settings[s].values;
    const std::string group = absl::StrJoin(v.begin(), v.end() - 1, ", ");
    auto it = std::find(groups.begin(), groups.end(), group);
    group_of[s] = it - groups.begin();
    if (it == groups.end()) groups.push_back(group);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t k = 0; k < e.policies.size(); ++k) {
      PlotLine line;
      line.title =
          groups[g].empty() ? e.policies[k] : absl::StrCat(e.policies[k], " (", groups[g], ")");
      for (size_t s = 0; s < e.settings.size(); ++s) {
        if (group_of[s] != g) continue;
        double x;
        if (!absl::SimpleAtod(e.settings[s].values.back(), &x)) {
          return absl::InternalError(
              absl::StrCat("--plot: setting '", e.settings[s].values.back(), "' is not a number"));
        }
        line.x.push_back(x);
        line.y.push_back(r.cells[s][k].mean);
        line.err.push_back(r.cells[s][k].stderr_);
      }
      plot.lines.push_back(std::move(line));
    }
  }
  return DrawPlot(plot, path);
}

}  // namespace sim
}  // namespace recrawl
