// multi_source_sim: the per-source trust experiment
// (sim/multi_source_experiment.h). Prints the markdown table of
// docs/results.md, "Per-source trust", and optionally the long-form CSV.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "sim/multi_source_experiment.h"

ABSL_FLAG(std::string, m, "100,1000,10000", "comma-separated page counts");
ABSL_FLAG(int, reps, 20, "repetitions (instances) per page count");
ABSL_FLAG(uint64_t, seed, 1, "random seed");
ABSL_FLAG(int, threads, 2, "worker threads (results do not depend on it)");
ABSL_FLAG(double, bandwidth, 100.0, "crawl slots per time unit R");
ABSL_FLAG(double, horizon, 1000.0, "simulated time");
ABSL_FLAG(int, pages_per_host, 10, "pages per host (they share source parameters)");
ABSL_FLAG(std::string, world, "default",
          "sources per host: 'default' (a CDN and a CMS's sitemap) or 'cms-noise' (a CDN and "
          "a sitemap whose lastmods are pure noise, λ = 0)");
ABSL_FLAG(std::string, csv, "", "write the per-repetition results to this CSV");
ABSL_FLAG(std::string, policies, "",
          "comma-separated policies to run (empty: all; GREEDY-NCIS-MERGED, the reference, "
          "always runs)");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  recrawl::sim::MultiSourceExperimentOptions o;
  o.num_pages.clear();
  for (absl::string_view m : absl::StrSplit(absl::GetFlag(FLAGS_m), ',', absl::SkipEmpty())) {
    int v;
    if (!absl::SimpleAtoi(m, &v) || v < 1) {
      std::cerr << "--m: bad page count '" << m << "'\n";
      return 2;
    }
    o.num_pages.push_back(v);
  }
  o.policies = absl::StrSplit(absl::GetFlag(FLAGS_policies), ',', absl::SkipEmpty());
  if (absl::Status s = recrawl::sim::CheckPolicyNames(o.policies); !s.ok()) {
    std::cerr << "--policies: " << s.message() << "\n";
    return 2;
  }
  o.reps = absl::GetFlag(FLAGS_reps);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.threads = absl::GetFlag(FLAGS_threads);
  o.world.bandwidth = absl::GetFlag(FLAGS_bandwidth);
  o.world.horizon = absl::GetFlag(FLAGS_horizon);
  o.world.pages_per_host = absl::GetFlag(FLAGS_pages_per_host);
  if (const std::string world = absl::GetFlag(FLAGS_world); world == "cms-noise") {
    o.world.sources = {recrawl::sim::kCdnSource, recrawl::sim::kCmsNoiseSource};
  } else if (world != "default") {
    std::cerr << "--world: unknown world '" << world << "' (default, cms-noise)\n";
    return 2;
  }
  if (!(o.world.bandwidth > 0) || !(o.world.horizon > 0) || o.world.pages_per_host < 1) {
    std::cerr << "--bandwidth and --horizon must be > 0, --pages_per_host >= 1\n";
    return 2;
  }
  absl::StatusOr<recrawl::sim::MultiSourceResults> results =
      recrawl::sim::RunMultiSourceExperiment(o);
  if (!results.ok()) {
    std::cerr << results.status() << "\n";
    return 1;
  }
  recrawl::sim::WriteMultiSourceTable(*results, std::cout);
  if (const std::string csv = absl::GetFlag(FLAGS_csv); !csv.empty()) {
    std::ofstream file(csv);
    recrawl::sim::WriteMultiSourceCsv(*results, file);
    if (!file) {
      std::cerr << "cannot write " << csv << "\n";
      return 1;
    }
  }
  return 0;
}
