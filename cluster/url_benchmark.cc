// Cost of identifying a URL on the signal path: normalising it (or finding
// it already normal) and taking its id. A shard ingesting 300K signals/s has ~3 µs per signal in
// all.
//
//   bazel run -c opt //cluster:url_benchmark
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "cluster/url.h"
#include "cluster/url_id.h"

namespace recrawl {
namespace cluster {
namespace {

std::vector<std::string> Urls() {
  std::vector<std::string> urls;
  for (int i = 0; i < 1024; ++i) {
    urls.push_back(absl::StrCat("https://www.site", i % 97, ".com/section", i % 13, "/page-", i,
                                ".html?id=", i * 7919));
  }
  return urls;
}

void BM_NormalizeUrl(benchmark::State& state) {
  const std::vector<std::string> urls = Urls();
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<NormalizedUrl> url = NormalizeUrl(urls[i++ % urls.size()]);
    benchmark::DoNotOptimize(url);
  }
}
BENCHMARK(BM_NormalizeUrl);

void BM_NormalFormHost(benchmark::State& state) {
  const std::vector<std::string> urls = Urls();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(NormalFormHost(urls[i++ % urls.size()]));
  }
}
BENCHMARK(BM_NormalFormHost);

void BM_NormalizeUrlWithDotSegmentsAndEscapes(benchmark::State& state) {
  const std::string url = "HTTP://WWW.Example.COM:80/a/./b/../c/%7euser/b%c3%bccher?q=%41#frag";
  for (auto _ : state) {
    absl::StatusOr<NormalizedUrl> normalized = NormalizeUrl(url);
    benchmark::DoNotOptimize(normalized);
  }
}
BENCHMARK(BM_NormalizeUrlWithDotSegmentsAndEscapes);

void BM_UrlIdOf(benchmark::State& state) {
  const std::vector<std::string> urls = Urls();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(UrlIdOf(urls[i++ % urls.size()]));
  }
}
BENCHMARK(BM_UrlIdOf);

}  // namespace
}  // namespace cluster
}  // namespace recrawl
