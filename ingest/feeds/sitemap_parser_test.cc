#include "ingest/feeds/sitemap_parser.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace feeds {
namespace {

using ::testing::HasSubstr;

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

constexpr char kUrlset[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc> https://example.com/a?x=1&amp;y=2 </loc>
    <lastmod>2024-03-17T10:20:30+00:00</lastmod>
    <changefreq>daily</changefreq>
    <image:image><image:loc>https://cdn.example.com/a.png</image:loc></image:image>
  </url>
  <url><loc><![CDATA[https://example.com/b]]></loc></url>
  <url><loc>https://example.com/c</loc><lastmod>last tuesday</lastmod></url>
  <url><lastmod>2024-01-01</lastmod></url>
  <url><loc>   </loc></url>
</urlset>)";

TEST(SitemapParserTest, ParsesAUrlset) {
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(kUrlset);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->kind, SitemapKind::kUrlset);
  ASSERT_EQ(parsed->entries.size(), 3u);
  EXPECT_EQ(parsed->entries[0].loc, "https://example.com/a?x=1&y=2");
  EXPECT_EQ(parsed->entries[0].lastmod, Utc(2024, 3, 17, 10, 20, 30));
  EXPECT_EQ(parsed->entries[1].loc, "https://example.com/b");
  EXPECT_FALSE(parsed->entries[1].lastmod.has_value());
  // A bad lastmod drops only the lastmod.
  EXPECT_EQ(parsed->entries[2].loc, "https://example.com/c");
  EXPECT_FALSE(parsed->entries[2].lastmod.has_value());
  EXPECT_EQ(parsed->bad_lastmods, 1u);
  EXPECT_EQ(parsed->skipped_entries, 2u);
}

TEST(SitemapParserTest, ParsesAnIndexWithAPrefixedNamespace) {
  absl::StatusOr<ParsedSitemap> parsed =
      ParseSitemap(R"(<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sm:sitemap><sm:loc>https://example.com/s1.xml.gz</sm:loc>
                    <sm:lastmod>2024-05</sm:lastmod></sm:sitemap>
        <sm:sitemap><sm:loc>https://example.com/s2.xml</sm:loc></sm:sitemap>
        <sm:url><sm:loc>https://example.com/not-an-entry-here</sm:loc></sm:url>
      </sm:sitemapindex>)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->kind, SitemapKind::kSitemapIndex);
  ASSERT_EQ(parsed->entries.size(), 2u);
  EXPECT_EQ(parsed->entries[0].loc, "https://example.com/s1.xml.gz");
  EXPECT_EQ(parsed->entries[0].lastmod, Utc(2024, 5, 1));
  EXPECT_EQ(parsed->entries[1].loc, "https://example.com/s2.xml");
}

TEST(SitemapParserTest, NoNamespaceAndEmptyRootAreAccepted) {
  absl::StatusOr<ParsedSitemap> parsed =
      ParseSitemap("<urlset><url><loc>https://e.com/</loc></url></urlset>");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->entries.size(), 1u);
  parsed = ParseSitemap("<sitemapindex/>");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->kind, SitemapKind::kSitemapIndex);
  EXPECT_TRUE(parsed->entries.empty());
}

TEST(SitemapParserTest, ElementsOfOtherNamespacesAreNotTaken) {
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(
      R"(<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:x="urn:other">
           <x:url><loc>https://e.com/other</loc></x:url>
           <url><x:loc>https://e.com/other-loc</x:loc><loc>https://e.com/mine</loc></url>
         </urlset>)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->entries.size(), 1u);
  EXPECT_EQ(parsed->entries[0].loc, "https://e.com/mine");
  EXPECT_EQ(ParseSitemap(R"(<urlset xmlns="urn:not-sitemaps"/>)").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SitemapParserTest, UndeclaredPrefixesAreNotTakenNorFatal) {
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(
      "<urlset><url><loc>https://e.com/a</loc><image:loc>https://e.com/i.png</image:loc>"
      "<image:image><image:loc>https://e.com/j.png</image:loc></image:image></url></urlset>");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->entries.size(), 1u);
  EXPECT_EQ(parsed->entries[0].loc, "https://e.com/a");
}

