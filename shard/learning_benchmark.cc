// Fit's cost on the states a shard's pages reach: a page with n crawl
// outcomes of a typical model (Δ = 1, λ = 0.5, ν = 0.3, crawled about once
// per mean change interval), fitted with the default options as a report
// does (shard_crawls.cc).
#include <cmath>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "shard/learning.h"

namespace recrawl {
namespace shard {
namespace {

// States after 1..n outcomes of one simulated page, each a report's input.
std::vector<LearningState> States(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> interval(1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double delta = 1.0, recall = 0.5, false_rate = 0.3;
  policy::PageParams prior;
  prior.importance = 1.0;
  prior.change_rate = 0.5;
  prior.recall = 0.3;
  prior.false_rate = 0.1;
  LearningState s = InitLearning(prior);
  std::vector<LearningState> out;
  while (static_cast<int>(out.size()) < n) {
    const double tau = 0.2 + 2.0 * u(rng);
    const bool changed = u(rng) < -std::expm1(-delta * tau);
    std::poisson_distribution<int> false_signals(false_rate * tau);
    int signals = false_signals(rng);
    if (changed && u(rng) < recall) ++signals;
    if (LearnFromCrawl(tau, signals, changed, 0.0, &s)) out.push_back(s);
  }
  return out;
}

void BM_Fit(benchmark::State& state) {
  const std::vector<LearningState> states = States(static_cast<int>(state.range(0)), 1);
  const LearningOptions options;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(Fit(states[i], 1.0, options));
    if (++i == states.size()) i = 0;
  }
}
BENCHMARK(BM_Fit)->Arg(4)->Arg(16)->Arg(64);

}  // namespace
}  // namespace shard
}  // namespace recrawl
