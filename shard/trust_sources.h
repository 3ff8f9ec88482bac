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

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_TRUST_SOURCES_H_
