#include "ingest/feeds/feed_links.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace feeds {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kTopic[] = "https://blog.example/feed.xml";

TEST(FeedLinksTest, AtomEntriesAlternateLinks) {
  absl::StatusOr<FeedLinks> links = ExtractFeedLinks(R"(<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Blog</title>
  <link href="https://blog.example/" rel="alternate"/>
  <link href="https://blog.example/feed.xml" rel="self"/>
  <entry>
    <title>One</title>
    <link href="https://blog.example/posts/1"/>
    <link rel="replies" href="https://blog.example/posts/1/comments"/>
    <id>urn:uuid:1</id>
  </entry>
  <entry>
    <link rel="alternate" type="text/html" href="/posts/2?x=1&amp;y=2"/>
    <link rel="enclosure" href="https://cdn.example/2.mp3"/>
  </entry>
  <entry><link rel="alternate" href="https://blog.example/posts/1"/></entry>
</feed>)",
                                                     kTopic);
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT(links->urls,
              ElementsAre("https://blog.example/posts/1", "https://blog.example/posts/2?x=1&y=2"));
}

TEST(FeedLinksTest, LoneAtomEntry) {
  absl::StatusOr<FeedLinks> links = ExtractFeedLinks(
      R"(<a:entry xmlns:a="http://www.w3.org/2005/Atom"><a:link href="posts/3"/></a:entry>)",
      kTopic);
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT(links->urls, ElementsAre("https://blog.example/posts/3"));
}

TEST(FeedLinksTest, Rss2ItemsLinkOrPermalinkGuid) {
  absl::StatusOr<FeedLinks> links = ExtractFeedLinks(R"(<rss version="2.0"
    xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>News</title>
    <link>https://news.example/</link>
    <atom:link href="https://news.example/rss" rel="self"/>
    <item><title>A</title><link> https://news.example/a </link></item>
    <item><guid>https://news.example/b</guid></item>
    <item><guid isPermaLink="false">tag:news.example,2024:c</guid></item>
    <item><link><![CDATA[https://news.example/d]]></link><guid>https://news.example/ignored</guid></item>
    <item><link>javascript:alert(1)</link></item>
  </channel>
</rss>)",
                                                     kTopic);
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT(links->urls, ElementsAre("https://news.example/a", "https://news.example/b",
                                       "https://news.example/d"));
  EXPECT_EQ(links->bad_links, 1u);
}

TEST(FeedLinksTest, Rss1Items) {
  absl::StatusOr<FeedLinks> links = ExtractFeedLinks(
      R"(<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
                 xmlns="http://purl.org/rss/1.0/">
  <channel rdf:about="https://r.example/"><link>https://r.example/</link></channel>
  <item rdf:about="https://r.example/1"><link>https://r.example/1</link></item>
</rdf:RDF>)",
      kTopic);
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT(links->urls, ElementsAre("https://r.example/1"));
}

TEST(FeedLinksTest, LinksAreCapped) {
  std::string feed = R"(<feed xmlns="http://www.w3.org/2005/Atom">)";
  for (int i = 0; i < 10; ++i) absl::StrAppend(&feed, "<entry><link href=\"/p/", i, "\"/></entry>");
  feed += "</feed>";
  absl::StatusOr<FeedLinks> links = ExtractFeedLinks(feed, kTopic, 4);
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_EQ(links->urls.size(), 4u);
  EXPECT_EQ(links->dropped_over_limit, 6u);
}

TEST(FeedLinksTest, NotAFeedIsRefused) {
  for (const char* body :
       {"", "{\"items\": []}", "<html><body/></html>",
        "<feed><entry><link href=\"https://x/\"/></entry></feed>", "<rss><channel><item></rss>"}) {
    absl::StatusOr<FeedLinks> links = ExtractFeedLinks(body, kTopic);
    EXPECT_EQ(links.status().code(), absl::StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(std::string(links.status().message()), HasSubstr("feed: ")) << body;
  }
  absl::StatusOr<FeedLinks> links =
      ExtractFeedLinks("<!DOCTYPE rss [<!ENTITY a \"x\">]><rss>&a;</rss>", kTopic);
  EXPECT_EQ(links.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FeedLinksTest, EmptyFeedHasNoLinks) {
  absl::StatusOr<FeedLinks> links =
      ExtractFeedLinks(R"(<feed xmlns="http://www.w3.org/2005/Atom"/>)", kTopic);
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT(links->urls, IsEmpty());
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
