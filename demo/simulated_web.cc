#include "demo/simulated_web.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace demo {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr absl::string_view kPagePath = "/page/";

}  // namespace

absl::StatusOr<SimulatedWeb> SimulatedWeb::Create(const SimulatedWebConfig& config) {
  if (config.num_pages < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_pages: must be >= 1, got ", config.num_pages));
  }
  if (!(config.signal_share >= 0.0 && config.signal_share <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("signal_share: must be in [0, 1], got ", config.signal_share));
  }
  if (!(config.horizon > 0.0) || !std::isfinite(config.horizon)) {
    return absl::InvalidArgumentError(
        absl::StrCat("horizon: must be positive and finite, got ", config.horizon));
  }
  if (config.windows < 1) {
    return absl::InvalidArgumentError(absl::StrCat("windows: must be >= 1, got ", config.windows));
  }
  if (config.hosts < 1) {
    return absl::InvalidArgumentError(absl::StrCat("hosts: must be >= 1, got ", config.hosts));
  }

  SimulatedWeb web(config);
  sim::WorldConfig world;
  world.num_pages = config.num_pages;
  world.importance = config.importance;
  world.change_rate = config.change_rate;
  world.recall = config.recall;
  world.false_rate = config.false_rate;
  web.pages_ = sim::GenerateInstance(world, config.seed, 0).pages;

  const int m = config.num_pages;
  web.fetch_.reserve(m);
  for (int i = 0; i < m; ++i) {
    policy::PageParams& p = web.pages_[i];
    sim::Rng source(config.seed, 0, i, sim::Stream::kSignalSource);
    if (!(source.Uniform() < config.signal_share)) {
      p.recall = 0.0;
      p.false_rate = 0.0;
    }
    web.total_importance_ += p.importance;

    FetchState f{sim::Rng(config.seed, 0, i, sim::Stream::kChanges)};
    f.next_change = web.NextChange(f.changes, 0.0, p.change_rate);
    web.fetch_.push_back(f);

    if (!web.has_source(i)) continue;
    SignalState s{i, sim::Rng(config.seed, 0, i, sim::Stream::kChanges),
                  sim::Rng(config.seed, 0, i, sim::Stream::kTrueSignals),
                  sim::Rng(config.seed, 0, i, sim::Stream::kFalseSignals)};
    web.AdvanceTrue(s);
    web.AdvanceFalse(s);
    const double next = std::min(s.next_true, s.next_false);
    if (next < kNever) {
      web.heap_.emplace(next, static_cast<int32_t>(web.signal_.size()));
    }
    web.signal_.push_back(s);
  }
  if (!(web.total_importance_ > 0.0)) {
    return absl::InvalidArgumentError("importance: the pages' importances sum to 0");
  }
  web.window_fresh_.assign(config.windows, 0.0);
  return web;
}

std::string SimulatedWeb::Url(int page) const {
  return absl::StrCat("https://site", page % config_.hosts, ".example", kPagePath, page);
}

int SimulatedWeb::PageOfUrl(absl::string_view url) const {
  const size_t at = url.rfind(kPagePath);
  int page = -1;
  if (at == absl::string_view::npos ||
      !absl::SimpleAtoi(url.substr(at + kPagePath.size()), &page) || page < 0 ||
      page >= num_pages()) {
    return -1;
  }
  return page;
}

double SimulatedWeb::NextChange(sim::Rng& rng, double after, double rate) const {
  if (!(rate > 0.0) || after == kNever) return kNever;
  const double t = after + rng.Exponential(rate);
  return t <= config_.horizon ? t : kNever;
}

void SimulatedWeb::AdvanceTrue(SignalState& s) {
  const policy::PageParams& p = pages_[s.page];
  // next_true is the change the last true signal announced (0 at first);
  // the changes after it are signalled with probability λ each.
  double change = s.next_true;
  do {
    change = NextChange(s.changes, change, p.change_rate);
  } while (change < kNever && !(s.recall.Uniform() < p.recall));
  s.next_true = change;
}

