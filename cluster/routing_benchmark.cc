// ShardRouter::ShardOf by the number of distinct hosts a stream meets: the
// router remembers each host's owner up to its capacity, so a stream over
// more hosts than that pays for computing owners (registrable domain,
// routing hash) again.
//
//   bazel run -c opt //cluster:routing_benchmark
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "cluster/routing.h"

namespace recrawl {
namespace cluster {
namespace {

// 2^16 URLs in random order over `hosts` hosts (normal form, as signals
// mostly come).
std::vector<std::string> UrlsOverHosts(int hosts) {
  std::mt19937_64 rng(1);
  std::vector<std::string> urls;
  for (int i = 0; i < (1 << 16); ++i) {
    const uint64_t host = rng() % hosts;
    urls.push_back(absl::StrCat("https://www.site", host, ".example.com/page-", i, ".html"));
  }
  return urls;
}

void BM_ShardOf(benchmark::State& state) {
  const std::vector<std::string> urls = UrlsOverHosts(static_cast<int>(state.range(0)));
  ShardRouter router(Routing::kSite, 16);
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<int> shard = router.ShardOf(urls[i++ % urls.size()]);
    benchmark::DoNotOptimize(shard);
  }
  state.counters["computed_share"] =
      static_cast<double>(router.lookups()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ShardOf)->Arg(1000)->Arg(10000)->Arg(20000)->Arg(100000);

// The same through a cache shared by the process (HostOwnerCache, as the
// coordinator uses), at its default size.
void BM_ShardOfShared(benchmark::State& state) {
  const std::vector<std::string> urls = UrlsOverHosts(static_cast<int>(state.range(0)));
  HostOwnerCache owners(Routing::kSite, 16);
  ShardRouter router(&owners);
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<int> shard = router.ShardOf(urls[i++ % urls.size()]);
    benchmark::DoNotOptimize(shard);
  }
  state.counters["computed_share"] =
      static_cast<double>(owners.computed()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ShardOfShared)->Arg(1000)->Arg(10000)->Arg(20000)->Arg(100000);

}  // namespace
}  // namespace cluster
}  // namespace recrawl
