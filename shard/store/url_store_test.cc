#include "shard/store/url_store.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cluster/url_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "shard/store/records.pb.h"

namespace recrawl {
namespace shard {
namespace {

using ::testing::HasSubstr;

// A fresh directory for one test's store.
std::string NewDir(absl::string_view name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "store_", name);
  std::filesystem::remove_all(dir);
  return dir;
}

std::unique_ptr<UrlStore> OpenOrDie(const std::string& dir, const UrlStoreOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir, options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

UrlRecord Record(absl::string_view url, double importance) {
  UrlRecord record;
  record.set_url(std::string(url));
  record.set_politeness_host("example.com");
  record.set_importance(importance);
  record.mutable_prior()->set_change_rate(0.25);
  record.set_last_crawl_time(1000.0);
  return record;
}

std::string Url(int i) { return absl::StrCat("https://example.com/page/", i); }

// The same bytes: records compare by their serialisation (deterministic for
// messages without maps).
void ExpectSame(const UrlRecord& a, const UrlRecord& b) {
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString()) << a.DebugString() << "\nvs\n"
                                                          << b.DebugString();
}

TEST(UrlStoreTest, PutGetDelete) {
  const std::string dir = NewDir("put_get_delete");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  const UrlRecord record = Record(Url(1), 3.0);
  const cluster::UrlId id = cluster::UrlIdOf(Url(1));

  EXPECT_EQ(store->GetUrl(id).status().code(), absl::StatusCode::kNotFound);
  UrlStore::Batch batch = store->NewBatch();
  batch.PutUrl(record);
  ASSERT_TRUE(store->Write(&batch).ok());
  EXPECT_EQ(batch.count(), 0);  // Write clears the batch.

  absl::StatusOr<UrlRecord> got = store->GetUrl(id);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSame(*got, record);

  batch.DeleteUrl(id);
  ASSERT_TRUE(store->Write(&batch).ok());
  EXPECT_EQ(store->GetUrl(id).status().code(), absl::StatusCode::kNotFound);
}

TEST(UrlStoreTest, BatchIsInvisibleUntilWrittenThenWhole) {
  const std::string dir = NewDir("batch");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  UrlStore::Batch batch = store->NewBatch();
  for (int i = 0; i < 10; ++i) batch.PutUrl(Record(Url(i), i));
  HostRecord host;
  host.set_host("example.com");
  host.set_min_delay(2.0);
  batch.PutHost(host);
  ShardMeta meta;
  meta.set_num_shards(4);
  batch.PutShardMeta(meta);
  EXPECT_EQ(batch.count(), 12);
  EXPECT_GT(batch.bytes(), 0u);

  EXPECT_EQ(store->GetUrl(cluster::UrlIdOf(Url(0))).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->GetHost("example.com").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->GetShardMeta().status().code(), absl::StatusCode::kNotFound);

  ASSERT_TRUE(store->Write(&batch, Durability::kSync).ok());
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(store->GetUrl(cluster::UrlIdOf(Url(i))).ok()) << i;
  }
  EXPECT_EQ(store->GetHost("example.com")->min_delay(), 2.0);
  EXPECT_EQ(store->GetShardMeta()->num_shards(), 4u);
}

// Both ways the merge operator works: appending patches for readers to
// apply, and rewriting the record each time (threshold 0).
class UrlStorePatchTest : public ::testing::TestWithParam<size_t> {};

INSTANTIATE_TEST_SUITE_P(Normalizing, UrlStorePatchTest, ::testing::Values(size_t{0}));
INSTANTIATE_TEST_SUITE_P(Appending, UrlStorePatchTest,
                         ::testing::Values(RecordLimits().normalize_above_bytes));

TEST_P(UrlStorePatchTest, PatchesMergeIntoTheRecord) {
  const std::string dir = NewDir(absl::StrCat("patch", GetParam()));
  UrlStoreOptions options;
  options.limits.max_outcomes = 16;
  options.limits.normalize_above_bytes = GetParam();
  std::unique_ptr<UrlStore> store = OpenOrDie(dir, options);
  ASSERT_NE(store, nullptr);
  const cluster::UrlId id = cluster::UrlIdOf(Url(7));
  UrlStore::Batch batch = store->NewBatch();
  batch.PutUrl(Record(Url(7), 1.0));
  ASSERT_TRUE(store->Write(&batch).ok());

  // Twenty crawl reports, each a patch; only the last 16 outcomes stay.
  UrlRecord expected = Record(Url(7), 1.0);
  for (int i = 0; i < 20; ++i) {
    UrlRecord patch;
    patch.set_last_crawl_time(1000.0 + i);
    patch.set_signals_since_crawl(0);
    AddOutcome(/*elapsed=*/i, /*signals=*/0, /*changed=*/i % 2 == 1, patch.mutable_outcomes());
    batch.PatchUrl(id, patch);
    ApplyPatch(patch, options.limits, &expected);
    if (i % 3 == 0) {
      ASSERT_TRUE(store->Write(&batch).ok());
    }
  }
  ASSERT_TRUE(store->Write(&batch).ok());
  ASSERT_EQ(WindowSize(expected.outcomes()), 16);
  EXPECT_EQ(expected.outcomes().elapsed(0), 4.0f);

  absl::StatusOr<UrlRecord> got = store->GetUrl(id);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSame(*got, expected);

  // The same once RocksDB has merged the patches into the record on disk,
  // and after a restart.
  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->Compact().ok());
  ExpectSame(*store->GetUrl(id), expected);
  store.reset();
  store = OpenOrDie(dir, options);
  ASSERT_NE(store, nullptr);
  ExpectSame(*store->GetUrl(id), expected);
}

