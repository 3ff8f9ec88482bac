// Duplicate detection for signals: a delivery of (URL, time, source) that
// was already counted must not count again (pingers resend unacknowledged
// batches after a broken stream).
//
// Only signals counted since the URL's last crawl can be duplicates that
// matter: a redelivery of an older one is dropped anyway, because its time
// is before the last crawl. So a shard keeps, per URL, a 64-bit Bloom filter
// of the keys counted since the last crawl (4 bits per key), cleared by the
// crawl. With n keys in it a new signal is taken for a duplicate with
// probability (1 − e^{−4n/64})⁴: 1.4e-5 for n = 1, 2.4e-3 for n = 4, 2.4%
// for n = 8, 16% for n = 16. The shard asks the filter only about signals
// no later than the latest one counted (PageSlot::latest_signal): a
// redelivery repeats a counted time, while signals arriving in time order
// are never taken for duplicates. Records keep the latest keys
// (UrlRecord.recent_signal_keys), from which the filter is rebuilt at
// start-up.
#ifndef RECRAWL_SHARD_SIGNAL_KEYS_H_
#define RECRAWL_SHARD_SIGNAL_KEYS_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cluster/url_id.h"
#include "proto/common.pb.h"

namespace recrawl {
namespace shard {

// The key of a delivery. The source UNSPECIFIED is OTHER.
inline uint64_t SignalKey(cluster::UrlId url, double time, SignalSource source) {
  if (source == SIGNAL_SOURCE_UNSPECIFIED) source = SIGNAL_SOURCE_OTHER;
  if (time == 0.0) time = 0.0;  // -0.0 and 0.0 are one time
  char bytes[sizeof(url) + sizeof(time) + 1];
  std::memcpy(bytes, &url, sizeof(url));
  std::memcpy(bytes + sizeof(url), &time, sizeof(time));
  bytes[sizeof(bytes) - 1] = static_cast<char>(source);
  return cluster::Fingerprint64(absl::string_view(bytes, sizeof(bytes)));
}

// The filter bits of a key: four 6-bit positions from its high bits.
inline uint64_t SignalKeyBits(uint64_t key) {
  return (uint64_t{1} << (key >> 58)) | (uint64_t{1} << ((key >> 52) & 63)) |
         (uint64_t{1} << ((key >> 46) & 63)) | (uint64_t{1} << ((key >> 40) & 63));
}

inline bool MayContainSignal(uint64_t filter, uint64_t key) {
  const uint64_t bits = SignalKeyBits(key);
  return (filter & bits) == bits;
}

inline void AddSignal(uint64_t key, uint64_t* filter) { *filter |= SignalKeyBits(key); }

// PageSlot::latest_signal for a signal `seconds` after the last crawl:
// rounded up to a float, so that a redelivery of the latest signal is never
// taken for a later one.
inline float LatestSignalOffset(double seconds) {
  float f = static_cast<float>(seconds);
  if (static_cast<double>(f) < seconds) {
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  }
  return f;
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_SIGNAL_KEYS_H_
