#include "sim/pages_csv.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace sim {
namespace {

using ::testing::HasSubstr;

TEST(PagesCsvTest, ParsesRequiredAndOptionalColumnsInAnyOrder) {
  absl::StatusOr<std::vector<PageRow>> rows = ParsePagesCsv(
      "change_rate,importance,complete_obs,recall\n"
      "0.5,2,1,0.9\n"
      "# a comment\n"
      "\n"
      "1.5,3,0,\n");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].params.importance, 2.0);
  EXPECT_EQ((*rows)[0].params.change_rate, 0.5);
  EXPECT_EQ((*rows)[0].params.recall, 0.9);
  EXPECT_EQ((*rows)[0].params.false_rate, 0.0);
  EXPECT_TRUE((*rows)[0].complete_obs);
  EXPECT_EQ((*rows)[1].params.recall, 0.0);
  EXPECT_FALSE((*rows)[1].complete_obs);
}

TEST(PagesCsvTest, ErrorsNameLineAndColumn) {
  struct Case {
    const char* csv;
    const char* message;
  } cases[] = {
      {"importance\n1\n", "importance and change_rate"},
      {"importance,change_rate,colour\n", "unknown column 'colour'"},
      {"importance,change_rate\n1,x\n", "line 2, column change_rate"},
      {"importance,change_rate\n1,2,3\n", "line 2: expected 2 fields"},
      {"importance,change_rate\n-1,2\n", "line 2, column importance"},
      {"importance,change_rate,recall\n1,2,1.5\n", "line 2, column recall"},
      {"importance,change_rate,complete_obs\n1,2,2\n", "complete_obs"},
      {"", "no header"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<PageRow>> rows = ParsePagesCsv(c.csv);
    ASSERT_FALSE(rows.ok()) << c.csv;
    EXPECT_THAT(rows.status().message(), HasSubstr(c.message)) << c.csv;
  }
}

TEST(PagesCsvTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadPagesCsv("/nonexistent/pages.csv").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace sim
}  // namespace recrawl