TEST(UrlStoreTest, PatchOfADeletedUrlIsIgnored) {
  const std::string dir = NewDir("orphan");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  const cluster::UrlId id = cluster::UrlIdOf(Url(1));
  UrlStore::Batch batch = store->NewBatch();
  batch.PutUrl(Record(Url(1), 1.0));
  batch.DeleteUrl(id);
  UrlRecord patch;
  patch.set_signals_since_crawl(5);
  batch.PatchUrl(id, patch);
  batch.PutUrl(Record(Url(2), 1.0));
  ASSERT_TRUE(store->Write(&batch).ok());

  EXPECT_EQ(store->GetUrl(id).status().code(), absl::StatusCode::kNotFound);
  std::vector<std::string> seen;
  absl::StatusOr<ScanStats> stats = store->ScanUrls(
      [&](cluster::UrlId, const UrlRecord& record) { seen.push_back(record.url()); });
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, 1);
  EXPECT_EQ(stats->orphans, 1);
  EXPECT_EQ(stats->malformed, 0);
  EXPECT_EQ(seen, std::vector<std::string>{Url(2)});

  // Registering the URL again replaces the orphan.
  batch.PutUrl(Record(Url(1), 4.0));
  ASSERT_TRUE(store->Write(&batch).ok());
  ExpectSame(*store->GetUrl(id), Record(Url(1), 4.0));
}

