#include "sim/experiment.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/metrics.h"
#include "sim/policies.h"
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
  std::atomic<size_t> next{0};
  std::mutex mu;
  absl::Status status;
  auto worker = [&] {
    for (size_t t = next++; t < tasks.size(); t = next++) {
      absl::Status st = RunTask(e, tasks[t].first, tasks[t].second, o.seed,
                                samples[tasks[t].first][tasks[t].second]);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        status = st;
        next = tasks.size();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < std::max(1, o.threads); ++i) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  if (!status.ok()) return status;

  ExperimentResult result;
  result.cells.assign(num_settings, std::vector<Cell>(num_policies));
  for (size_t s = 0; s < num_settings; ++s) {
    for (size_t k = 0; k < num_policies; ++k) {
      double sum = 0, sum2 = 0, wasted = 0, harmonic = 0;
      for (int r = 0; r < o.reps; ++r) {
        const Sample& x = samples[s][r][k];
        sum += x.accuracy;
        sum2 += x.accuracy * x.accuracy;
        wasted += x.wasted;
        harmonic += x.harmonic;
      }
      Cell& c = result.cells[s][k];
      c.mean = sum / o.reps;
      c.stderr_ = o.reps > 1
                      ? std::sqrt(std::max(0.0, sum2 / o.reps - c.mean * c.mean) / (o.reps - 1))
                      : 0.0;
      c.wasted_share = wasted / o.reps;
      c.harmonic_cost = harmonic / o.reps;
    }
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void PrintMarkdown(const Experiment& e, const ExperimentResult& r, std::ostream& out) {
  out << "| " << absl::StrJoin(e.columns, " | ") << " | " << absl::StrJoin(e.policies, " | ")
      << " |\n|";
  for (size_t i = 0; i < e.columns.size() + e.policies.size(); ++i) out << "---|";
  out << "\n";
  for (size_t s = 0; s < e.settings.size(); ++s) {
    out << "| " << absl::StrJoin(e.settings[s].values, " | ") << " |";
    for (const Cell& c : r.cells[s]) {
      out << absl::StrFormat(" %.4f ± %.4f |", c.mean, c.stderr_);
    }
    out << "\n";
  }
}

absl::Status WriteCsv(const Experiment& e, const ExperimentResult& r, const std::string& path) {
  std::ofstream f(path);
  if (!f) return absl::InvalidArgumentError(absl::StrCat("--csv: cannot write ", path));
  f << absl::StrJoin(e.columns, ",") << ",policy,accuracy,stderr,wasted_share,harmonic_cost\n";
  for (size_t s = 0; s < e.settings.size(); ++s) {
    for (size_t k = 0; k < e.policies.size(); ++k) {
      const Cell& c = r.cells[s][k];
      f << absl::StrJoin(e.settings[s].values, ",") << "," << e.policies[k]
        << absl::StrFormat(",%.6f,%.6f,%.6f,%.6f\n", c.mean, c.stderr_, c.wasted_share,
                           c.harmonic_cost);
    }
  }
  return f.good() ? absl::OkStatus()
                  : absl::InternalError(absl::StrCat("--csv: error writing ", path));
}

absl::Status WritePlot(const Experiment& e, const ExperimentResult& r, const std::string& path) {
  const std::string data = path + ".dat";
  {
    std::ofstream f(data);
    if (!f) return absl::InvalidArgumentError(absl::StrCat("--plot: cannot write ", data));
    for (size_t k = 0; k < e.policies.size(); ++k) {
      f << "# " << e.policies[k] << "\n";
      for (size_t s = 0; s < e.settings.size(); ++s) {
        f << e.settings[s].values[0] << " " << r.cells[s][k].mean << " "
          << r.cells[s][k].stderr_ << "\n";
      }
      f << "\n\n";
    }
  }
  const bool log_x = e.columns[0] == "m";
  std::string script = absl::StrCat(
      "set terminal pngcairo size 900,600 noenhanced\nset output '", path, "'\n",
      "set title '", e.title, "'\nset xlabel '", e.columns[0], "'\nset ylabel 'accuracy'\n",
      log_x ? "set logscale x\n" : "", "set key outside right\nset grid\nplot ");
  for (size_t k = 0; k < e.policies.size(); ++k) {
    absl::StrAppend(&script, k ? ", " : "", "'", data, "' index ", k,
                    " using 1:2:3 with yerrorlines title '", e.policies[k], "'");
  }
  script += "\n";
  FILE* p = popen("gnuplot 2>&1", "w");
  if (p == nullptr) return absl::UnavailableError("--plot: cannot run gnuplot");
  fputs(script.c_str(), p);
  const int rc = pclose(p);
  std::remove(data.c_str());
  if (rc != 0) return absl::UnavailableError("--plot: gnuplot failed (is gnuplot-nox installed?)");
  return absl::OkStatus();
}

}  // namespace sim
}  // namespace recrawl
