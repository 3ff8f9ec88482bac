// Patches of URL records, applied by RocksDB's merge so that the shard can
// persist hot updates (a signal, a lease, a crawl report) without reading
// the stored record first: a point read costs 5-25 µs here against ~3 µs
// for a batched blind write, and the shard keeps only the hot part of a
// record in memory.
//
// A patch is a partial UrlRecord; applying it is protobuf's MergeFrom
// (present fields replace, repeated fields append) followed by cutting the
// windows to their bounds. That is associative, so RocksDB may combine
// patches before it meets the record, and the result is the same as
// applying them one by one in write order.
//
// Merging is mostly free: protobuf parses a concatenation of serialised
// messages exactly as the MergeFrom of them in order (a documented property
// of the wire format), so the merge operator appends a patch's bytes to the
// stored value and leaves the work to the reader, which parses once and
// trims (ParseStoredRecord). Only when a value grows past
// RecordLimits::normalize_above_bytes does the operator parse, apply, trim
// and re-serialise it. Parsing, applying and re-serialising on every merge
// cost ~2 µs per 300-byte record here, which compactions would pay for
// every signal.
#ifndef RECRAWL_SHARD_STORE_URL_RECORD_MERGE_H_
#define RECRAWL_SHARD_STORE_URL_RECORD_MERGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "rocksdb/merge_operator.h"
#include "shard/store/records.pb.h"

namespace recrawl {
namespace shard {

// Bounds of a stored record.
struct RecordLimits {
  // Window lengths; the newest entries are kept.
  int max_outcomes = 16;
  int max_signal_keys = 8;
  // A merged value (a record followed by patches) longer than this is
  // rewritten as one record. Readers parse at most about this much plus one
  // batch of patches per record.
  size_t normalize_above_bytes = 1024;
};

// Parses a stored value (a record, possibly followed by unmerged patches)
// into `record` and trims its windows. False if it does not parse.
bool ParseStoredRecord(const char* data, size_t size, const RecordLimits& limits,
                       UrlRecord* record);

// Appends one crawl to an outcome window (of a record or a patch), keeping
// its arrays aligned.
void AddOutcome(float elapsed, uint32_t signals, bool changed, OutcomeWindow* window);

// Entries of the window: the length of its shortest array.
int WindowSize(const OutcomeWindow& window);

// Whether `record`'s windows are within `limits` and aligned.
bool WindowsWithinLimits(const RecordLimits& limits, const UrlRecord& record);

// Cuts `record`'s windows to `limits`, dropping the oldest entries, and
// aligns the outcome arrays on their newest entries should they differ.
void TrimWindows(const RecordLimits& limits, UrlRecord* record);

// Applies `patch` to `record`.
void ApplyPatch(const UrlRecord& patch, const RecordLimits& limits, UrlRecord* record);

// The merge operator of column family "urls". A stored value that does not
// parse stays unparseable (patches cannot repair it), so that reads report
// it; RocksDB never sees a failed merge, which would stop compactions.
std::shared_ptr<rocksdb::MergeOperator> NewUrlRecordMergeOperator(const RecordLimits& limits);

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_STORE_URL_RECORD_MERGE_H_