TEST(UrlStoreTest, ScanVisitsEveryRecordOnce) {
  const std::string dir = NewDir("scan");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  constexpr int kUrls = 3000;
  UrlStore::Batch batch = store->NewBatch();
  for (int i = 0; i < kUrls; ++i) {
    batch.PutUrl(Record(Url(i), i));
    if (batch.count() == 500) {
      ASSERT_TRUE(store->Write(&batch).ok());
    }
  }
  ASSERT_TRUE(store->Write(&batch).ok());
  ASSERT_TRUE(store->Flush().ok());  // half in table files, half in memory
  for (int i = 0; i < kUrls; i += 2) {
    UrlRecord patch;
    patch.set_signals_since_crawl(1);
    batch.PatchUrl(cluster::UrlIdOf(Url(i)), patch);
  }
  ASSERT_TRUE(store->Write(&batch).ok());

  std::map<cluster::UrlId, UrlRecord> seen;
  cluster::UrlId previous = 0;
  absl::StatusOr<ScanStats> stats =
      store->ScanUrls([&](cluster::UrlId id, const UrlRecord& record) {
        EXPECT_GT(id, previous);  // key order, each once
        previous = id;
        seen[id] = record;
      });
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->records, kUrls);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kUrls));
  for (int i = 0; i < kUrls; ++i) {
    const UrlRecord& record = seen[cluster::UrlIdOf(Url(i))];
    EXPECT_EQ(record.url(), Url(i));
    EXPECT_EQ(record.importance(), i);
    EXPECT_EQ(record.signals_since_crawl(), i % 2 == 0 ? 1u : 0u);
  }
  EXPECT_GT(store->EstimatedUrlCount(), 0u);

  // Ranges that split the id space visit each record once, in key order
  // within a range, whether the boundary id is a record's or not.
  const cluster::UrlId boundaries[] = {cluster::UrlId{1} << 63, cluster::UrlIdOf(Url(7))};
  for (const cluster::UrlId boundary : boundaries) {
    std::map<cluster::UrlId, int> visits;
    for (const auto& [first, last] :
         {std::pair<cluster::UrlId, cluster::UrlId>{0, boundary - 1},
          std::pair<cluster::UrlId, cluster::UrlId>{boundary, ~cluster::UrlId{0}}}) {
      cluster::UrlId previous = 0;
      bool any = false;
      absl::StatusOr<ScanStats> part =
          store->ScanUrlRange(first, last, [&](cluster::UrlId id, const UrlRecord&) {
            EXPECT_GE(id, first);
            EXPECT_LE(id, last);
            if (any) {
              EXPECT_GT(id, previous);
            }
            any = true;
            previous = id;
            ++visits[id];
          });
      ASSERT_TRUE(part.ok()) << part.status();
    }
    EXPECT_EQ(visits.size(), static_cast<size_t>(kUrls));
    for (const auto& [id, n] : visits) EXPECT_EQ(n, 1) << id;
  }
}

TEST(UrlStoreTest, ReopenKeepsEverything) {
  const std::string dir = NewDir("reopen");
  std::vector<UrlRecord> records;
  {
    std::unique_ptr<UrlStore> store = OpenOrDie(dir);
    ASSERT_NE(store, nullptr);
    UrlStore::Batch batch = store->NewBatch();
    for (int i = 0; i < 200; ++i) {
      records.push_back(Record(Url(i), i));
      records.back().mutable_lease()->set_id(i + 1);
      records.back().mutable_lease()->set_deadline(2000.0 + i);
      records.back().set_content_digest(absl::StrCat("digest", i));
      batch.PutUrl(records.back());
    }
    HostRecord host;
    host.set_host("example.com");
    host.set_blocked_until(5000.0);
    batch.PutHost(host);
    ShardMeta meta;
    meta.set_shard_index(2);
    meta.set_num_shards(3);
    meta.mutable_policy()->set_kind(POLICY_KIND_APPROX);
    meta.mutable_policy()->set_approx_terms(2);
    meta.set_t_delay(60.0);
    meta.set_lease_id_limit(1 << 20);
    batch.PutShardMeta(meta);
    ASSERT_TRUE(store->Write(&batch).ok());
    // Closed without a flush: everything comes back from the log.
  }
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  for (const UrlRecord& record : records) {
    absl::StatusOr<UrlRecord> got = store->GetUrl(cluster::UrlIdOf(record.url()));
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSame(*got, record);
  }
  int64_t scanned = 0;
  ASSERT_TRUE(store->ScanUrls([&](cluster::UrlId, const UrlRecord&) { ++scanned; }).ok());
  EXPECT_EQ(scanned, 200);
  EXPECT_EQ(store->GetHost("example.com")->blocked_until(), 5000.0);
  absl::StatusOr<ShardMeta> meta = store->GetShardMeta();
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->shard_index(), 2u);
  EXPECT_EQ(meta->policy().kind(), POLICY_KIND_APPROX);
  EXPECT_EQ(meta->policy().approx_terms(), 2);
  EXPECT_EQ(meta->t_delay(), 60.0);
  EXPECT_EQ(meta->lease_id_limit(), 1u << 20);

  // And after a flush to table files.
  ASSERT_TRUE(store->Flush().ok());
  store.reset();
  store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  ExpectSame(*store->GetUrl(cluster::UrlIdOf(Url(199))), records[199]);
}

