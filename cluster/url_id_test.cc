#include "cluster/url_id.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace cluster {
namespace {

TEST(Fnv1a64Test, PublishedVectors) {
  EXPECT_EQ(internal::Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(internal::Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(internal::Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

// Ids are persisted and route requests: these values must never change.
// (Computed by an independent Python implementation of the same functions.)
TEST(Fingerprint64Test, StableValues) {
  EXPECT_EQ(internal::MurmurFinalize64(0), 0u);
  EXPECT_EQ(UrlIdOf("https://example.com/"), 0x26363d14a74338d9ULL);
  EXPECT_EQ(Fingerprint64("example.com"), 0x9591d6421994d599ULL);
}

TEST(JumpConsistentHashTest, StableValues) {
  const uint64_t key = Fingerprint64("example.com");
  const std::vector<int32_t> expected = {0, 0, 0, 3, 45, 805};
  const std::vector<int32_t> buckets = {1, 2, 3, 10, 100, 1000};
  for (size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(JumpConsistentHash(key, buckets[i]), expected[i]) << buckets[i];
  }
  EXPECT_EQ(JumpConsistentHash(0, 1000), 0);
  EXPECT_EQ(JumpConsistentHash(1, 1000), 549);
  EXPECT_EQ(JumpConsistentHash(0xdeadbeef, 1000), 285);
}

TEST(JumpConsistentHashTest, GrowingMovesKeysOnlyToTheNewShard) {
  for (int i = 0; i < 2000; ++i) {
    const uint64_t key = Fingerprint64(absl::StrCat("host", i, ".example"));
    int32_t previous = JumpConsistentHash(key, 1);
    EXPECT_EQ(previous, 0);
    for (int32_t n = 2; n <= 40; ++n) {
      const int32_t now = JumpConsistentHash(key, n);
      ASSERT_TRUE(now == previous || now == n - 1)
          << "key " << i << " moved from " << previous << " to " << now << " when growing to " << n
          << " shards";
      previous = now;
    }
  }
}

TEST(JumpConsistentHashTest, SpreadsHostsEvenly) {
  constexpr int kShards = 10;
  constexpr int kHosts = 100000;
  std::vector<int> count(kShards, 0);
  for (int i = 0; i < kHosts; ++i) {
    ++count[ShardOfHost(absl::StrCat("www.site", i, ".com"), kShards)];
  }
  // Binomial(1e5, 0.1): standard deviation ~95; allow ~6 of them.
  for (int s = 0; s < kShards; ++s) {
    EXPECT_NEAR(count[s], kHosts / kShards, 600) << "shard " << s;
  }
}

}  // namespace
}  // namespace cluster
}  // namespace recrawl
