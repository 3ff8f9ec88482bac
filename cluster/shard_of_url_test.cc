#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cluster/routing.h"
#include "cluster/url_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace cluster {
namespace {

using ::testing::HasSubstr;

// A site's URLs go to one shard whatever their host, as the URL or host
// was given (normalised first).
TEST(ShardOfUrlTest, ASitesUrlsGoToOneShard) {
  const int want = ShardOfHost("example.com", 7);
  EXPECT_EQ(*ShardOfUrl("https://news.example.com/a", Routing::kSite, 7), want);
  EXPECT_EQ(*ShardOfUrl("HTTP://WWW.NEWS.example.com:80/b?x#y", Routing::kSite, 7), want);
  EXPECT_EQ(*ShardOfUrl("https://num25.news.example.com/c", Routing::kSite, 7), want);
  EXPECT_EQ(*ShardOfHostName("Cdn.News.Example.COM.", Routing::kSite, 7), want);
}

TEST(ShardOfUrlTest, HostRoutingGoesByTheHost) {
  EXPECT_EQ(*ShardOfUrl("https://www.news.example/a", Routing::kHost, 7),
            ShardOfHost("www.news.example", 7));
  EXPECT_EQ(*ShardOfHostName("WWW.News.Example.", Routing::kHost, 7),
            ShardOfHost("www.news.example", 7));
}

TEST(ShardOfUrlTest, BadInputNamesTheField) {
  EXPECT_THAT(ShardOfUrl("gopher://x", Routing::kSite, 3).status().message(), HasSubstr("url"));
  EXPECT_THAT(ShardOfHostName("bad host!", Routing::kSite, 3).status().message(),
              HasSubstr("host"));
}

// The router routes as ShardOfUrl, whether a host's owner is remembered,
// computed afresh, or forgotten when the cache filled up; a host met again
// costs no lookup while it is remembered, and at most about max_hosts are.
TEST(ShardRouterTest, RoutesAsShardOfUrlAndLooksUpEachHostOnce) {
  for (Routing routing : {Routing::kSite, Routing::kHost}) {
    ShardRouter small(routing, 7, /*max_hosts=*/64);  // one host a stripe
    ShardRouter large(routing, 7);
    for (int round = 0; round < 2; ++round) {
      for (int h = 0; h < 2000; ++h) {
        const std::string url = absl::StrCat("https://Host", h, ".site", h % 5, ".example.co.uk/p");
        EXPECT_EQ(*small.ShardOf(url), *ShardOfUrl(url, routing, 7)) << url;
        EXPECT_EQ(*large.ShardOf(url), *ShardOfUrl(url, routing, 7)) << url;
      }
    }
    EXPECT_GE(small.lookups(), 4000u - 64u);
    EXPECT_EQ(large.lookups(), 2000u);
  }
  ShardRouter router(Routing::kSite, 7);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(*router.ShardOf(absl::StrCat("https://www.example.com/", i)),
              ShardOfHost("example.com", 7));
  }
  EXPECT_EQ(router.lookups(), 1u);
  EXPECT_EQ(router.ShardOf("gopher://x").status(),
            ShardOfUrl("gopher://x", Routing::kSite, 7).status());
  EXPECT_EQ(*ShardRouter(Routing::kSite, 1).ShardOf("https://a.example/"), 0);
}

// Routers sharing a HostOwnerCache (one per stream, from several threads)
// compute each host's owner once between them and route as ShardOfUrl.
TEST(ShardRouterTest, RoutersSharingACacheComputeEachHostOnce) {
  HostOwnerCache owners(Routing::kSite, 5);
  std::vector<std::string> urls;
  for (int h = 0; h < 1000; ++h) {
    urls.push_back(absl::StrCat("https://www.site", h, ".example.com/page"));
  }
  ShardRouter first(&owners);
  for (const std::string& url : urls) ASSERT_TRUE(first.ShardOf(url).ok());
  EXPECT_EQ(owners.computed(), 1000u);

  std::vector<std::thread> streams;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    streams.emplace_back([&owners, &urls, &wrong] {
      ShardRouter router(&owners);
      for (const std::string& url : urls) {
        if (*router.ShardOf(url) != *ShardOfUrl(url, Routing::kSite, 5)) ++wrong;
      }
    });
  }
  for (std::thread& stream : streams) stream.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(owners.computed(), 1000u);
}

// At its default size the shared cache keeps the hosts of a stream over
// 100,000 sites: meeting them all again computes no owner (a router's own
// default cache of 2^14 would compute nearly all of them again).
TEST(ShardRouterTest, TheSharedCacheKeepsAHundredThousandHosts) {
  HostOwnerCache owners(Routing::kSite, 16);
  ShardRouter router(&owners);
  for (int round = 0; round < 2; ++round) {
    for (int h = 0; h < 100000; ++h) {
      ASSERT_TRUE(router.ShardOf(absl::StrCat("https://www.site", h, ".example.com/")).ok());
    }
  }
  EXPECT_EQ(owners.computed(), 100000u);
}

}  // namespace
}  // namespace cluster
}  // namespace recrawl
