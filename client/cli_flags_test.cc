// recrawlctl's flag parsing: forms of flags, positional words, help, and
// errors instead of exits.
#include "client/cli_flags.h"

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::string, test_name, "none", "a string flag");
ABSL_FLAG(bool, test_switch, false, "a boolean flag");
ABSL_FLAG(double, test_number, 1.0, "a number flag");

namespace recrawl {
namespace client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseFlagsTest, SetsFlagsAndKeepsWordsInOrder) {
  auto parsed = ParseFlags(
      {"urls", "--test_name=a", "add", "--test_switch", "--test_number", "2.5", "-", "--", "--x"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->positional, ElementsAre("urls", "add", "-", "--x"));
  EXPECT_FALSE(parsed->help);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_name), "a");
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_switch));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_number), 2.5);
  ASSERT_TRUE(ParseFlags({"--notest_switch"}).ok());
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_switch));
}

TEST(ParseFlagsTest, ErrorsNameTheFlag) {
  EXPECT_EQ(ParseFlags({"--nope=1"}).status().message(), "unknown flag --nope");
  EXPECT_THAT(ParseFlags({"--test_number=abc"}).status().message(), HasSubstr("--test_number=abc"));
  EXPECT_EQ(ParseFlags({"--test_name"}).status().message(), "--test_name needs a value");
}

TEST(ParseFlagsTest, Help) {
  EXPECT_TRUE(ParseFlags({"stats", "--help"})->help);
  EXPECT_TRUE(ParseFlags({"-h"})->help);
  const std::string help = FlagsHelp("cli_flags_test.cc");
  EXPECT_THAT(help, HasSubstr("--test_number (default \"1\")"));
  EXPECT_THAT(help, HasSubstr("a boolean flag"));
}

}  // namespace
}  // namespace client
}  // namespace recrawl
