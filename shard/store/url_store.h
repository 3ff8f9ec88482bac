// A shard's durable state in RocksDB.
//
// Column families:
//   urls   UrlId (8 bytes, big-endian) -> UrlRecord   (per-URL state)
//   hosts  normalised host             -> HostRecord  (politeness)
//   meta   "shard"                     -> ShardMeta   (settings, lease ids)
//          "store_format"              -> format version of this layout
//          "j" + 8-byte big-endian seq -> a journal entry (bytes the shard
//                                         defines, shard/journal_format.h)
//
// The shard keeps the hot state in memory and uses the store for three
// things (docs/design.md, "Why memory first"): batched writes, acknowledged to
// clients once Write() returns (the batch is then in the write-ahead log and
// survives a process crash; with Durability::kSync also a machine crash);
// one full scan at start-up to rebuild memory; and point reads for
// single-URL queries. Hot updates are written as patches (PatchUrl) that
// RocksDB merges into the record, so they need no read.
//
// Thread-safe: RocksDB serialises writers; a Batch belongs to one thread.
#ifndef RECRAWL_SHARD_STORE_URL_STORE_H_
#define RECRAWL_SHARD_STORE_URL_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cluster/url_id.h"
#include "rocksdb/write_batch.h"
#include "shard/store/records.pb.h"
#include "shard/store/url_record_merge.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace recrawl {
namespace shard {

// What RocksDB holds in memory, by its own estimates (bytes).
struct StoreMemory {
  // The memtables of all column families, active and immutable.
  size_t memtables = 0;
  // The index and filter blocks of the open table files.
  size_t table_readers = 0;
  // Blocks in the block cache.
  size_t block_cache = 0;
};

struct UrlStoreOptions {
  bool create_if_missing = true;
  // Bounds of each record, enforced when it is written and when it is read.
  RecordLimits limits;
  // RocksDB's block cache, shared by the column families (point reads).
  size_t block_cache_bytes = size_t{64} << 20;
  // Memtable size of column family "urls". It bounds what a restart after a
  // crash replays from the log: replay inserts random keys into a skip list
  // at ~3-4 µs each here, ~4 s for the 1M patches a 64 MB memtable holds,
  // ~1 s for 16 MB (url_store_benchmark).
  size_t write_buffer_bytes = size_t{16} << 20;
  // Memtable size of column family "meta", which holds the journal of
  // signals and leases (RocksDB's default). Until a memtable fills and is flushed, a shard's
  // memory grows with the writes: these two bound that growth.
  size_t meta_write_buffer_bytes = size_t{64} << 20;
  // Read-ahead of the start-up scan.
  size_t scan_readahead_bytes = size_t{4} << 20;
  // Opens with RocksDB's automatic compactions off until EnableCompactions:
  // a shard's start-up scans the whole store on every core, and the
  // compactions a crash left pending would take a core from it. Writes
  // meanwhile are flushed into level 0 as usual.
  bool defer_compactions = false;
};

enum class Durability {
  // In the write-ahead log (the OS's page cache): survives the process.
  kWal,
  // And fsync'ed: survives the machine.
  kSync,
};

// What a scan met besides the records it passed on.
struct ScanStats {
  // Records passed to the callback.
  int64_t records = 0;
  // Skipped: unparseable, a key of the wrong size, no URL matching the key.
  int64_t malformed = 0;
  // Skipped: patches of deleted URLs (no URL); harmless.
  int64_t orphans = 0;
  // Descriptions of the first malformed records (at most kMaxErrors).
  std::vector<std::string> errors;
  static constexpr size_t kMaxErrors = 16;
};

class UrlStore {
 public:
  class Batch;

  // Opens (creating if allowed) the store in directory `dir`. Fails with a
  // message naming the cause when the directory is locked by another
  // process, holds a newer format, or cannot be created.
  static absl::StatusOr<std::unique_ptr<UrlStore>> Open(const std::string& dir,
                                                        const UrlStoreOptions& options = {});

  UrlStore(const UrlStore&) = delete;
  UrlStore& operator=(const UrlStore&) = delete;
  // Closes the database; acknowledged writes are already in the log.
  ~UrlStore();

  // An empty batch for this store; must not outlive it.
  Batch NewBatch() const;

