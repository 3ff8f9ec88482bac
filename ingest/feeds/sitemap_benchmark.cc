// Sitemap throughput: parsing a full sitemap (50,000 <url> entries with
// lastmods, about 5 MB), the same inflated from gzip, and a whole poll
// (parse, URL normalisation, lastmod comparison, signals) in MB/s of
// uncompressed XML.
//
//   bazel run -c opt //ingest/feeds:sitemap_benchmark

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "ingest/feeds/gzip.h"
#include "ingest/feeds/sitemap_parser.h"
#include "ingest/feeds/sitemap_poll.h"

namespace recrawl {
namespace feeds {
namespace {

// A urlset of the protocol's maximum entries on one host; lastmods spread
// over a year, some with fractional seconds and offsets.
std::string FullSitemap(int day_offset) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (size_t i = 0; i < kMaxSitemapEntries; ++i) {
    const int day = 1 + static_cast<int>((i * 7 + day_offset) % 28);
    absl::StrAppend(&xml, "  <url>\n    <loc>https://www.example.com/section", i % 37, "/article-",
                    i, ".html</loc>\n    <lastmod>2024-0", 1 + i % 9, "-", day < 10 ? "0" : "", day,
                    "T", 10 + i % 10, ":", 10 + i % 50,
                    ":00.5+01:00</lastmod>\n    <changefreq>daily</changefreq>\n  </url>\n");
  }
  return xml + "</urlset>\n";
}

void BM_ParseSitemap(benchmark::State& state) {
  const std::string xml = FullSitemap(0);
  for (auto _ : state) {
    absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(xml);
    if (!parsed.ok() || parsed->entries.size() != kMaxSitemapEntries) {
      state.SkipWithError("parse failed");
      return;
    }
    benchmark::DoNotOptimize(parsed->entries.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * xml.size()));
  state.counters["xml_bytes"] = static_cast<double>(xml.size());
}
BENCHMARK(BM_ParseSitemap)->Unit(benchmark::kMillisecond);

void BM_InflateAndParseSitemap(benchmark::State& state) {
  const std::string xml = FullSitemap(0);
  const std::string gz = DeflateGzip(xml);
  for (auto _ : state) {
    absl::StatusOr<std::string> inflated = InflateGzip(gz, kMaxSitemapBytes);
    absl::StatusOr<ParsedSitemap> parsed =
        inflated.ok() ? ParseSitemap(*inflated) : inflated.status();
    if (!parsed.ok()) {
      state.SkipWithError("parse failed");
      return;
    }
    benchmark::DoNotOptimize(parsed->entries.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * xml.size()));
  state.counters["gzip_bytes"] = static_cast<double>(gz.size());
}
BENCHMARK(BM_InflateAndParseSitemap)->Unit(benchmark::kMillisecond);

// Whole polls, alternating between two versions of the sitemap: the later
// one moves every lastmod forward (50,000 signals), the earlier one back
// (none).
void BM_PollSitemap(benchmark::State& state) {
  const std::string before = FullSitemap(0);
  const std::string after = FullSitemap(1);
  const absl::Time registered = absl::FromUnixSeconds(1704067200);  // 2024-01-01
  const absl::Time now = absl::FromUnixSeconds(1735689600);         // 2025-01-01
  SitemapPoller poller;
  if (!poller.Register("https://www.example.com/sitemap.xml", registered).ok()) {
    state.SkipWithError("register failed");
    return;
  }
  SitemapResponse response;
  response.status = 200;
  size_t signals = 0, i = 0;
  for (auto _ : state) {
    response.body = (i++ % 2 == 0) ? before : after;
    SitemapPollResult result =
        poller.OnFetched("https://www.example.com/sitemap.xml", response, now);
    signals += result.signals.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * before.size()));
  state.counters["signals_per_poll"] = static_cast<double>(signals) / state.iterations();
  state.counters["tracked_urls"] = static_cast<double>(poller.TrackedUrls());
}
BENCHMARK(BM_PollSitemap)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace feeds
}  // namespace recrawl
