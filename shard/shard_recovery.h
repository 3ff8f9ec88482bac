// Start-up's rebuilding of a shard's memory from its store (private to the
// shard library; shard.h says what Open restores).
#ifndef RECRAWL_SHARD_SHARD_RECOVERY_H_
#define RECRAWL_SHARD_SHARD_RECOVERY_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "shard/shard.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {

// Loads the URL records into the shard's tables and the index, then replays
// the journal on top of them, and leaves the journal writer where the
// stored journal ends. Holds the scratch state both steps share; lives for
// the duration of Shard::Start. Called in this order, once each, on a shard
// whose settings and hosts are loaded and whose tables are otherwise
// empty. Not thread-safe (LoadUrls runs its own scanning threads).
class Shard::Recovery {
 public:
  explicit Recovery(Shard* shard) : shard_(*shard) {}

  Recovery(const Recovery&) = delete;
  Recovery& operator=(const Recovery&) = delete;

  // Loads every URL record (a parallel scan, ShardOptions::startup_threads):
  // the page, its host, its place in the index (without its signals, which
  // IndexLoadedState gives the index once the journal has given them all),
  // and a lease or hold the record has. Records the shard would reject are
  // counted in StartupReport::malformed and skipped. Fails if the scan
  // does (an I/O or checksum error of the store).
  absl::StatusOr<ScanStats> LoadUrls();

  // Applies the journal's entries on top of the loaded records and sets the
  // journal writer to continue after them. Torn or unreadable records are
  // counted in StartupReport::malformed. Fails if the store's scan does.
  absl::Status ReplayJournal();

 private:
  struct LoadedUrl;
  // What LoadUrl needs of a record. Thread-safe: reads only the options.
  void DecodeRecord(const UrlRecord& record, LoadedUrl* out) const;
  // Rebuilds one URL's memory from its decoded record; `part` is the part
  // of the scan it came from.
  void LoadUrl(int part, const LoadedUrl& url);

  Shard& shard_;
  // Each loaded page's record's signal_seq (the first entry that applies
  // to it), and the highest of them.
  std::vector<uint64_t> record_seq_;
  uint64_t max_record_seq_ = 0;
  // By URL prefix (PageSlot::prefix), the id of the URL's own host.
  std::vector<HostId> prefix_host_;
  // The last id loaded of each part of the scan.
  std::vector<std::optional<cluster::UrlId>> last_id_;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_SHARD_RECOVERY_H_