TEST(UrlStoreTest, MemoryShowsMemtablesAndTheBottomLevelWithoutFilters) {
  const std::string dir = NewDir("memory");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  constexpr int kUrls = 20000;
  UrlStore::Batch batch = store->NewBatch();
  for (int i = 0; i < kUrls; ++i) batch.PutUrl(Record(Url(i), i));
  ASSERT_TRUE(store->Write(&batch).ok());
  const StoreMemory written = store->Memory();
  EXPECT_GT(written.memtables, size_t{kUrls} * 50);

  // Flushed: one level-0 file, with its filter (10 bits a key).
  ASSERT_TRUE(store->Flush().ok());
  const StoreMemory flushed = store->Memory();
  EXPECT_LT(flushed.memtables, written.memtables / 4);
  EXPECT_GT(flushed.table_readers, size_t{kUrls});

  // Compacted into the bottom level, which keeps no filter: the reads of
  // keys that are there still find them.
  ASSERT_TRUE(store->Compact().ok());
  const StoreMemory compacted = store->Memory();
  EXPECT_LT(compacted.table_readers + kUrls, flushed.table_readers);
  for (int i = 0; i < kUrls; i += 97) {
    absl::StatusOr<UrlRecord> got = store->GetUrl(cluster::UrlIdOf(Url(i)));
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSame(*got, Record(Url(i), i));
  }
  EXPECT_TRUE(absl::IsNotFound(store->GetUrl(cluster::UrlIdOf(Url(kUrls))).status()));
}

TEST(UrlStoreTest, ScansLeaveTheBlockCacheToPointReads) {
  const std::string dir = NewDir("scans_and_cache");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  UrlStore::Batch batch = store->NewBatch();
  for (int i = 0; i < 2000; ++i) {
    batch.PutUrl(Record(Url(i), i));
    HostRecord host;
    host.set_host(absl::StrCat("host", i, ".example"));
    host.set_min_delay(i);
    batch.PutHost(host);
  }
  ASSERT_TRUE(store->Write(&batch).ok());
  ASSERT_TRUE(store->Flush().ok());
  store.reset();
  store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);

  const size_t opened = store->Memory().block_cache;
  int64_t hosts = 0, urls = 0;
  ASSERT_TRUE(store->ScanHosts([&](const HostRecord&) { ++hosts; }).ok());
  ASSERT_TRUE(store->ScanUrls([&](cluster::UrlId, const UrlRecord&) { ++urls; }).ok());
  EXPECT_EQ(hosts, 2000);
  EXPECT_EQ(urls, 2000);
  const size_t after_scans = store->Memory().block_cache;
  EXPECT_EQ(after_scans, opened);

  ASSERT_TRUE(store->GetUrl(cluster::UrlIdOf(Url(7))).ok());
  ASSERT_TRUE(store->GetHost("host7.example").ok());
  EXPECT_GT(store->Memory().block_cache, after_scans);
}

