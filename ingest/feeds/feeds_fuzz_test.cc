// Drives the fuzz target (feeds_fuzz_target.cc) with deterministic inputs in
// every test run: well-formed seeds of each kind, the same seeds mutated
// byte-wise, and raw random bytes. libFuzzer explores further from the same
// entry point (shard/build_fuzzer.sh).

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ingest/feeds/gzip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace recrawl {
namespace feeds {
namespace {

const std::string kUrlset = R"(<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://e.com/a</loc><lastmod>2024-06-01T11:00:00+00:00</lastmod></url>
<url><loc>https://e.com/b</loc><lastmod>2025-01-01</lastmod></url>
<url><loc>https://other.com/c</loc><lastmod>2024-05-31</lastmod></url>
<url><loc>/relative</loc><lastmod>2024-05-31</lastmod></url>
</urlset>)";
const std::string kIndex = R"(<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://e.com/s1.xml</loc><lastmod>2024-06</lastmod></sitemap>
</sitemapindex>)";
const std::string kAtom = R"(<feed xmlns="http://www.w3.org/2005/Atom">
<entry><link href="https://blog.example/p/1"/><link rel="alternate" href="../p/2"/></entry>
</feed>)";
const std::string kRss = R"(<rss version="2.0"><channel>
<item><link>https://blog.example/p/3</link></item><item><guid>https://blog.example/p/4</guid></item>
</channel></rss>)";

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  for (const std::string& xml : {kUrlset, kIndex, kAtom, kRss}) {
    for (char kind : {0, 1, 2, 4, 5}) {
      seeds.push_back(std::string(1, kind) + (kind == 1 ? DeflateGzip(xml) : xml));
    }
  }
  for (const char* t : {"2024", "2024-06-01T12:00:00.5+01:00", "2024-02-30", "9999-12-31T23:59Z"}) {
    seeds.push_back(std::string(1, 3) + t);
  }
  return seeds;
}

void RunInput(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(FeedsFuzzTest, Seeds) {
  for (const std::string& seed : Seeds()) RunInput(seed);
}

TEST(FeedsFuzzTest, MutatedSeeds) {
  std::mt19937 rng(20261126);
  for (const std::string& seed : Seeds()) {
    for (int i = 0; i < 40; ++i) {
      std::string input = seed;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits && input.size() > 1; ++e) {
        const size_t at = 1 + rng() % (input.size() - 1);
        switch (rng() % 3) {
          case 0:
            input[at] = static_cast<char>(rng());
            break;
          case 1:
            input.erase(at, 1 + rng() % 16);
            break;
          case 2:
            input.insert(at, input.substr(1 + rng() % (input.size() - 1), 1 + rng() % 32));
            break;
        }
      }
      RunInput(input);
    }
  }
}

TEST(FeedsFuzzTest, RandomBytes) {
  std::mt19937 rng(7);
  for (int i = 0; i < 600; ++i) {
    std::string input(rng() % 256, '\0');
    for (char& c : input) c = static_cast<char>(rng());
    RunInput(input);
  }
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
