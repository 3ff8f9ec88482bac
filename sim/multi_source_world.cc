#include "sim/multi_source_world.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/rng.h"

namespace recrawl {
namespace sim {
namespace {

// Host streams are named like pages, past any page index.
constexpr uint64_t kHostStreamBase = uint64_t{1} << 40;

}  // namespace

MultiSourceInstance GenerateMultiSourceInstance(const MultiSourceWorldConfig& config, uint64_t seed,
                                                uint64_t instance) {
  MultiSourceInstance out;
  const int m = config.num_pages;
  const int per_host = std::max(1, config.pages_per_host);
  const size_t num_sources = config.sources.size();
  std::vector<policy::SourceParams> host_sources(num_sources);
  for (int i = 0; i < m; ++i) {
    if (i % per_host == 0) {
      Rng host(seed, instance, kHostStreamBase + static_cast<uint64_t>(i / per_host),
               Stream::kParams);
      for (size_t s = 0; s < num_sources; ++s) {
        const SourceDistribution& d = config.sources[s];
        host_sources[s] = {host.Uniform(d.recall_lo, d.recall_hi),
                           host.Uniform(d.false_lo, d.false_hi)};
      }
    }
    Rng page(seed, instance, static_cast<uint64_t>(i), Stream::kParams);
    policy::MultiSourceParams p;
    p.importance = page.Uniform();
    p.change_rate = page.Uniform();
    for (size_t s = 0; s < num_sources; ++s) {
      const SourceDistribution& d = config.sources[s];
      const double recall = host_sources[s].recall + page.Uniform(-d.recall_noise, d.recall_noise);
      const double false_rate =
          host_sources[s].false_rate * std::exp(page.Uniform(-d.false_noise, d.false_noise));
      p.sources.push_back({std::clamp(recall, 0.0, 1.0), false_rate});
    }
    const policy::PageModel merged = policy::MultiSourceModel::Create(p)->Merged();
    out.merged.pages.push_back(merged.params());
    out.pages.push_back(std::move(p));
  }
  return out;
}

MultiSourceRealization RealizeMultiSource(const MultiSourceWorldConfig& config,
                                          const MultiSourceInstance& instance, uint64_t seed,
                                          uint64_t instance_number) {
  MultiSourceRealization out;
  Realization& r = out.world;
  r.horizon = config.horizon;
  r.slot_times = BandwidthSchedule::Constant(config.bandwidth).SlotTimes(config.horizon);
  const double last_slot = r.slot_times.empty() ? 0.0 : r.slot_times.back();
  const int m = static_cast<int>(instance.pages.size());
  // (bucket, page, time, sources) before the counting sort.
  std::vector<std::tuple<int64_t, int32_t, double, uint32_t>> signals;
  const auto add = [&](int32_t page, double t, uint32_t sources) {
    const int64_t bucket =
        std::lower_bound(r.slot_times.begin(), r.slot_times.end(), t) - r.slot_times.begin();
    signals.emplace_back(bucket, page, t, sources);
  };
  r.change_begin.assign(m + 1, 0);
  for (int i = 0; i < m; ++i) {
    const policy::MultiSourceParams& p = instance.pages[i];
    r.change_begin[i] = static_cast<int64_t>(r.change_times.size());
    Rng changes(seed, instance_number, i, Stream::kChanges);
    Rng recall(seed, instance_number, i, Stream::kTrueSignals);
    if (p.change_rate > 0) {
      for (double t = changes.Exponential(p.change_rate); t <= config.horizon;
           t += changes.Exponential(p.change_rate)) {
        r.change_times.push_back(t);
        uint32_t sources = 0;
        for (size_t s = 0; s < p.sources.size(); ++s) {
          if (recall.Uniform() < p.sources[s].recall) sources |= 1u << s;
        }
        if (sources != 0 && t <= last_slot) {
          add(i, t, sources);
          ++r.num_true_signals;
        }
      }
    }
    Rng fp(seed, instance_number, i, Stream::kFalseSignals);
    for (size_t s = 0; s < p.sources.size(); ++s) {
      const double nu = p.sources[s].false_rate;
      if (nu <= 0) continue;
      for (double t = fp.Exponential(nu); t <= last_slot; t += fp.Exponential(nu)) {
        add(i, t, 1u << s);
        ++r.num_false_signals;
      }
    }
  }
  r.change_begin[m] = static_cast<int64_t>(r.change_times.size());
  std::sort(signals.begin(), signals.end());
  const size_t num_slots = r.slot_times.size();
  r.signal_begin.assign(num_slots + 1, 0);
  for (const auto& s : signals) ++r.signal_begin[std::get<0>(s) + 1];
  for (size_t j = 0; j < num_slots; ++j) r.signal_begin[j + 1] += r.signal_begin[j];
  for (const auto& [bucket, page, t, sources] : signals) {
    r.signal_page.push_back(page);
    r.signal_time.push_back(t);
    out.signal_sources.push_back(sources);
  }
  return out;
}

}  // namespace sim
}  // namespace recrawl
