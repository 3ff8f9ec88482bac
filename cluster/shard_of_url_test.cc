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

}  // namespace
}  // namespace cluster
}  // namespace recrawl
