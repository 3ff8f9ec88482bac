// The import file's lines: CSV with quotes and optional priors, JSON lines,
// headers, comments, and errors that name the field.
#include "client/url_import.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SplitCsvLineTest, HandlesQuotesAndEmptyFields) {
  EXPECT_THAT(*SplitCsvLine("a,b,,c"), ElementsAre("a", "b", "", "c"));
  EXPECT_THAT(*SplitCsvLine(R"("x,y",1)"), ElementsAre("x,y", "1"));
  EXPECT_THAT(*SplitCsvLine(R"("say ""hi""",2)"), ElementsAre(R"(say "hi")", "2"));
  EXPECT_THAT(SplitCsvLine(R"("open,1)").status().message(), HasSubstr("unterminated quote"));
  EXPECT_THAT(SplitCsvLine(R"("a"b,1)").status().message(),
              HasSubstr("text after the closing quote"));
}

TEST(ParseUrlLineTest, CsvWithAndWithoutPriors) {
  auto spec = ParseUrlLine("https://a.com/x, 2.5", false);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  EXPECT_EQ((*spec)->url(), "https://a.com/x");
  EXPECT_EQ((*spec)->importance(), 2.5);
  EXPECT_FALSE((*spec)->has_prior());

  spec = ParseUrlLine("\"https://a.com/?q=1,2\",1,1e-5,,0.25", false);
  ASSERT_TRUE(spec.ok() && spec->has_value()) << spec.status();
  EXPECT_EQ((*spec)->url(), "https://a.com/?q=1,2");
  EXPECT_EQ((*spec)->prior().change_rate(), 1e-5);
  EXPECT_FALSE((*spec)->prior().has_recall());
  EXPECT_EQ((*spec)->prior().false_rate(), 0.25);
}

TEST(ParseUrlLineTest, SkipsHeaderCommentsAndBlankLines) {
  EXPECT_FALSE(ParseUrlLine("url,importance,change_rate", true)->has_value());
  EXPECT_FALSE(ParseUrlLine("# a comment", false)->has_value());
  EXPECT_FALSE(ParseUrlLine("   ", false)->has_value());
  // Only the first line may be a header.
  EXPECT_THAT(ParseUrlLine("url,importance", false).status().message(),
              HasSubstr("importance: not a number"));
}

TEST(ParseUrlLineTest, CsvErrorsNameTheField) {
  EXPECT_EQ(ParseUrlLine("https://a.com/,x", false).status().message(),
            "importance: not a number: \"x\"");
  EXPECT_EQ(ParseUrlLine("https://a.com/,1,2,zz", false).status().message(),
            "recall: not a number: \"zz\"");
  EXPECT_THAT(ParseUrlLine("https://a.com/", false).status().message(), HasSubstr("got 1 fields"));
}

TEST(ParseUrlLineTest, JsonLines) {
  auto spec = ParseUrlLine(R"({"url": "https://a.com/j", "importance": 3, "recall": 0.5,)"
                           R"( "changeRate": 2e-6, "politeness_host": "a.com"})",
                           true);
  ASSERT_TRUE(spec.ok() && spec->has_value()) << spec.status();
  EXPECT_EQ((*spec)->url(), "https://a.com/j");
  EXPECT_EQ((*spec)->importance(), 3.0);
  EXPECT_EQ((*spec)->prior().recall(), 0.5);
  EXPECT_EQ((*spec)->prior().change_rate(), 2e-6);
  EXPECT_FALSE((*spec)->prior().has_false_rate());
  EXPECT_EQ((*spec)->politeness_host(), "a.com");
}

TEST(ParseUrlLineTest, JsonErrors) {
  EXPECT_EQ(ParseUrlLine(R"({"url": "https://a.com/"})", false).status().message(),
            "importance: missing");
  EXPECT_THAT(ParseUrlLine(R"({"url": "https://a.com/", "importance": 1, "mu": 2})", false)
                  .status()
                  .message(),
              HasSubstr("mu"));
  EXPECT_THAT(ParseUrlLine(R"({"url": )", false).status().message(), HasSubstr("JSON"));
}

}  // namespace
}  // namespace client
}  // namespace recrawl
