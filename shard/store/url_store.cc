#include "shard/store/url_store.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cluster/url_id.h"
#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"

namespace recrawl {
namespace shard {
namespace {

constexpr char kUrlsFamily[] = "urls";
constexpr char kHostsFamily[] = "hosts";
constexpr char kMetaFamily[] = "meta";
constexpr char kShardMetaKey[] = "shard";
constexpr char kFormatKey[] = "store_format";
// Bump when the layout or the records change incompatibly. Format 1 had no
// journal, format 2 journaled signals only (not leases); such stores are
// read as they are and marked 3 (a build that does not know a journal's
// records must not open a store that has them).
constexpr char kFormat[] = "3";
constexpr char kFormatWithoutJournal[] = "1";
constexpr char kFormatSignalJournal[] = "2";
constexpr char kJournalPrefix = 'j';

using UrlKey = std::array<char, sizeof(cluster::UrlId)>;

// Big-endian, so that key order is numeric order.
UrlKey EncodeUrlKey(cluster::UrlId id) {
  UrlKey key;
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<char>(id >> (8 * (key.size() - 1 - i)));
  }
  return key;
}

cluster::UrlId DecodeUrlKey(const rocksdb::Slice& key) {
  cluster::UrlId id = 0;
  for (size_t i = 0; i < sizeof(cluster::UrlId); ++i) {
    id = (id << 8) | static_cast<unsigned char>(key[i]);
  }
  return id;
}

rocksdb::Slice ToSlice(const UrlKey& key) { return rocksdb::Slice(key.data(), key.size()); }

rocksdb::Slice ToSlice(absl::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

std::string Hex(cluster::UrlId id) { return absl::StrCat(absl::Hex(id, absl::kZeroPad16)); }

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string message = absl::StrCat(context, ": rocksdb: ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(message);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

// Why a stored URL record cannot be used, or "" if it can. Orphans (no URL)
// are told apart by the caller.
std::string CheckUrlRecord(cluster::UrlId id, const UrlRecord& record) {
  if (cluster::UrlIdOf(record.url()) != id) {
    return absl::StrCat("urls/", Hex(id), ": URL \"", record.url().substr(0, 64),
                        "\" does not hash to its key");
  }
  return "";
}

}  // namespace

UrlStore::UrlStore(const UrlStoreOptions& options, rocksdb::DB* db,
                   std::vector<rocksdb::ColumnFamilyHandle*> handles)
    : options_(options), db_(db), handles_(std::move(handles)) {}

UrlStore::~UrlStore() {
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    db_->DestroyColumnFamilyHandle(handle);
  }
  db_->Close();
}

absl::StatusOr<std::unique_ptr<UrlStore>> UrlStore::Open(const std::string& dir,
                                                         const UrlStoreOptions& options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = options.create_if_missing;
  // Two cores here: one flush and one compaction at a time.
  db_options.max_background_jobs = 2;
  db_options.keep_log_file_num = 4;
  db_options.max_log_file_size = size_t{16} << 20;
  // Recovery rebuilds the memtables from the log and leaves flushing to the
  // background, so that the shard starts serving sooner.
  db_options.avoid_flush_during_recovery = true;

  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  // Point reads skip the levels that do not hold the key.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.format_version = 5;

  rocksdb::ColumnFamilyOptions small;
  small.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // Point reads are of keys the shard knows are there (the URLs it holds in
  // memory, its settings): the filters of the upper levels spare reading
  // their blocks, but the bottom level's, ~90% of the keys, would spare
  // nothing. Leaving it out keeps ~1.1 bytes a URL less in memory (each open
  // table file's filter is resident).
  small.optimize_filters_for_hits = true;
  rocksdb::ColumnFamilyOptions urls = small;
  urls.write_buffer_size = options.write_buffer_bytes;
  urls.merge_operator = NewUrlRecordMergeOperator(options.limits);
  // URL ids are hashes, so every flush overlaps the whole next level: with
  // static level sizes a store of a few GB rewrote each record some 15 times
  // on its way down. Dynamic level sizes keep the levels in a 10x ratio from
  // the bottom up (write amplification ~ one rewrite per level that exists).
  urls.level_compaction_dynamic_level_bytes = true;
  // LZ4 where available, in the bottom level only, which holds ~90% of the
  // records: URLs compress well and LZ4 decodes fastest, which is what the
  // start-up scan needs; the upper levels are rewritten too often for
  // compressing them to pay (a bulk load of 10^7 URLs took 113 s with LZ4
  // at every level and static level sizes, 65 s like this).
  urls.compression = rocksdb::kNoCompression;
  for (rocksdb::CompressionType type : rocksdb::GetSupportedCompressions()) {
    if (type == rocksdb::kLZ4Compression) urls.bottommost_compression = type;
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> families(kNumFamilies);
  families[kDefault] = {rocksdb::kDefaultColumnFamilyName, small};
  families[kUrls] = {kUrlsFamily, urls};
  families[kHosts] = {kHostsFamily, small};
  rocksdb::ColumnFamilyOptions meta = small;
  meta.write_buffer_size = options.meta_write_buffer_bytes;
  families[kMeta] = {kMetaFamily, meta};
  for (rocksdb::ColumnFamilyDescriptor& family : families) {
    family.options.disable_auto_compactions = options.defer_compactions;
  }

  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir, families, &handles, &db);
  if (!s.ok()) {
    return FromRocks(s, absl::StrCat("opening the URL store in ", dir));
  }
  std::unique_ptr<UrlStore> store(new UrlStore(options, db, std::move(handles)));
  if (absl::Status format = store->CheckFormat(); !format.ok()) return format;
  return store;
}

absl::Status UrlStore::CheckFormat() {
  std::string format;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[kMeta], kFormatKey, &format);
  if (s.IsNotFound()) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    return FromRocks(db_->Put(sync, handles_[kMeta], kFormatKey, kFormat),
                     "writing the store format");
  }
  if (!s.ok()) return FromRocks(s, "reading the store format");
  if (format == kFormatWithoutJournal || format == kFormatSignalJournal) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    return FromRocks(db_->Put(sync, handles_[kMeta], kFormatKey, kFormat),
                     "upgrading the store format");
  }
  if (format != kFormat) {
    return absl::FailedPreconditionError(absl::StrCat("the URL store has format \"",
                                                      format.substr(0, 16),
                                                      "\"; this build reads format ", kFormat));
  }
  return absl::OkStatus();
}