TEST(UrlStoreTest, HostsPutScanDelete) {
  const std::string dir = NewDir("hosts");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  UrlStore::Batch batch = store->NewBatch();
  for (const char* name : {"a.com", "b.com", "c.com"}) {
    HostRecord host;
    host.set_host(name);
    host.set_min_delay(1.5);
    batch.PutHost(host);
  }
  batch.DeleteHost("b.com");
  ASSERT_TRUE(store->Write(&batch).ok());
  std::vector<std::string> hosts;
  absl::StatusOr<ScanStats> stats =
      store->ScanHosts([&](const HostRecord& host) { hosts.push_back(host.host()); });
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(hosts, (std::vector<std::string>{"a.com", "c.com"}));
  EXPECT_EQ(store->GetHost("b.com").status().code(), absl::StatusCode::kNotFound);
}

// Writes raw key/values into column family `family` of a closed store,
// bypassing UrlStore, as a damaged disk or an old bug could have.
void WriteRaw(const std::string& dir, const std::string& family,
              const std::vector<std::pair<std::string, std::string>>& kvs) {
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const char* name : {"default", "urls", "hosts", "meta"}) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), dir, families, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  int index = 0;
  for (size_t i = 0; i < families.size(); ++i) {
    if (families[i].name == family) index = static_cast<int>(i);
  }
  for (const auto& [key, value] : kvs) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), handles[index], key, value).ok());
  }
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    ASSERT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
  }
}

std::string Key(cluster::UrlId id) {
  std::string key(8, '\0');
  for (int i = 0; i < 8; ++i) key[i] = static_cast<char>(id >> (56 - 8 * i));
  return key;
}

TEST(UrlStoreTest, MalformedRecordsAreReportedNotFatal) {
  const std::string dir = NewDir("malformed");
  {
    std::unique_ptr<UrlStore> store = OpenOrDie(dir);
    ASSERT_NE(store, nullptr);
    UrlStore::Batch batch = store->NewBatch();
    batch.PutUrl(Record(Url(1), 1.0));
    ASSERT_TRUE(store->Write(&batch).ok());
  }
  const cluster::UrlId garbage_id = cluster::UrlIdOf(Url(2));
  const cluster::UrlId wrong_key_id = cluster::UrlIdOf(Url(3));
  WriteRaw(dir, "urls",
           {{Key(garbage_id), std::string("\xff\xff\xff\xff", 4)},
            {Key(wrong_key_id), Record(Url(4), 1.0).SerializeAsString()},
            {"short", Record(Url(5), 1.0).SerializeAsString()}});
  WriteRaw(dir, "hosts", {{"x.com", std::string("\xff\xff", 2)}});

  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  std::vector<std::string> seen;
  absl::StatusOr<ScanStats> stats = store->ScanUrls(
      [&](cluster::UrlId, const UrlRecord& record) { seen.push_back(record.url()); });
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(seen, std::vector<std::string>{Url(1)});
  EXPECT_EQ(stats->records, 1);
  EXPECT_EQ(stats->malformed, 3);
  EXPECT_THAT(testing::PrintToString(stats->errors),
              ::testing::AllOf(HasSubstr("record does not parse"),
                               HasSubstr("does not hash to its key"), HasSubstr("key of 5 bytes")));

  EXPECT_EQ(store->GetUrl(garbage_id).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(store->GetUrl(wrong_key_id).status().code(), absl::StatusCode::kDataLoss);

  // Patching a damaged record neither crashes nor repairs it by accident.
  UrlStore::Batch batch = store->NewBatch();
  UrlRecord patch;
  patch.set_signals_since_crawl(1);
  batch.PatchUrl(garbage_id, patch);
  ASSERT_TRUE(store->Write(&batch).ok());
  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->Compact().ok());
  EXPECT_EQ(store->GetUrl(garbage_id).status().code(), absl::StatusCode::kDataLoss);
  // Putting a good record repairs it.
  batch.PutUrl(Record(Url(2), 1.0));
  ASSERT_TRUE(store->Write(&batch).ok());
  EXPECT_TRUE(store->GetUrl(garbage_id).ok());

  stats = store->ScanHosts([](const HostRecord&) {});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->malformed, 1);
  EXPECT_EQ(store->GetHost("x.com").status().code(), absl::StatusCode::kDataLoss);
}