void SimulatedWeb::AdvanceFalse(SignalState& s) {
  s.next_false = NextChange(s.false_signals, s.next_false, pages_[s.page].false_rate);
}

FetchOutcome SimulatedWeb::Fetch(int page, double t) {
  FetchState& f = fetch_[page];
  FetchOutcome outcome;
  if (t < f.last_fetch) {
    outcome.out_of_order = true;
    ++counts_.out_of_order_fetches;
    t = f.last_fetch;
  }
  AddFresh(pages_[page].importance, f.last_fetch, std::min(f.next_change, t));
  outcome.changed = f.next_change <= t;
  while (f.next_change <= t) {
    f.next_change = NextChange(f.changes, f.next_change, pages_[page].change_rate);
  }
  f.last_fetch = t;
  ++counts_.fetches;
  if (!outcome.changed) ++counts_.unchanged_fetches;
  return outcome;
}

double SimulatedWeb::NextSignalTime() const { return heap_.empty() ? kNever : heap_.top().first; }

void SimulatedWeb::PopSignalsUntil(double t, std::vector<WebSignal>* out) {
  while (!heap_.empty() && heap_.top().first <= t) {
    const int32_t k = heap_.top().second;
    heap_.pop();
    SignalState& s = signal_[k];
    WebSignal signal;
    signal.page = s.page;
    if (s.next_true <= s.next_false) {
      signal.time = s.next_true;
      signal.announces_change = true;
      ++counts_.true_signals;
      AdvanceTrue(s);
    } else {
      signal.time = s.next_false;
      ++counts_.false_signals;
      AdvanceFalse(s);
    }
    out->push_back(signal);
    const double next = std::min(s.next_true, s.next_false);
    if (next < kNever) heap_.emplace(next, k);
  }
}

void SimulatedWeb::AddFresh(double importance, double from, double to) {
  to = std::min(to, config_.horizon);
  if (!(to > from)) return;
  const double width = window_width();
  const int last = config_.windows - 1;
  for (int k = std::min(static_cast<int>(from / width), last); k <= last && k * width < to; ++k) {
    const double lo = std::max(from, k * width);
    const double hi = k == last ? to : std::min(to, (k + 1) * width);
    if (hi > lo) window_fresh_[k] += importance * (hi - lo);
  }
}

double SimulatedWeb::FreshnessUntil(double t) const {
  t = std::min(t, config_.horizon);
  if (!(t > 0.0)) return 1.0;
  double fresh = 0.0;
  for (double w : window_fresh_) fresh += w;
  for (int i = 0; i < num_pages(); ++i) {
    const FetchState& f = fetch_[i];
    const double end = std::min(f.next_change, t);
    if (end > f.last_fetch) fresh += pages_[i].importance * (end - f.last_fetch);
  }
  return fresh / (total_importance_ * t);
}

std::vector<double> SimulatedWeb::CloseWindows(double t) {
  t = std::min(t, config_.horizon);
  for (int i = 0; i < num_pages(); ++i) {
    FetchState& f = fetch_[i];
    AddFresh(pages_[i].importance, f.last_fetch, std::min(f.next_change, t));
    // Nothing after t counts: the page is as if fetched at the end.
    f.last_fetch = std::max(f.last_fetch, t);
    f.next_change = f.last_fetch;
  }
  const double width = window_width();
  std::vector<double> freshness(config_.windows, std::numeric_limits<double>::quiet_NaN());
  for (int k = 0; k < config_.windows; ++k) {
    const double length = std::min(t, (k + 1) * width) - k * width;
    if (length > 0.0) {
      freshness[k] = window_fresh_[k] / (total_importance_ * length);
    }
  }
  return freshness;
}

}  // namespace demo
}  // namespace recrawl