UrlStore::Batch UrlStore::NewBatch() const { return Batch(this); }

absl::Status UrlStore::Write(Batch* batch, Durability durability) {
  rocksdb::WriteOptions write;
  write.sync = durability == Durability::kSync;
  absl::Status status = FromRocks(db_->Write(write, &batch->batch_), "writing a batch");
  batch->Clear();
  return status;
}

absl::StatusOr<UrlRecord> UrlStore::GetUrl(cluster::UrlId id) const {
  const UrlKey key = EncodeUrlKey(id);
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[kUrls], ToSlice(key), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("urls/", Hex(id), ": no record"));
  }
  if (!s.ok()) return FromRocks(s, absl::StrCat("reading urls/", Hex(id)));
  UrlRecord record;
  if (!ParseStoredRecord(value.data(), value.size(), options_.limits, &record)) {
    return absl::DataLossError(absl::StrCat("urls/", Hex(id), ": record does not parse"));
  }
  if (record.url().empty()) {
    return absl::NotFoundError(absl::StrCat("urls/", Hex(id), ": no record"));
  }
  if (std::string error = CheckUrlRecord(id, record); !error.empty()) {
    return absl::DataLossError(error);
  }
  return record;
}

absl::StatusOr<HostRecord> UrlStore::GetHost(absl::string_view host) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[kHosts], ToSlice(host), &value);
  if (!s.ok()) return FromRocks(s, absl::StrCat("reading hosts/", host));
  HostRecord record;
  if (!record.ParseFromString(value)) {
    return absl::DataLossError(absl::StrCat("hosts/", host, ": record does not parse"));
  }
  return record;
}

absl::StatusOr<ShardMeta> UrlStore::GetShardMeta() const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handles_[kMeta], kShardMetaKey, &value);
  if (!s.ok()) return FromRocks(s, "reading the shard's settings");
  ShardMeta meta;
  if (!meta.ParseFromString(value)) {
    return absl::DataLossError("meta/shard: record does not parse");
  }
  return meta;
}

absl::StatusOr<ScanStats> UrlStore::ScanUrls(
    absl::FunctionRef<void(cluster::UrlId id, const UrlRecord& record)> fn) const {
  return ScanUrlRange(0, ~cluster::UrlId{0}, fn);
}

