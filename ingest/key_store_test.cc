#include "ingest/key_store.h"

#include <fstream>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ingest/durable_file.h"
#include "ingest/key_cache.h"

namespace recrawl {
namespace ingest {
namespace {

constexpr char kKey[] = "abcdef0123456789";

std::string PathOf(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(DurableFileTest, ReplacesWholeAndLeavesNoTemporary) {
  const std::string path = PathOf("durable");
  ASSERT_TRUE(ReplaceFileDurably(path, "first").ok());
  ASSERT_TRUE(ReplaceFileDurably(path, "second").ok());
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "second");
  EXPECT_FALSE(std::ifstream(path + ".tmp"));
  const absl::Status s = ReplaceFileDurably(PathOf("no/such/dir/file"), "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("no/such/dir/file"), std::string::npos) << s;
}

TEST(KeyStoreTest, RegisteredAndProvenKeysComeBack) {
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  const std::string path = PathOf("keys.pb");
  KeyCache cache;
  ASSERT_TRUE(cache.Register("Example.COM", kKey).ok());
  ASSERT_TRUE(cache.Register("b.org", kKey).ok());
  // One key file proven for a day, one refused, one still pending.
  const KeyFile proven = DefaultKeyFile("c.net", kKey);
  ASSERT_EQ(cache.Admit(proven, {"https://c.net/1"}, now), KeyCache::Admission::kStartCheck);
  cache.Complete(proven, true, now);
  const KeyFile refused = DefaultKeyFile("d.net", kKey);
  cache.Admit(refused, {"https://d.net/1"}, now);
  cache.Complete(refused, false, now);
  cache.Admit(DefaultKeyFile("e.net", kKey), {"https://e.net/1"}, now);
  ASSERT_TRUE(SaveKeys(path, cache, now).ok());

  KeyCache restored;
  ASSERT_TRUE(LoadKeys(path, &restored, now + absl::Hours(1)).ok());
  const std::vector<KeyCache::RegisteredKey> keys = restored.Registered();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].host, "b.org");
  EXPECT_EQ(keys[1].host, "example.com");
  EXPECT_EQ(keys[1].key, kKey);
  const std::vector<KeyCache::ProvenKeyFile> files = restored.Proven(now + absl::Hours(1));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].file.url, proven.url);
  EXPECT_EQ(files[0].file.scope, "/");
  EXPECT_EQ(files[0].until, now + absl::Hours(24));
  EXPECT_EQ(restored.Admit(proven, {"https://c.net/2"}, now + absl::Hours(1)),
            KeyCache::Admission::kGranted);
  // The refused and the pending key files are checked again.
  EXPECT_EQ(restored.Admit(refused, {"https://d.net/2"}, now + absl::Hours(1)),
            KeyCache::Admission::kStartCheck);
  EXPECT_EQ(restored.pending(), 1u);

  // Loaded after the proof expired: only the registered keys.
  KeyCache late;
  ASSERT_TRUE(LoadKeys(path, &late, now + absl::Hours(25)).ok());
  EXPECT_EQ(late.Registered().size(), 2u);
  EXPECT_TRUE(late.Proven(now + absl::Hours(25)).empty());
}

TEST(KeyStoreTest, MissingFileHoldsNothing) {
  KeyCache cache;
  EXPECT_TRUE(LoadKeys(PathOf("never-written"), &cache, absl::Now()).ok());
  EXPECT_TRUE(cache.Registered().empty());
}

TEST(KeyStoreTest, GarbageIsDataLossNamingThePath) {
  const std::string path = PathOf("garbage.pb");
  ASSERT_TRUE(ReplaceFileDurably(path, "\xff\xff\xff not a key file").ok());
  KeyCache cache;
  const absl::Status s = LoadKeys(path, &cache, absl::Now());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
}

}  // namespace
}  // namespace ingest
}  // namespace recrawl
