#include "coordinator/bandwidth_split.h"

#include <algorithm>
#include <cmath>

namespace recrawl {
namespace coordinator {
namespace {

int CountLive(const std::vector<bool>& live) {
  return static_cast<int>(std::count(live.begin(), live.end(), true));
}

bool Known(double level) { return std::isfinite(level) && level > 0.0; }

// Scales the live shards' weights to sum to `bandwidth` with none below
// `floor` (water-filling: shards at the floor are fixed, the rest share what
// is left in proportion to their weights).
std::vector<double> Normalise(double bandwidth, std::vector<double> weights,
                              const std::vector<bool>& live, double floor) {
  const size_t n = weights.size();
  std::vector<bool> pinned(n, false);
  std::vector<double> out(n, 0.0);
  for (size_t round = 0; round <= n; ++round) {
    double free_weight = 0.0;
    double free_budget = bandwidth;
    for (size_t i = 0; i < n; ++i) {
      if (!live[i]) continue;
      if (pinned[i]) {
        free_budget -= floor;
      } else {
        free_weight += weights[i];
      }
    }
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (!live[i]) continue;
      out[i] = pinned[i] || free_weight <= 0.0 ? floor : free_budget * weights[i] / free_weight;
      if (!pinned[i] && out[i] < floor) {
        pinned[i] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return out;
}

}  // namespace

std::vector<double> EqualSplit(double bandwidth, const std::vector<bool>& live) {
  const int n = CountLive(live);
  std::vector<double> out(live.size(), 0.0);
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i]) out[i] = bandwidth / n;
  }
  return out;
}

std::vector<double> AdaptiveStep(double bandwidth, const std::vector<double>& budgets,
                                 const std::vector<double>& levels, const std::vector<bool>& live,
                                 const AdaptiveSplitOptions& options) {
  const size_t n = live.size();
  const int live_count = CountLive(live);
  if (live_count == 0) return std::vector<double>(n, 0.0);
  const double fair = bandwidth / live_count;
  // Start from the current split, re-spread over the live shards.
  std::vector<double> weights(n, 0.0);
  double log_mean = 0.0;
  double known_weight = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (!live[i]) continue;
    weights[i] = i < budgets.size() && budgets[i] > 0.0 ? budgets[i] : fair;
    if (i < levels.size() && Known(levels[i])) {
      log_mean += weights[i] * std::log(levels[i]);
      known_weight += weights[i];
    }
  }
  if (known_weight > 0.0) {
    log_mean /= known_weight;
    for (size_t i = 0; i < n; ++i) {
      if (live[i] && i < levels.size() && Known(levels[i])) {
        weights[i] *= std::exp(options.step * (std::log(levels[i]) - log_mean));
      }
    }
  }
  return Normalise(bandwidth, weights, live, options.min_share * fair);
}

}  // namespace coordinator
}  // namespace recrawl
