// The web that the main job (recrawl_local demo) crawls: m pages whose
// changes are Poisson(Δ) processes, and for a share of the pages a signal
// source that announces each change with probability λ (recall) and sends
// false signals as Poisson(ν); the other pages send nothing (λ = ν = 0).
// Page parameters come from sim::GenerateInstance and every event stream
// from sim::Rng (seed, page, stream), so a page's history depends only on
// the seed, whichever policy crawls it and in whatever order it is asked.
//
// Pure logic: every call takes the time; no clock, no I/O, no threads (the
// caller serialises calls). Time runs from 0, when every page was fetched
// (and so is fresh), to `horizon`.
//
// Freshness is measured exactly, not sampled: page i's served copy is fresh
// from a fetch until the page's first change after it, and the web's
// freshness over an interval is Σ μ_i·(time page i was fresh) / (Σ μ_i ·
// length), the request-weighted accuracy of the main paper (requests ~
// Poisson(μ_i)) without the noise of drawing requests.
#ifndef RECRAWL_DEMO_SIMULATED_WEB_H_
#define RECRAWL_DEMO_SIMULATED_WEB_H_

#include <cstdint>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/page_model.h"
#include "sim/rng.h"
#include "sim/world.h"

namespace recrawl {
namespace demo {

struct SimulatedWebConfig {
  int num_pages = 100000;
  // μ: requests per second, heavy-tailed.
  sim::Distribution importance = sim::Distribution::Pareto(1.5, 1.0);
  // Δ: changes per second.
  sim::Distribution change_rate = sim::Distribution::LogUniform(0.02, 0.5);
  // Share of the pages that have a signal source.
  double signal_share = 0.6;
  // λ and ν of the pages with a source. ν is drawn independently of Δ, so
  // the precision λΔ/(λΔ + ν) ranges from nearly 0 to nearly 1.
  sim::Distribution recall = sim::Distribution::Uniform(0.2, 0.95);
  sim::Distribution false_rate = sim::Distribution::LogUniform(0.005, 0.5);
  // Events are generated on (0, horizon].
  double horizon = 300.0;
  // Freshness is kept per window of horizon / windows.
  int windows = 30;
  uint64_t seed = 1;
  // Pages are spread over this many hosts (the URL's host is page % hosts).
  int hosts = 5000;
};

// A signal event for the pingers.
struct WebSignal {
  int32_t page = 0;
  double time = 0.0;
  bool announces_change = false;  // a true signal (else a false one)
};

// What a fetch found.
struct FetchOutcome {
  bool changed = false;  // a change since the page's previous fetch
  // The fetch's time was before the page's previous fetch (concurrent
  // fetchers): it was taken as that time.
  bool out_of_order = false;
};

// Counts over the run.
struct WebCounts {
  int64_t fetches = 0;
  int64_t unchanged_fetches = 0;
  int64_t out_of_order_fetches = 0;
  int64_t true_signals = 0;  // handed out by PopSignalsUntil
  int64_t false_signals = 0;
};

class SimulatedWeb {
 public:
  // Checks the configuration (an error names the field) and draws the
  // pages.
  static absl::StatusOr<SimulatedWeb> Create(const SimulatedWebConfig& config);

  const SimulatedWebConfig& config() const { return config_; }
  int num_pages() const { return static_cast<int>(pages_.size()); }
  // Raw μ, Δ, and λ, ν (0 for pages without a source).
  const std::vector<policy::PageParams>& pages() const { return pages_; }
  bool has_source(int page) const { return pages_[page].recall > 0 || pages_[page].false_rate > 0; }

  // The page's URL ("https://site<h>.example/page/<i>"), and back (-1 for a
  // URL that is not one of this web's).
  std::string Url(int page) const;
  int PageOfUrl(absl::string_view url) const;

  // Fetches `page` at time `t`: changed iff the page changed in
  // (previous fetch, t]. A `t` before the previous fetch is taken as the
  // previous fetch's time.
  FetchOutcome Fetch(int page, double t);

  // Appends the signals with time <= t not handed out yet, in time order.
  void PopSignalsUntil(double t, std::vector<WebSignal>* out);
  // The time of the next signal not handed out (+inf if none before the
  // horizon).
  double NextSignalTime() const;

  // Freshness over [0, t] (t <= horizon), fetches and changes so far
  // included. O(m).
  double FreshnessUntil(double t) const;

  // Freshness of each window over [0, t]: closes every page's fresh spell
  // at t (call once, at the end; later fetches are not counted). Windows
  // past t are NaN, the one holding t covers [start, t].
  std::vector<double> CloseWindows(double t);
  double window_width() const { return config_.horizon / config_.windows; }

  const WebCounts& counts() const { return counts_; }

 private:
  // A page's change process as seen by its fetches.
  struct FetchState {
    sim::Rng changes;
    double next_change = 0.0;  // first change after last_fetch
    double last_fetch = 0.0;
  };
  // A page's signal process (its own copy of the change stream).
  struct SignalState {
    int32_t page = 0;
    sim::Rng changes;
    sim::Rng recall;
    sim::Rng false_signals;
    double next_true = 0.0;
    double next_false = 0.0;
  };

  explicit SimulatedWeb(const SimulatedWebConfig& config) : config_(config) {}
  // Advances a change stream to its next change (+inf past the horizon).
  double NextChange(sim::Rng& rng, double after, double rate) const;
  void AdvanceTrue(SignalState& s);
  void AdvanceFalse(SignalState& s);
  // Adds μ·|[from, to) ∩ window| to each window it touches.
  void AddFresh(double importance, double from, double to);

  SimulatedWebConfig config_;
  std::vector<policy::PageParams> pages_;
  double total_importance_ = 0.0;
  std::vector<FetchState> fetch_;
  std::vector<SignalState> signal_;
  // (next signal time, index into signal_), earliest first.
  using HeapItem = std::pair<double, int32_t>;
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<HeapItem>> heap_;
  std::vector<double> window_fresh_;  // Σ μ·fresh time per window
  WebCounts counts_;
};

}  // namespace demo
}  // namespace recrawl

#endif  // RECRAWL_DEMO_SIMULATED_WEB_H_