TEST(SitemapParserTest, WrongRootIsRefused) {
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap("<rss><channel/></rss>");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("root element is <rss>, not <urlset> or <sitemapindex>"));
}

TEST(SitemapParserTest, NonXmlIsRefused) {
  for (const char* body : {"", "   ", "hello world", "{\"urls\": []}", "\x1f\x8b\x08\x00",
                           "<html><body>Not found</p></html>", "<urlset><url></urlset>",
                           "<urlset></urlset><urlset></urlset>"}) {
    absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(body);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << body;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("sitemap: ")) << body;
  }
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap("<urlset>\n<url>\n</urlset>");
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("not well-formed XML at line 3"))
      << parsed.status();
}

TEST(SitemapParserTest, BillionLaughsIsRefusedWithoutExpansion) {
  std::string doc = "<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [\n<!ENTITY l0 \"lol\">\n";
  for (int i = 1; i < 10; ++i) {
    absl::StrAppend(&doc, "<!ENTITY l", i, " \"");
    for (int j = 0; j < 10; ++j) absl::StrAppend(&doc, "&l", i - 1, ";");
    doc += "\">\n";
  }
  doc += "]>\n<urlset><url><loc>https://e.com/&l9;</loc></url></urlset>";
  // libxml2 reads the internal subset ahead and sees the loop, or the
  // reader reaches the DOCTYPE: refused either way, nothing expanded.
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(doc);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("sitemap: "));
  EXPECT_LT(parsed.status().message().size(), 200u);
}

TEST(SitemapParserTest, AnyDoctypeIsRefused) {
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(
      "<!DOCTYPE urlset [<!ENTITY a \"https://e.com/\">]><urlset><url><loc>&a;</loc></url>"
      "</urlset>");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("DOCTYPE is not allowed"));
}

TEST(SitemapParserTest, ExternalEntityIsNotLoaded) {
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(
      "<!DOCTYPE urlset [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
      "<urlset><url><loc>&x;</loc></url></urlset>");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  // Undeclared entities are not well-formed.
  parsed = ParseSitemap("<urlset><url><loc>&x;</loc></url></urlset>");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SitemapParserTest, EntryLimit) {
  SitemapLimits limits;
  limits.max_entries = 3;
  std::string doc = "<urlset>";
  for (int i = 0; i < 3; ++i) absl::StrAppend(&doc, "<url><loc>https://e.com/", i, "</loc></url>");
  EXPECT_TRUE(ParseSitemap(doc + "</urlset>", limits).ok());
  doc += "<url><loc>https://e.com/3</loc></url></urlset>";
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(doc, limits);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("more than 3 <url> entries"));
}

TEST(SitemapParserTest, TheProtocolsEntryLimitHolds) {
  std::string doc = "<urlset>";
  for (size_t i = 0; i <= kMaxSitemapEntries; ++i) {
    absl::StrAppend(&doc, "<url><loc>https://e.com/", i, "</loc></url>");
  }
  doc += "</urlset>";
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(doc);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("more than 50000 <url> entries"));
}

TEST(SitemapParserTest, ByteLimit) {
  SitemapLimits limits;
  limits.max_bytes = 100;
  const std::string doc = "<urlset>" + std::string(100, ' ') + "</urlset>";
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(doc, limits);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("more than the limit of 100"));
  EXPECT_EQ(ParseSitemap(std::string(kMaxSitemapBytes + 1, ' ')).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(SitemapParserTest, OverlongLocSkipsTheEntry) {
  const std::string doc = "<urlset><url><loc>https://e.com/" + std::string(5000, 'a') +
                          "</loc></url><url><loc>https://e.com/ok</loc></url></urlset>";
  absl::StatusOr<ParsedSitemap> parsed = ParseSitemap(doc);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->entries.size(), 1u);
  EXPECT_EQ(parsed->entries[0].loc, "https://e.com/ok");
  EXPECT_EQ(parsed->skipped_entries, 1u);
}

TEST(SitemapParserTest, DeepNestingIsRefused) {
  std::string doc = "<urlset><url>";
  for (int i = 0; i < 5000; ++i) doc += "<a>";
  for (int i = 0; i < 5000; ++i) doc += "</a>";
  doc += "</url></urlset>";
  EXPECT_EQ(ParseSitemap(doc).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
