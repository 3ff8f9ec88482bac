#include "coordinator/routing.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shard/url_id.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::HasSubstr;

TEST(RoutingTest, AHostsUrlsGoToOneShard) {
  const int want = shard::ShardOfHost("news.example", 7);
  EXPECT_EQ(*ShardOfUrl("https://news.example/a", "", 7), want);
  EXPECT_EQ(*ShardOfUrl("HTTP://NEWS.example:80/b?x#y", "", 7), want);
  EXPECT_EQ(*ShardOfHostName("News.Example.", 7), want);
  // The politeness host decides when given.
  EXPECT_EQ(*ShardOfUrl("https://cdn.other.example/x", "news.example", 7), want);
}

TEST(RoutingTest, BadInputNamesTheField) {
  EXPECT_THAT(ShardOfUrl("gopher://x", "", 3).status().message(), HasSubstr("url"));
  EXPECT_THAT(ShardOfUrl("https://a.example/", "bad host!", 3).status().message(),
              HasSubstr("politeness_host"));
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