absl::StatusOr<ScanStats> UrlStore::ScanUrlRange(
    cluster::UrlId first, cluster::UrlId last,
    absl::FunctionRef<void(cluster::UrlId id, const UrlRecord& record)> fn) const {
  rocksdb::ReadOptions read;
  // A one-off pass over everything: keep the cache for point reads, and
  // read ahead in large chunks.
  read.fill_cache = false;
  read.readahead_size = options_.scan_readahead_bytes;
  const UrlKey first_key = EncodeUrlKey(first);
  // Keys are 8 bytes: the upper bound (exclusive) of id `last` is its key
  // followed by a zero byte. The ends of the id space are left open, so
  // that a whole scan also meets (and reports) keys of other sizes.
  std::string bound(EncodeUrlKey(last).data(), sizeof(cluster::UrlId));
  bound.push_back('\0');
  const rocksdb::Slice upper(bound);
  if (last != ~cluster::UrlId{0}) read.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, handles_[kUrls]));
  ScanStats stats;
  auto malformed = [&stats](std::string error) {
    ++stats.malformed;
    if (stats.errors.size() < ScanStats::kMaxErrors) {
      stats.errors.push_back(std::move(error));
    }
  };
  UrlRecord record;
  if (first == 0) {
    it->SeekToFirst();
  } else {
    it->Seek(ToSlice(first_key));
  }
  for (; it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    if (key.size() != sizeof(cluster::UrlId)) {
      malformed(absl::StrCat("urls: key of ", key.size(), " bytes, not ", sizeof(cluster::UrlId)));
      continue;
    }
    const cluster::UrlId id = DecodeUrlKey(key);
    const rocksdb::Slice value = it->value();
    if (!ParseStoredRecord(value.data(), value.size(), options_.limits, &record)) {
      malformed(absl::StrCat("urls/", Hex(id), ": record does not parse"));
      continue;
    }
    if (record.url().empty()) {
      ++stats.orphans;
      continue;
    }
    if (std::string error = CheckUrlRecord(id, record); !error.empty()) {
      malformed(std::move(error));
      continue;
    }
    ++stats.records;
    fn(id, record);
  }
  if (!it->status().ok()) return FromRocks(it->status(), "scanning urls");
  return stats;
}

absl::StatusOr<ScanStats> UrlStore::ScanHosts(
    absl::FunctionRef<void(const HostRecord& host)> fn) const {
  rocksdb::ReadOptions read;
  // Start-up's pass, as ScanUrlRange's: the cache is for point reads.
  read.fill_cache = false;
  read.readahead_size = options_.scan_readahead_bytes;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, handles_[kHosts]));
  ScanStats stats;
  HostRecord record;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice value = it->value();
    if (!record.ParseFromArray(value.data(), static_cast<int>(value.size())) ||
        record.host() != absl::string_view(it->key().data(), it->key().size())) {
      ++stats.malformed;
      if (stats.errors.size() < ScanStats::kMaxErrors) {
        stats.errors.push_back(absl::StrCat(
            "hosts/", absl::string_view(it->key().data(), it->key().size()).substr(0, 64),
            ": record does not parse or names another host"));
      }
      continue;
    }
    ++stats.records;
    fn(record);
  }
  if (!it->status().ok()) return FromRocks(it->status(), "scanning hosts");
  return stats;
}

absl::StatusOr<int64_t> UrlStore::ScanJournal(
    absl::FunctionRef<void(uint64_t seq, absl::string_view entry)> fn) const {
  rocksdb::ReadOptions read;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, handles_[kMeta]));
  const char prefix[1] = {kJournalPrefix};
  int64_t entries = 0;
  for (it->Seek(rocksdb::Slice(prefix, 1)); it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    if (key.size() == 0 || key[0] != kJournalPrefix) break;
    if (key.size() != 1 + sizeof(uint64_t)) continue;
    const uint64_t seq = DecodeUrlKey(rocksdb::Slice(key.data() + 1, 8));
    fn(seq, absl::string_view(it->value().data(), it->value().size()));
    ++entries;
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), "scanning the journal");
  }
  return entries;
}

uint64_t UrlStore::EstimatedUrlCount() const {
  uint64_t count = 0;
  db_->GetIntProperty(handles_[kUrls], "rocksdb.estimate-num-keys", &count);
  return count;
}

