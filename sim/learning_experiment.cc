#include "sim/learning_experiment.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/parallel.h"
#include "sim/policies.h"
#include "sim/simulator.h"
#include "sim/windowed_accuracy.h"

namespace recrawl {
namespace sim {
namespace {

constexpr int kSemiPages = 10000;

// Instance numbers keep settings apart, as in experiment.cc.
uint64_t InstanceNumber(size_t setting, int rep) { return setting * 1000003ull + rep; }

// Share of the requests in (from, to] served fresh; NaN without requests.
double WindowAccuracy(const RequestTimeline& r, double from, double to) {
  const auto lo = std::upper_bound(r.times.begin(), r.times.end(), from) - r.times.begin();
  const auto hi = std::upper_bound(r.times.begin(), r.times.end(), to) - r.times.begin();
  if (hi <= lo) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(r.fresh_before[hi] - r.fresh_before[lo]) / (hi - lo);
}

// samples[window][policy] of one repetition.
using RepSamples = std::vector<std::vector<double>>;

absl::Status RunRep(const LearningExperiment& e, size_t s, int rep, uint64_t seed,
                    RepSamples& out) {
  const LearningSetting& setting = e.settings[s];
  const uint64_t n = InstanceNumber(s, rep);
  Instance inst = setting.make_instance ? setting.make_instance(seed, n)
                                        : GenerateInstance(setting.config, seed, n);
  AddHostStructure(setting.hosts, seed, n, &inst);
  const Realization world = Realize(setting.config, inst, seed, n);
  const int m = static_cast<int>(inst.pages.size());
  const auto windows = LearningWindows(e, setting);
  out.assign(windows.size(), std::vector<double>(e.policies.size()));
  for (size_t k = 0; k < e.policies.size(); ++k) {
    absl::StatusOr<std::unique_ptr<Scheduler>> sched =
        MakeScheduler(e.policies[k], inst.pages, setting.config.bandwidth.rate[0],
                      ValueSchedulerOptions::Argmax::kLazyBound, inst.host);
    if (!sched.ok()) return sched.status();
    const CrawlLog log = RunScheduler(world, m, **sched);
    const RequestTimeline requests = CollectRequests(inst, world, log, seed, n);
    for (size_t w = 0; w < windows.size(); ++w) {
      out[w][k] = WindowAccuracy(requests, windows[w].first, windows[w].second);
    }
  }
  return absl::OkStatus();
}

int IndexOf(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

std::string GapName(const std::pair<std::string, std::string>& g) {
  return absl::StrCat(g.first, " - ", g.second);
}

}  // namespace

absl::StatusOr<LearningExperiment> LearnExperiment(const std::vector<std::string>& worlds,
                                                   const ExperimentOverrides& o,
                                                   const HostStructure& hosts) {
  if (absl::Status s = CheckHostStructure(hosts); !s.ok()) return s;
  LearningExperiment e;
  if (!o.policies.empty()) {
    e.policies = o.policies;
  } else if (hosts.enabled()) {
    e.policies = {"GREEDY-NCIS", "GREEDY-NCIS-LEARN", "GREEDY-NCIS-LEARN-HOST", "GREEDY-NCIS-PRIOR",
                  "GREEDY",      "GREEDY-LEARN"};
  } else {
    e.policies = {"GREEDY-NCIS", "GREEDY-NCIS-LEARN", "GREEDY-NCIS-PRIOR", "GREEDY",
                  "GREEDY-LEARN"};
  }
  for (const std::string& p : e.policies) {
    if (IsHostPooledLearner(p) && !hosts.enabled()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--policies: ", p, " needs host structure (--pages_per_host)"));
    }
    if (IsAnalytic(p)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--policies: ", p, " is analytic; learn simulates policies only"));
    }
  }
  for (const std::string& world : worlds) {
    if (world == "fig6") {
      ExperimentOverrides fig6 = o;  // m and horizon: fig6's unless overridden
      fig6.policies = {"GREEDY"};
      absl::StatusOr<Experiment> paper = PaperExperiment("fig6", fig6);
      if (!paper.ok()) return paper.status();
      for (const Setting& s : paper->settings) e.settings.push_back({"fig6", s.world, nullptr, {}});
    } else if (world == "semi") {
      for (int m : o.m.empty() ? std::vector<int>{kSemiPages} : o.m) {
        e.settings.push_back({"semi",
                              SemiWorld(m, o.horizon),
                              [m](uint64_t seed, uint64_t n) { return SemiInstance(m, seed, n); },
                              {}});
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--world: unknown world '", world, "' (fig6 or semi)"));
    }
  }
  for (LearningSetting& s : e.settings) s.hosts = hosts;
  for (const std::string& learner : e.policies) {
    for (const std::string suffix : {"-LEARN", "-LEARN-HOST"}) {
      if (learner.size() <= suffix.size() ||
          learner.compare(learner.size() - suffix.size(), suffix.size(), suffix) != 0) {
        continue;
      }
      const std::string reference = learner.substr(0, learner.size() - suffix.size());
      if (IndexOf(e.policies, reference) >= 0) e.gaps.emplace_back(reference, learner);
    }
    // A variant of the host prior's weights: against the true parameters
    // and against the default weights, paired.
    if (ParseHostPriorWeights(learner).has_value()) {
      if (IndexOf(e.policies, "GREEDY-NCIS") >= 0) e.gaps.emplace_back("GREEDY-NCIS", learner);
      if (IndexOf(e.policies, "GREEDY-NCIS-LEARN-HOST") >= 0) {
        e.gaps.emplace_back(learner, "GREEDY-NCIS-LEARN-HOST");
      }
    }
  }
  e.title = absl::StrFormat(
      "Learning: true parameters vs learnt online from the population prior; "
      "accuracy over the whole run and its last %g%%",
      100 * e.last_share);
  if (hosts.enabled()) {
    absl::StrAppendFormat(&e.title,
                          "; host structure: %g pages a host on average, Zipf exponent %g, "
                          "noise %g",
                          hosts.mean_pages_per_host, hosts.zipf_exponent, hosts.noise);
  }
  return e;
}

std::vector<std::pair<double, double>> LearningWindows(const LearningExperiment& e,
                                                       const LearningSetting& s) {
  const double h = s.config.horizon;
  std::vector<std::pair<double, double>> out = {{0.0, h}, {(1 - e.last_share) * h, h}};
  for (int k = 0; k < e.series_windows; ++k) {
    out.emplace_back(h * k / e.series_windows, h * (k + 1) / e.series_windows);
  }
  return out;
}

absl::StatusOr<LearningResult> RunLearningExperiment(const LearningExperiment& e,
                                                     const RunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const size_t num_settings = e.settings.size();
  std::vector<std::vector<RepSamples>> samples(num_settings, std::vector<RepSamples>(o.reps));
  // Largest settings first so that the threads finish together.
  std::vector<size_t> order(num_settings);
  for (size_t s = 0; s < num_settings; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return e.settings[a].config.num_pages > e.settings[b].config.num_pages;
  });
  std::vector<std::pair<size_t, int>> tasks;
  for (size_t s : order) {
    for (int r = 0; r < o.reps; ++r) tasks.emplace_back(s, r);
  }
  absl::Status status = ForEachTask(tasks.size(), o.threads, [&](size_t t) {
    const auto [s, r] = tasks[t];
    return RunRep(e, s, r, o.seed, samples[s][r]);
  });
  if (!status.ok()) return status;

  LearningResult result;
  result.accuracy.resize(num_settings);
  result.gap.resize(num_settings);
  std::vector<double> x(o.reps);
  for (size_t s = 0; s < num_settings; ++s) {
    const size_t num_windows = LearningWindows(e, e.settings[s]).size();
    result.accuracy[s].assign(num_windows, {});
    result.gap[s].assign(num_windows, {});
    for (size_t w = 0; w < num_windows; ++w) {
      for (size_t k = 0; k < e.policies.size(); ++k) {
        for (int r = 0; r < o.reps; ++r) x[r] = samples[s][r][w][k];
        result.accuracy[s][w].push_back(Summarize(x));
      }
      for (const auto& g : e.gaps) {
        const int a = IndexOf(e.policies, g.first), b = IndexOf(e.policies, g.second);
        for (int r = 0; r < o.reps; ++r) x[r] = samples[s][r][w][a] - samples[s][r][w][b];
        result.gap[s][w].push_back(Summarize(x));
      }
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

Report LearningReport(const LearningExperiment& e, const LearningResult& r, const RunOptions& o) {
  Report report;
  report.title = e.title;
  report.footer = RunFooter(o.reps, o.seed, o.threads, r.seconds);
  report.table.header = {"m", "world", "R", "requests in"};
  report.table.header.insert(report.table.header.end(), e.policies.begin(), e.policies.end());
  for (const auto& g : e.gaps) report.table.header.push_back(GapName(g));
  report.csv.header = {"m", "world", "horizon", "from", "to", "policy", "accuracy", "stderr"};
  report.plot.title = e.gaps.empty() ? "Learning: accuracy per time window"
                                     : "Learning: true-parameter minus learnt accuracy per window";
  report.plot.xlabel = "middle of the window / horizon";
  report.plot.ylabel =
      e.gaps.empty() ? "accuracy in the window" : "accuracy gap in the window (paired)";
  for (size_t s = 0; s < e.settings.size(); ++s) {
    const LearningSetting& setting = e.settings[s];
    const auto windows = LearningWindows(e, setting);
    const std::string m = absl::StrCat(setting.config.num_pages);
    const std::string horizon = absl::StrFormat("%g", setting.config.horizon);
    auto span = [&](size_t w) {
      return absl::StrFormat("(%g, %g]", windows[w].first, windows[w].second);
    };
    for (size_t w = 0; w < 2; ++w) {
      std::vector<std::string> row = {
          m, setting.world, absl::StrFormat("%g", setting.config.bandwidth.rate[0]), span(w)};
      for (const MeanSe& a : r.accuracy[s][w]) row.push_back(FormatMeanSe(a));
      for (const MeanSe& g : r.gap[s][w]) row.push_back(FormatMeanSe(g));
      report.table.rows.push_back(std::move(row));
    }
    for (size_t w = 0; w < windows.size(); ++w) {
      auto csv_row = [&](const std::string& policy, const MeanSe& a) {
        report.csv.rows.push_back(
            {m, setting.world, horizon, absl::StrFormat("%g", windows[w].first),
             absl::StrFormat("%g", windows[w].second), policy, absl::StrFormat("%.6f", a.mean),
             absl::StrFormat("%.6f", a.stderr_)});
      };
      for (size_t k = 0; k < e.policies.size(); ++k) csv_row(e.policies[k], r.accuracy[s][w][k]);
      for (size_t g = 0; g < e.gaps.size(); ++g) csv_row(GapName(e.gaps[g]), r.gap[s][w][g]);
    }
    // One line per (gap, setting): the question is the gap, and one line
    // per policy and setting is too many to read. Without gaps, the
    // policies' accuracies.
    const bool gaps = !e.gaps.empty();
    for (size_t k = 0; k < (gaps ? e.gaps.size() : e.policies.size()); ++k) {
      PlotLine line;
      line.title =
          absl::StrCat(gaps ? GapName(e.gaps[k]) : e.policies[k], ", ", setting.world, " m=", m);
      for (size_t w = 2; w < windows.size(); ++w) {
        const MeanSe& y = gaps ? r.gap[s][w][k] : r.accuracy[s][w][k];
        line.x.push_back((windows[w].first + windows[w].second) / 2 / setting.config.horizon);
        line.y.push_back(y.mean);
        line.err.push_back(y.stderr_);
      }
      report.plot.lines.push_back(std::move(line));
    }
  }
  return report;
}

}  // namespace sim
}  // namespace recrawl
