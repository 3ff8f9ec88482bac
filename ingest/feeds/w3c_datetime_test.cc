#include "ingest/feeds/w3c_datetime.h"

#include "absl/status/status.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace feeds {
namespace {

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

TEST(W3cDatetimeTest, EachGranularity) {
  EXPECT_EQ(*ParseW3cDatetime("2024"), Utc(2024, 1, 1));
  EXPECT_EQ(*ParseW3cDatetime("2024-03"), Utc(2024, 3, 1));
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17"), Utc(2024, 3, 17));
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20Z"), Utc(2024, 3, 17, 10, 20));
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20:30Z"), Utc(2024, 3, 17, 10, 20, 30));
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20:30.25Z"),
            Utc(2024, 3, 17, 10, 20, 30) + absl::Milliseconds(250));
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20:30.123456789Z"),
            Utc(2024, 3, 17, 10, 20, 30) + absl::Nanoseconds(123456789));
}

TEST(W3cDatetimeTest, TimeZones) {
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20:30+01:00"), Utc(2024, 3, 17, 9, 20, 30));
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20:30-05:30"), Utc(2024, 3, 17, 15, 50, 30));
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20:30+0100"), Utc(2024, 3, 17, 9, 20, 30));
  // No zone: UTC. Crossing midnight backwards.
  EXPECT_EQ(*ParseW3cDatetime("2024-03-17T10:20:30"), Utc(2024, 3, 17, 10, 20, 30));
  EXPECT_EQ(*ParseW3cDatetime("2024-01-01T00:30+01:00"), Utc(2023, 12, 31, 23, 30));
  EXPECT_EQ(*ParseW3cDatetime("  2024-03-17\n"), Utc(2024, 3, 17));
}

TEST(W3cDatetimeTest, MalformedOrImpossibleIsRefused) {
  for (const char* text :
       {"", "24", "2024-3-1", "2024-13", "2024-02-30", "2023-02-29", "2024-03-17T25:00Z",
        "2024-03-17T10:60Z", "2024-03-17T10Z", "2024-03-17T10:20:30.Z", "2024-03-17T10:20+15:00",
        "2024-03-17 10:20", "yesterday", "2024-03-17T10:20:30Zjunk", "2024-00-10"}) {
    absl::StatusOr<absl::Time> t = ParseW3cDatetime(text);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(t.status().message().find("datetime \""), std::string::npos) << t.status();
  }
  EXPECT_TRUE(ParseW3cDatetime("2024-02-29").ok());
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
