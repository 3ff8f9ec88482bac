#include "ingest/feeds/gzip.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace feeds {
namespace {

TEST(GzipTest, DetectsTheMagicBytes) {
  EXPECT_TRUE(LooksGzipped(DeflateGzip("x")));
  EXPECT_FALSE(LooksGzipped("<?xml"));
  EXPECT_FALSE(LooksGzipped("\x1f"));
  EXPECT_FALSE(LooksGzipped(""));
}

TEST(GzipTest, InflatesOneMember) {
  const std::string text = "<urlset>" + std::string(100000, 'a') + "</urlset>";
  absl::StatusOr<std::string> out = InflateGzip(DeflateGzip(text), 1 << 20);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, text);
}

TEST(GzipTest, InflatesConcatenatedMembers) {
  absl::StatusOr<std::string> out = InflateGzip(DeflateGzip("abc") + DeflateGzip("def"), 100);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "abcdef");
}

TEST(GzipTest, OutputExactlyAtTheBoundIsAccepted) {
  absl::StatusOr<std::string> out = InflateGzip(DeflateGzip(std::string(1000, 'z')), 1000);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), 1000u);
  EXPECT_EQ(InflateGzip(DeflateGzip(std::string(1001, 'z')), 1000).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(GzipTest, BombIsRefusedAtTheBound) {
  // 100 MB of zeros compress to about 100 KB.
  const std::string bomb = DeflateGzip(std::string(100 << 20, '\0'));
  ASSERT_LT(bomb.size(), 200u << 10);
  absl::StatusOr<std::string> out = InflateGzip(bomb, 50 << 20);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(out.status().message().find("more than 52428800 bytes"), std::string::npos)
      << out.status();
}

TEST(GzipTest, NotGzipIsRefused) {
  absl::StatusOr<std::string> out = InflateGzip("<urlset/>", 100);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("not gzip"), std::string::npos);
}

TEST(GzipTest, TruncatedStreamIsRefused) {
  const std::string full = DeflateGzip(std::string(5000, 'q') + "tail");
  absl::StatusOr<std::string> out = InflateGzip(full.substr(0, full.size() / 2), 1 << 20);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("cut short"), std::string::npos) << out.status();
}

TEST(GzipTest, CorruptStreamIsRefused) {
  std::string data = DeflateGzip("some text that is long enough to corrupt");
  data[12] ^= 0x55;
  data[13] ^= 0x55;
  EXPECT_EQ(InflateGzip(data, 1 << 20).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GzipTest, TrailingGarbageIsRefused) {
  absl::StatusOr<std::string> out = InflateGzip(DeflateGzip("abc") + "junk", 100);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("after the gzip stream"), std::string::npos);
}

TEST(GzipTest, MaybeInflatePassesPlainBodiesUnderTheBound) {
  EXPECT_EQ(*MaybeInflateGzip("<urlset/>", 100), "<urlset/>");
  EXPECT_EQ(*MaybeInflateGzip(DeflateGzip("<urlset/>"), 100), "<urlset/>");
  EXPECT_EQ(MaybeInflateGzip("<urlset/>", 5).status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
