// A simulated web with host structure and several signal sources per page
// (docs/multi_source_model.md): every host has an accurate source (a CDN's
// purges: high recall, few false signals) and a noisy one (a CMS that bumps
// sitemap lastmods: moderate recall, many false signals). A host draws its
// sources' (λ_s, ν_s) once; its pages share them up to noise. Pages draw
// μ, Δ ~ U[0, 1] as in the main paper's Sec. 6.1. Each change is signalled by
// source s with probability λ_s independently; source s's false signals are
// Poisson(ν_s); signals are not delayed.
//
// Pure functions of (config, seed, instance number); the change process and
// the requests come from the same streams as sim/world.h's, so
// sim/metrics.h's Evaluate scores a run.
#ifndef RECRAWL_SIM_MULTI_SOURCE_WORLD_H_
#define RECRAWL_SIM_MULTI_SOURCE_WORLD_H_

#include <cstdint>
#include <vector>

#include "policy/multi_source_model.h"
#include "sim/world.h"

namespace recrawl {
namespace sim {

// Per-host draws of one source: λ ~ U[recall_lo, recall_hi],
// ν ~ U[false_lo, false_hi]; a page's λ is the host's plus U[−recall_noise,
// recall_noise] (clamped to [0, 1]) and its ν the host's times
// exp(U[−false_noise, false_noise]).
struct SourceDistribution {
  double recall_lo = 0.0, recall_hi = 0.0;
  double false_lo = 0.0, false_hi = 0.0;
  double recall_noise = 0.05;
  double false_noise = 0.2;
};

// A CDN's purges: high recall, few false signals.
inline constexpr SourceDistribution kCdnSource = {0.6, 0.95, 0.005, 0.05, 0.05, 0.2};
// Sitemap lastmods bumped by a CMS: moderate recall, many false signals.
inline constexpr SourceDistribution kCmsSitemapSource = {0.3, 0.8, 0.5, 1.5, 0.05, 0.2};
// Sitemap lastmods a CMS bumps nightly whatever changed: pure noise (λ = 0
// on every page), false signals as kCmsSitemapSource's. Its draws use the
// same random streams, so a world with it in place of kCmsSitemapSource has
// the same pages, CDN sources and false signals.
inline constexpr SourceDistribution kCmsNoiseSource = {0.0, 0.0, 0.5, 1.5, 0.0, 0.2};

struct MultiSourceWorldConfig {
  int num_pages = 1000;
  int pages_per_host = 10;
  // Source 0: CDN purges; source 1: sitemap lastmod bumped by a CMS.
  std::vector<SourceDistribution> sources = {kCdnSource, kCmsSitemapSource};
  double bandwidth = 100.0;  // R: slots at j/R
  double horizon = 1000.0;
};

struct MultiSourceInstance {
  std::vector<policy::MultiSourceParams> pages;  // importance = raw μ
  // The same pages for Evaluate (μ, Δ; λ, ν of the merged stream).
  Instance merged;
};

MultiSourceInstance GenerateMultiSourceInstance(const MultiSourceWorldConfig& config, uint64_t seed,
                                                uint64_t instance);

// A realisation: `world` holds the slots, the changes and every signalling
// instant (a change signalled by several sources is one instant), bucketed
// by slot as in sim/world.h; signal_sources[k] is the bit set of the sources
// that signalled at world.signal_time[k] (bit s for source s).
struct MultiSourceRealization {
  Realization world;
  std::vector<uint32_t> signal_sources;
};

MultiSourceRealization RealizeMultiSource(const MultiSourceWorldConfig& config,
                                          const MultiSourceInstance& instance, uint64_t seed,
                                          uint64_t instance_number);

}  // namespace sim
}  // namespace recrawl

#endif  // RECRAWL_SIM_MULTI_SOURCE_WORLD_H_
