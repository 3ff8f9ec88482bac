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

// Arguments: hosts; 0 for a router's own cache of 2^14 hosts (what a
// stream or call has alone), 1 for the process's shared HostOwnerCache at
// its default size (what the coordinator's use).
void BM_ShardOf(benchmark::State& state) {
  const std::vector<std::string> urls = UrlsOverHosts(static_cast<int>(state.range(0)));
  HostOwnerCache shared(Routing::kSite, 16);
  ShardRouter router = state.range(1) == 1 ? ShardRouter(&shared) : ShardRouter(Routing::kSite, 16);
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<int> shard = router.ShardOf(urls[i++ % urls.size()]);
    benchmark::DoNotOptimize(shard);
  }
  state.counters["computed_share"] =
      static_cast<double>(router.lookups()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ShardOf)->ArgsProduct({{1000, 10000, 20000, 100000}, {0, 1}});

}  // namespace
}  // namespace cluster
}  // namespace recrawl
