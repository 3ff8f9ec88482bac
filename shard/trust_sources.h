// The signal sources a shard tells apart when it learns how far each can be
// trusted (host_trust.h), and their fixed places in per-source counts.
#ifndef RECRAWL_SHARD_TRUST_SOURCES_H_
#define RECRAWL_SHARD_TRUST_SOURCES_H_

#include <array>
#include <cstdint>

#include "proto/common.pb.h"

namespace recrawl {
namespace shard {

// Sitemap 0, CDN 1, IndexNow 2, WebSub 3, and everything else (OTHER,
// UNSPECIFIED) 4.
inline constexpr int kTrustSources = 5;
inline constexpr int kOtherTrustSource = kTrustSources - 1;

inline int TrustSourceIndex(SignalSource source) {
  switch (source) {
    case SIGNAL_SOURCE_SITEMAP:
      return 0;
    case SIGNAL_SOURCE_CDN:
      return 1;
    case SIGNAL_SOURCE_INDEXNOW:
      return 2;
    case SIGNAL_SOURCE_WEBSUB:
      return 3;
    default:
      return kOtherTrustSource;
  }
}

inline SignalSource TrustSourceAt(int index) {
  constexpr SignalSource kOrder[kTrustSources] = {SIGNAL_SOURCE_SITEMAP, SIGNAL_SOURCE_CDN,
                                                  SIGNAL_SOURCE_INDEXNOW, SIGNAL_SOURCE_WEBSUB,
                                                  SIGNAL_SOURCE_OTHER};
  return kOrder[index];
}

// Signals of one crawl interval, by TrustSourceIndex.
using SourceCounts = std::array<int64_t, kTrustSources>;

// A crawl interval's signals once one change's signals from several sources
// are matched (docs/multi_source_model.md, (M2)): the single-source events
// of each source, and the joint events (signalling instants of two sources
// or more).
struct IntervalSignals {
  SourceCounts single = {};
  int64_t joint = 0;
};

// How a page's signals since its last crawl split by source, as a page's
// crawl-state entry and the journal's folds keep it (bytes: a count that
// would pass 255 makes the split unknown instead).
struct SignalSplit {
  // Single-source events of each named source (all but "other").
  std::array<uint8_t, kOtherTrustSource> named = {};
  uint8_t joint_events = 0;
  // The signals the joint events took in (two or more each): the rest of
  // the page's signals not in `named` are "other"'s single-source events.
  uint8_t joint_signals = 0;
  // The sources of the latest signalling instant (bit TrustSourceIndex),
  // which a signal of another source within the matching window joins.
  uint8_t latest_sources = 0;
};

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_TRUST_SOURCES_H_