// Deferred compactions stay off until turned on; a store opened as usual
// has them on.
TEST(UrlStoreTest, DeferredCompactionsStartWhenEnabled) {
  const std::string dir = NewDir("deferred");
  {
    UrlStoreOptions options;
    options.defer_compactions = true;
    absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir, options);
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_FALSE((*store)->compactions_enabled());
    UrlStore::Batch batch = (*store)->NewBatch();
    batch.PutUrl(Record(Url(1), 1));
    ASSERT_TRUE((*store)->Write(&batch).ok());
    ASSERT_TRUE((*store)->EnableCompactions().ok());
    EXPECT_TRUE((*store)->compactions_enabled());
    ASSERT_TRUE((*store)->EnableCompactions().ok());  // again: a no-op
    EXPECT_TRUE((*store)->compactions_enabled());
  }
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->compactions_enabled());
  EXPECT_TRUE(store->GetUrl(cluster::UrlIdOf(Url(1))).ok());
}

TEST(UrlStoreTest, SecondOpenOfTheSameDirectoryFails) {
  const std::string dir = NewDir("locked");
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::unique_ptr<UrlStore>> second = UrlStore::Open(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr(dir));
  EXPECT_THAT(second.status().message(), HasSubstr("lock"));
}

TEST(UrlStoreTest, MissingDirectoryWithoutCreateFails) {
  UrlStoreOptions options;
  options.create_if_missing = false;
  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(NewDir("missing"), options);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("opening the URL store"));
}

TEST(UrlStoreTest, RefusesAnotherFormat) {
  const std::string dir = NewDir("format");
  ASSERT_NE(OpenOrDie(dir), nullptr);
  WriteRaw(dir, "meta", {{"store_format", "99"}});
  absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("format \"99\""));
}

// Formats 1 (before the journal) and 2 (signals only in the journal) are
// read and upgraded.
TEST(UrlStoreTest, UpgradesFormatsOneAndTwo) {
  for (const char* format : {"1", "2"}) {
    const std::string dir = NewDir(absl::StrCat("format", format));
    ASSERT_NE(OpenOrDie(dir), nullptr);
    WriteRaw(dir, "meta", {{"store_format", format}});
    ASSERT_NE(OpenOrDie(dir), nullptr);  // and again, now as format 3
  }
}

TEST(UrlStoreTest, JournalAppendScanTruncate) {
  const std::string dir = NewDir("journal");
  {
    std::unique_ptr<UrlStore> store = OpenOrDie(dir);
    UrlStore::Batch batch = store->NewBatch();
    for (uint64_t seq : {3, 1, 2, 300, 256}) {
      batch.PutJournal(seq, absl::StrCat("entry", seq));
    }
    ShardMeta meta;
    meta.set_num_shards(1);
    batch.PutShardMeta(meta);  // shares the column family
    ASSERT_TRUE(store->Write(&batch).ok());
  }
  std::unique_ptr<UrlStore> store = OpenOrDie(dir);
  std::vector<std::pair<uint64_t, std::string>> seen;
  auto scan = [&] {
    seen.clear();
    absl::StatusOr<int64_t> n = store->ScanJournal(
        [&](uint64_t seq, absl::string_view entry) { seen.emplace_back(seq, std::string(entry)); });
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, static_cast<int64_t>(seen.size()));
  };
  scan();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0], std::make_pair(uint64_t{1}, std::string("entry1")));
  EXPECT_EQ(seen[3].first, 256u);  // numeric order, not string order
  EXPECT_EQ(seen[4].first, 300u);
  UrlStore::Batch batch = store->NewBatch();
  batch.DeleteJournal(0, 256);
  ASSERT_TRUE(store->Write(&batch).ok());
  scan();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, 256u);
  EXPECT_TRUE(store->GetShardMeta().ok());
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