StoreMemory UrlStore::Memory() const {
  StoreMemory memory;
  uint64_t value = 0;
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    if (db_->GetIntProperty(handle, rocksdb::DB::Properties::kSizeAllMemTables, &value)) {
      memory.memtables += value;
    }
    if (db_->GetIntProperty(handle, rocksdb::DB::Properties::kEstimateTableReadersMem, &value)) {
      memory.table_readers += value;
    }
  }
  // One cache, shared by the column families.
  if (db_->GetIntProperty(rocksdb::DB::Properties::kBlockCacheUsage, &value)) {
    memory.block_cache = value;
  }
  return memory;
}

absl::Status UrlStore::Flush() {
  rocksdb::FlushOptions flush;
  return FromRocks(db_->Flush(flush, handles_), "flushing");
}

absl::Status UrlStore::EnableCompactions() {
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    if (!db_->GetOptions(handle).disable_auto_compactions) continue;
    rocksdb::Status s = db_->SetOptions(handle, {{"disable_auto_compactions", "false"}});
    if (!s.ok()) return FromRocks(s, "turning compactions on");
  }
  return absl::OkStatus();
}

bool UrlStore::compactions_enabled() const {
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    if (db_->GetOptions(handle).disable_auto_compactions) return false;
  }
  return true;
}

absl::Status UrlStore::Compact() {
  rocksdb::CompactRangeOptions compact;
  // Rewrite the last level too, so that every patch is merged.
  compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (rocksdb::ColumnFamilyHandle* handle : handles_) {
    rocksdb::Status s = db_->CompactRange(compact, handle, nullptr, nullptr);
    if (!s.ok()) return FromRocks(s, "compacting");
  }
  return absl::OkStatus();
}

void UrlStore::Batch::Put(Family family, absl::string_view key,
                          const google::protobuf::MessageLite& value) {
  value.SerializeToString(&scratch_);
  batch_.Put(store_->handles_[family], ToSlice(key), scratch_);
}

void UrlStore::Batch::PutUrl(const UrlRecord& record) {
  const UrlKey key = EncodeUrlKey(cluster::UrlIdOf(record.url()));
  const RecordLimits& limits = store_->options_.limits;
  if (!WindowsWithinLimits(limits, record)) {
    UrlRecord trimmed = record;
    TrimWindows(limits, &trimmed);
    Put(kUrls, absl::string_view(key.data(), key.size()), trimmed);
  } else {
    Put(kUrls, absl::string_view(key.data(), key.size()), record);
  }
}

void UrlStore::Batch::PatchUrl(cluster::UrlId id, const UrlRecord& patch) {
  const UrlKey key = EncodeUrlKey(id);
  patch.SerializeToString(&scratch_);
  batch_.Merge(store_->handles_[kUrls], ToSlice(key), scratch_);
}

void UrlStore::Batch::DeleteUrl(cluster::UrlId id) {
  const UrlKey key = EncodeUrlKey(id);
  batch_.Delete(store_->handles_[kUrls], ToSlice(key));
}

void UrlStore::Batch::PutHost(const HostRecord& host) { Put(kHosts, host.host(), host); }

void UrlStore::Batch::DeleteHost(absl::string_view host) {
  batch_.Delete(store_->handles_[kHosts], ToSlice(host));
}

void UrlStore::Batch::PutShardMeta(const ShardMeta& meta) { Put(kMeta, kShardMetaKey, meta); }

namespace {

std::array<char, 1 + sizeof(uint64_t)> JournalKey(uint64_t seq) {
  std::array<char, 1 + sizeof(uint64_t)> key;
  key[0] = kJournalPrefix;
  // Big-endian: key order is sequence order.
  const UrlKey encoded = EncodeUrlKey(seq);
  std::copy(encoded.begin(), encoded.end(), key.begin() + 1);
  return key;
}

}  // namespace

void UrlStore::Batch::PutJournal(uint64_t seq, absl::string_view entry) {
  const auto key = JournalKey(seq);
  batch_.Put(store_->handles_[kMeta], rocksdb::Slice(key.data(), key.size()), ToSlice(entry));
}

void UrlStore::Batch::DeleteJournal(uint64_t begin, uint64_t end) {
  if (begin >= end) return;
  const auto from = JournalKey(begin);
  const auto to = JournalKey(end);
  batch_.DeleteRange(store_->handles_[kMeta], rocksdb::Slice(from.data(), from.size()),
                     rocksdb::Slice(to.data(), to.size()));
}

}  // namespace shard
}  // namespace recrawl