  // Applies every mutation of `batch` atomically (all or none, also across
  // a crash), then clears it. On return the batch is durable as asked.
  absl::Status Write(Batch* batch, Durability durability = Durability::kWal);

  // The record of a URL: NotFound if there is none, DataLoss if it is
  // malformed (see ScanStats). Made for keys that are there: the bottom
  // level keeps no filter, so an absent key costs a read of its block.
  absl::StatusOr<UrlRecord> GetUrl(cluster::UrlId id) const;
  absl::StatusOr<HostRecord> GetHost(absl::string_view host) const;
  // NotFound until a ShardMeta was written.
  absl::StatusOr<ShardMeta> GetShardMeta() const;

  // Calls `fn` for every well-formed URL record, in key order. `record` is
  // reused between calls (copy what you keep). Malformed records are counted
  // and skipped so that a shard starts with what is intact; an I/O or
  // checksum error of RocksDB itself fails the scan. Scans read ahead and
  // leave the block cache to the point reads.
  absl::StatusOr<ScanStats> ScanUrls(
      absl::FunctionRef<void(cluster::UrlId id, const UrlRecord& record)> fn) const;
  // The same over the records whose ids are in [first, last]: disjoint
  // ranges may be scanned concurrently, one thread each (start-up).
  absl::StatusOr<ScanStats> ScanUrlRange(
      cluster::UrlId first, cluster::UrlId last,
      absl::FunctionRef<void(cluster::UrlId id, const UrlRecord& record)> fn) const;
  absl::StatusOr<ScanStats> ScanHosts(absl::FunctionRef<void(const HostRecord& host)> fn) const;
  // Calls `fn` for every journal entry, in sequence order; returns how many.
  absl::StatusOr<int64_t> ScanJournal(
      absl::FunctionRef<void(uint64_t seq, absl::string_view entry)> fn) const;

  // RocksDB's estimate of the number of URL records (cheap, approximate).
  uint64_t EstimatedUrlCount() const;

  // RocksDB's memory now.
  StoreMemory Memory() const;

  // Turns automatic compactions on (they are on from the start unless
  // UrlStoreOptions::defer_compactions); pending ones start in the
  // background. Thread-safe.
  absl::Status EnableCompactions();
  // Whether automatic compactions are on.
  bool compactions_enabled() const;

  // Writes the memtables to table files (a restart then replays less log).
  absl::Status Flush();
  // Rewrites all table files, merging patches into their records: after a
  // bulk load, and for tests.
  absl::Status Compact();

 private:
  enum Family { kDefault, kUrls, kHosts, kMeta, kNumFamilies };

  UrlStore(const UrlStoreOptions& options, rocksdb::DB* db,
           std::vector<rocksdb::ColumnFamilyHandle*> handles);
  absl::Status CheckFormat();

  const UrlStoreOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// Mutations to apply together with UrlStore::Write.
class UrlStore::Batch {
 public:
  // Replaces the record of URL record.url(), which must be normalised and
  // is the key (windows cut to the store's limits).
  void PutUrl(const UrlRecord& record);
  // Merges `patch` into the URL's stored record (url_record_merge.h).
  void PatchUrl(cluster::UrlId id, const UrlRecord& patch);
  void DeleteUrl(cluster::UrlId id);
  // Keyed by host.host().
  void PutHost(const HostRecord& host);
  void DeleteHost(absl::string_view host);
  void PutShardMeta(const ShardMeta& meta);
  // Journal entries: sequential keys, so appending is cheap for RocksDB
  // (a memtable insert at the end of the skip list, one per entry).
  void PutJournal(uint64_t seq, absl::string_view entry);
  // Removes the entries with begin <= seq < end.
  void DeleteJournal(uint64_t begin, uint64_t end);

  // Mutations so far.
  int count() const { return batch_.Count(); }
  // Bytes RocksDB will log.
  size_t bytes() const { return batch_.GetDataSize(); }
  void Clear() { batch_.Clear(); }

 private:
  friend class UrlStore;
  explicit Batch(const UrlStore* store) : store_(store) {}
  void Put(Family family, absl::string_view key, const google::protobuf::MessageLite& value);

  const UrlStore* store_;
  rocksdb::WriteBatch batch_;
  std::string scratch_;  // serialisation buffer, reused
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_STORE_URL_STORE_H_
