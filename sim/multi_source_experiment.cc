#include "sim/multi_source_experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/metrics.h"
#include "sim/multi_source_scheduler.h"
#include "sim/parallel.h"

namespace recrawl {
namespace sim {
namespace {

struct MeanError {
  double mean = 0.0;
  double stderr_ = 0.0;
};

MeanError Summarise(const std::vector<double>& x) {
  MeanError out;
  if (x.empty()) return out;
  double sum = 0.0, sum_sq = 0.0;
  for (double v : x) sum += v;
  out.mean = sum / x.size();
  for (double v : x) sum_sq += (v - out.mean) * (v - out.mean);
  if (x.size() > 1) out.stderr_ = std::sqrt(sum_sq / (x.size() - 1) / x.size());
  return out;
}

constexpr const char* kReference = "GREEDY-NCIS-MERGED";

}  // namespace

absl::Status CheckPolicyNames(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    bool known = false;
    for (const MultiSourcePolicy& p : MultiSourcePolicies()) known = known || p.name == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown policy '", name, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<MultiSourceResults> RunMultiSourceExperiment(
    const MultiSourceExperimentOptions& options) {
  if (options.reps < 1) return absl::InvalidArgumentError("reps must be at least 1");
  MultiSourceResults results;
  results.num_pages = options.num_pages;
  std::vector<MultiSourcePolicy> policies;
  if (absl::Status s = CheckPolicyNames(options.policies); !s.ok()) return s;
  for (const MultiSourcePolicy& p : MultiSourcePolicies()) {
    if (options.policies.empty() || p.name == kReference ||
        std::find(options.policies.begin(), options.policies.end(), p.name) !=
            options.policies.end()) {
      policies.push_back(p);
    }
  }
  for (const MultiSourcePolicy& p : policies) results.policies.push_back(p.name);
  for (int m : options.num_pages) {
    if (m < 1) return absl::InvalidArgumentError("num_pages must be at least 1");
    MultiSourceWorldConfig world = options.world;
    world.num_pages = m;
    std::vector<std::vector<double>> accuracy(policies.size(), std::vector<double>(options.reps));
    std::vector<std::vector<double>> wasted = accuracy;
    absl::Status status = ForEachTask(options.reps, options.threads, [&](size_t rep) {
      const MultiSourceInstance instance = GenerateMultiSourceInstance(world, options.seed, rep);
      const MultiSourceRealization realization =
          RealizeMultiSource(world, instance, options.seed, rep);
      for (size_t k = 0; k < policies.size(); ++k) {
        absl::StatusOr<CrawlLog> log =
            RunMultiSource(instance, realization, policies[k].view, world.pages_per_host);
        if (!log.ok()) return log.status();
        const RunMetrics metrics =
            Evaluate(instance.merged, realization.world, *log, options.seed, rep);
        accuracy[k][rep] = metrics.accuracy();
        wasted[k][rep] = metrics.wasted_share();
      }
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    results.accuracy.push_back(std::move(accuracy));
    results.wasted_share.push_back(std::move(wasted));
  }
  return results;
}

void WriteMultiSourceTable(const MultiSourceResults& results, std::ostream& out) {
  size_t reference = 0;
  for (size_t k = 0; k < results.policies.size(); ++k) {
    if (results.policies[k] == kReference) reference = k;
  }
  out << "| m | policy | accuracy | vs " << kReference << " (paired) | wasted crawls |\n";
  out << "|---|---|---|---|---|\n";
  for (size_t i = 0; i < results.num_pages.size(); ++i) {
    for (size_t k = 0; k < results.policies.size(); ++k) {
      const std::vector<double>& acc = results.accuracy[i][k];
      std::vector<double> diff(acc.size());
      for (size_t r = 0; r < acc.size(); ++r) {
        diff[r] = acc[r] - results.accuracy[i][reference][r];
      }
      const MeanError a = Summarise(acc);
      const MeanError d = Summarise(diff);
      const MeanError w = Summarise(results.wasted_share[i][k]);
      out << absl::StrFormat("| %d | %s | %.4f ± %.4f | %+.4f ± %.4f | %.3f |\n",
                             results.num_pages[i], results.policies[k], a.mean, a.stderr_, d.mean,
                             d.stderr_, w.mean);
    }
  }
}

void WriteMultiSourceCsv(const MultiSourceResults& results, std::ostream& out) {
  out << "m,policy,rep,accuracy,wasted_share\n";
  for (size_t i = 0; i < results.num_pages.size(); ++i) {
    for (size_t k = 0; k < results.policies.size(); ++k) {
      for (size_t r = 0; r < results.accuracy[i][k].size(); ++r) {
        out << absl::StrFormat("%d,%s,%d,%.6f,%.6f\n", results.num_pages[i], results.policies[k], r,
                               results.accuracy[i][k][r], results.wasted_share[i][k][r]);
      }
    }
  }
}

}  // namespace sim
}  // namespace recrawl
