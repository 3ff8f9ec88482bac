// The format of a shard's journal: counted signals and lease records, one
// entry per request, stored under sequential keys (UrlStore::Batch::
// PutJournal). JournalWriter (journal_writer.h) builds and writes entries;
// JournalReader (journal_reader.h) reads them back at start-up.
//
// An entry is a sequence of records, each a tag byte and fixed-width fields
// in host byte order (little-endian on the x86-64 and arm64 machines
// recrawl builds for):
//   'T' url(8) time(8) key(8) source(1)          a counted signal from
//                                                source TrustSourceIndex
//   'J' url(8) n_cis(2) filter(8) latest(4) named(4) joint_events(1)
//       joint_signals(1) latest_sources(1)
//                                                a URL's whole signal state
//                                                since its last crawl, with
//                                                its split by source
//                                                (SignalSplit,
//                                                trust_sources.h)
//   'G' url(8) n_cis(2) filter(8) latest(4) named(4)
//                                                'J' from before signals
//                                                were matched: no joint
//                                                events
//   'S' url(8) time(8) key(8)                    a counted signal, source
//                                                not known
//   'F' url(8) n_cis(2) filter(8) latest(4)      'G' without the split by
//                                                source
//   'L' url(8) id(8) deadline(8) holder_size(2) holder
//                                                a lease granted
//   'E' url(8) id(8)                             a lease ended by a failed
//                                                fetch or a release
// A URL's record says from which entry on the journal applies to it
// (UrlRecord.signal_seq): earlier entries are in the record already.
#ifndef RECRAWL_SHARD_JOURNAL_FORMAT_H_
#define RECRAWL_SHARD_JOURNAL_FORMAT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"
#include "cluster/url_id.h"
#include "shard/trust_sources.h"

namespace recrawl {
namespace shard {

// JournalSignal::source of a signal whose source the record does not say.
inline constexpr int8_t kUnknownJournalSource = -1;

// The records, as written and as read.
struct JournalSignal {
  cluster::UrlId url;
  double time;
  uint64_t key;
  // TrustSourceIndex of its source; kUnknownJournalSource when not known.
  int8_t source = kUnknownJournalSource;
};

struct JournalState {
  cluster::UrlId url;
  uint16_t n_cis;
  uint64_t filter;
  float latest;
  // Whether `split` holds how the n_cis signals split by source.
  bool split_known = false;
  SignalSplit split = {};
};

struct JournalLease {
  cluster::UrlId url;
  uint64_t id;
  double deadline;
  absl::string_view holder;  // at most kMaxJournalHolder bytes
};

struct JournalLeaseEnd {
  cluster::UrlId url;
  uint64_t id;
};

inline constexpr char kJournalSourcedSignalTag = 'T';
inline constexpr char kJournalJointStateTag = 'J';
inline constexpr char kJournalSplitStateTag = 'G';
inline constexpr char kJournalSignalTag = 'S';
inline constexpr char kJournalStateTag = 'F';
inline constexpr char kJournalLeaseTag = 'L';
inline constexpr char kJournalLeaseEndTag = 'E';

// Bytes of each record, tag included.
inline constexpr size_t kJournalSignalBytes = 25;
inline constexpr size_t kJournalSourcedSignalBytes = kJournalSignalBytes + 1;
inline constexpr size_t kJournalStateBytes = 23;
inline constexpr size_t kJournalSplitStateBytes = kJournalStateBytes + kOtherTrustSource;
inline constexpr size_t kJournalJointStateBytes = kJournalSplitStateBytes + 3;
inline constexpr size_t kJournalLeaseBytes = 27;  // without the holder
inline constexpr size_t kJournalLeaseEndBytes = 17;
inline constexpr size_t kMaxJournalHolder = 0xffff;

namespace journal_internal {

// A field in host byte order.
template <typename T>
void PutFixed(const T& v, std::string* out) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
template <typename T>
T GetFixed(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace journal_internal
}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_JOURNAL_FORMAT_H_
