// One crawl-value evaluation per policy (targets: GREEDY <= 20 ns,
// APPROX-2 <= 60 ns, exact NCIS <= 250 ns median when ⌊ι/β⌋ <= 10 and <= 5 µs
// at λ=0.01, Δ=1, ν=1, ι=10^4). Run (one line):
//   bazel run -c opt //policy:crawl_value_benchmark --
//     --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <cmath>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "policy/crawl_policy.h"
#include "policy/crawl_value.h"
#include "policy/page_model.h"

namespace recrawl {
namespace policy {
namespace {

PageModel Make(double mu, double delta, double lambda, double nu) {
  return *PageModel::Create({mu, delta, lambda, nu});
}

// A typical page of the paper's fig. 6 setting: Δ = 1, λ = 0.5, ν = 0.3, so
// β ≈ 1.96; the benchmark argument is ⌊ι/β⌋ (the number of extra terms).
const PageModel& TypicalPage() {
  static const PageModel page = Make(1.0, 1.0, 0.5, 0.3);
  return page;
}

double IotaWithTerms(const PageModel& page, int64_t terms) {
  return (static_cast<double>(terms) + 0.5) * page.beta();
}

void BM_Greedy(benchmark::State& state) {
  const PageModel belief = TypicalPage().WithoutSignals();
  double tau = IotaWithTerms(TypicalPage(), state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(tau);
    benchmark::DoNotOptimize(NcisValue(belief, tau, 0));
  }
}
BENCHMARK(BM_Greedy)->Arg(0)->Arg(5);

void BM_GreedyCis(benchmark::State& state) {
  const PageModel belief = TypicalPage().WithoutFalseSignals();
  double tau = IotaWithTerms(TypicalPage(), state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(tau);
    benchmark::DoNotOptimize(NcisValue(belief, tau, 0));
  }
}
BENCHMARK(BM_GreedyCis)->Arg(0)->Arg(5);

void BM_Approx(benchmark::State& state) {
  const int terms = static_cast<int>(state.range(0));
  double tau = IotaWithTerms(TypicalPage(), state.range(1));
  for (auto _ : state) {
    benchmark::DoNotOptimize(tau);
    benchmark::DoNotOptimize(NcisValue(TypicalPage(), tau, 0, terms));
  }
}
BENCHMARK(BM_Approx)->Args({1, 5})->Args({2, 5})->Args({2, 10});

void BM_NcisExact(benchmark::State& state) {
  double tau = IotaWithTerms(TypicalPage(), state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(tau);
    benchmark::DoNotOptimize(NcisValue(TypicalPage(), tau, 0));
  }
}
BENCHMARK(BM_NcisExact)->DenseRange(0, 10, 1);

// ⌊ι/β⌋ ≈ 10^6 (ι = 10^4) and ≈ 10^7 (ι = 10^5).
void BM_NcisExactHugeTermCount(benchmark::State& state) {
  const PageModel page = Make(1.0, 1.0, 0.01, 1.0);
  double iota = static_cast<double>(state.range(0));
  state.counters["floor_iota_over_beta"] = std::floor(iota / page.beta());
  for (auto _ : state) {
    benchmark::DoNotOptimize(iota);
    benchmark::DoNotOptimize(NcisValue(page, iota, 0));
  }
}
BENCHMARK(BM_NcisExactHugeTermCount)->Arg(10000)->Arg(100000);

// Pages of the fig. 6 setting (Δ ~ U[0,1], λ ~ Beta(0.25, 0.25),
// ν ~ U[0.1, 0.6]) in states a scheduler sees (τ ~ U[0, 5/Δ], n ~ 0..3),
// cycled so the mix, not one branch, is timed.
void BM_NcisFig6Mix(benchmark::State& state) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::gamma_distribution<double> g(0.25, 1.0);
  struct Item {
    PageModel page;
    double tau;
    int64_t n;
  };
  std::vector<Item> items;
  for (int k = 0; k < 4096; ++k) {
    const double a = g(rng), b = g(rng);
    const double delta = 0.01 + 0.99 * u(rng);
    const PageModel page = Make(u(rng), delta, a / (a + b), 0.1 + 0.5 * u(rng));
    items.push_back({page, 5.0 * u(rng) / delta, static_cast<int64_t>(4 * u(rng))});
  }
  const int terms = static_cast<int>(state.range(0));
  size_t i = 0;
  for (auto _ : state) {
    const Item& it = items[i++ & 4095];
    benchmark::DoNotOptimize(NcisValue(it.page, it.tau, it.n, terms));
  }
}
BENCHMARK(BM_NcisFig6Mix)->Arg(0)->Arg(1)->Arg(2);

}  // namespace
}  // namespace policy
}  // namespace recrawl
