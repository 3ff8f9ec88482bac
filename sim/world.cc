#include "sim/world.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sim/rng.h"

namespace recrawl {
namespace sim {
namespace {

double Draw(const Distribution& d, Rng& rng) {
  switch (d.kind) {
    case Distribution::Kind::kConstant:
      return d.a;
    case Distribution::Kind::kUniform:
      return rng.Uniform(d.a, d.b);
    case Distribution::Kind::kBeta: {
      // X/(X+Y) with X ~ Gamma(a), Y ~ Gamma(b).
      std::gamma_distribution<double> x(d.a, 1.0), y(d.b, 1.0);
      const double gx = x(rng), gy = y(rng);
      return gx + gy > 0 ? gx / (gx + gy) : rng.Uniform() < d.a / (d.a + d.b);
    }
    case Distribution::Kind::kPareto:
      return d.b * std::pow(rng.Uniform(), -1.0 / d.a);
    case Distribution::Kind::kLogUniform:
      return std::exp(rng.Uniform(std::log(d.a), std::log(d.b)));
  }
  return 0.0;
}

}  // namespace

absl::StatusOr<Distribution> Distribution::Parse(const std::string& text) {
  std::vector<std::string> kv = absl::StrSplit(text, absl::MaxSplits(':', 1));
  if (kv.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("distribution '", text, "': expected kind:args"));
  }
  std::vector<double> args;
  for (absl::string_view s : absl::StrSplit(kv[1], ',')) {
    double v;
    if (!absl::SimpleAtod(s, &v) || !std::isfinite(v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("distribution '", text, "': bad number '", s, "'"));
    }
    args.push_back(v);
  }
  const std::string& kind = kv[0];
  auto need = [&](size_t n) -> absl::Status {
    if (args.size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("distribution '", text, "': ", kind, " takes ", n, " numbers"));
    }
    return absl::OkStatus();
  };
  if (kind == "const") {
    if (auto s = need(1); !s.ok()) return s;
    return Constant(args[0]);
  }
  if (auto s = need(2); !s.ok()) return s;
  if (kind == "uniform" && args[0] <= args[1]) return Uniform(args[0], args[1]);
  if (kind == "beta" && args[0] > 0 && args[1] > 0) return Beta(args[0], args[1]);
  if (kind == "pareto" && args[0] > 0 && args[1] > 0) return Pareto(args[0], args[1]);
  if (kind == "loguniform" && args[0] > 0 && args[0] <= args[1])
    return LogUniform(args[0], args[1]);
  return absl::InvalidArgumentError(
      absl::StrCat("distribution '", text, "': unknown kind or bad range"));
}

std::string Distribution::ToString() const {
  switch (kind) {
    case Kind::kConstant:
      return absl::StrCat("const:", a);
    case Kind::kUniform:
      return absl::StrCat("uniform:", a, ",", b);
    case Kind::kBeta:
      return absl::StrCat("beta:", a, ",", b);
    case Kind::kPareto:
      return absl::StrCat("pareto:", a, ",", b);
    case Kind::kLogUniform:
      return absl::StrCat("loguniform:", a, ",", b);
  }
  return "";
}

double BandwidthSchedule::At(double t) const {
  size_t k = std::upper_bound(start.begin(), start.end(), t) - start.begin();
  return rate[k == 0 ? 0 : k - 1];
}

std::vector<double> BandwidthSchedule::SlotTimes(double horizon) const {
  std::vector<double> times;
  // Slot j of a constant-rate segment starting at s is s + j/R, computed by
  // multiplication so that a long run does not accumulate rounding.
  double t = 0.0;
  for (size_t k = 0; k < rate.size(); ++k) {
    const double end = k + 1 < start.size() ? std::min(start[k + 1], horizon) : horizon;
    const double seg_start = t;
    for (int64_t j = 1;; ++j) {
      const double tj = seg_start + static_cast<double>(j) / rate[k];
      if (tj > end + 1e-9 / rate[k]) break;
      times.push_back(tj);
      t = tj;
    }
  }
  return times;
}

Instance GenerateInstance(const WorldConfig& config, uint64_t seed, uint64_t instance) {
  Instance out;
  out.pages.resize(config.num_pages);
  for (int i = 0; i < config.num_pages; ++i) {
    Rng rng(seed, instance, i, Stream::kParams);
    policy::PageParams& p = out.pages[i];
    p.importance = std::max(0.0, Draw(config.importance, rng));
    p.change_rate = std::max(0.0, Draw(config.change_rate, rng));
    p.recall = std::clamp(Draw(config.recall, rng), 0.0, 1.0);
    p.false_rate = std::max(0.0, Draw(config.false_rate, rng));
  }
  return out;
}

absl::Status CheckHostStructure(const HostStructure& h) {
  if (!(h.mean_pages_per_host >= 0.0) || !std::isfinite(h.mean_pages_per_host)) {
    return absl::InvalidArgumentError("mean_pages_per_host must be >= 0 (0: no hosts)");
  }
  if (!(h.zipf_exponent >= 0.0) || !std::isfinite(h.zipf_exponent)) {
    return absl::InvalidArgumentError("zipf_exponent must be >= 0");
  }
  if (!(h.noise >= 0.0) || !std::isfinite(h.noise)) {
    return absl::InvalidArgumentError("noise must be >= 0");
  }
  return absl::OkStatus();
}

void AddHostStructure(const HostStructure& hosts, uint64_t seed, uint64_t instance_number,
                      Instance* instance) {
  if (!hosts.enabled() || instance->pages.empty()) return;
  const int m = static_cast<int>(instance->pages.size());
  const int num_hosts = std::max(1, static_cast<int>(std::lround(m / hosts.mean_pages_per_host)));
  std::vector<double> cumulative(num_hosts);
  double total = 0.0;
  for (int h = 0; h < num_hosts; ++h) {
    total += std::pow(h + 1.0, -hosts.zipf_exponent);
    cumulative[h] = total;
  }
  // Host h's parameters: those of page template_page[h] before the noise.
  const std::vector<policy::PageParams> drawn = instance->pages;
  std::vector<int> template_page(num_hosts);
  for (int h = 0; h < num_hosts; ++h) {
    Rng rng(seed, instance_number, h, Stream::kHostParams);
    template_page[h] = std::min(m - 1, static_cast<int>(rng.Uniform() * m));
  }
  instance->host.resize(m);
  for (int i = 0; i < m; ++i) {
    Rng rng(seed, instance_number, i, Stream::kHost);
    const double u = rng.Uniform() * total;
    const int h =
        std::min<int>(num_hosts - 1, std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                         cumulative.begin());
    instance->host[i] = h;
    const policy::PageParams& base = drawn[template_page[h]];
    std::normal_distribution<double> z(0.0, hosts.noise);
    policy::PageParams& p = instance->pages[i];
    p.change_rate = base.change_rate * std::exp(z(rng));
    p.false_rate = base.false_rate * std::exp(z(rng));
    const double zl = z(rng);
    p.recall = base.recall;
    if (base.recall > 0.0 && base.recall < 1.0) {
      const double logit = std::log(base.recall / (1.0 - base.recall)) + zl;
      p.recall = 1.0 / (1.0 + std::exp(-logit));
    }
  }
}

namespace {

// Finds the bucket of an event time s (the first slot j with t_j >= s) in
// O(1) on average instead of a binary search over all S slot times (which
// was a quarter of `semi`'s run time: ~50M signals, 10^6 slots). Cell c of
// a grid of S equal cells over (0, t_S] remembers the bucket of its start,
// so s's bucket lies between its cell's and the next cell's; with the slots
// spread by a bandwidth that varies little, that is a slot or two.
class SlotLocator {
 public:
  explicit SlotLocator(const std::vector<double>& slot_times) : slots_(slot_times) {
    if (slots_.empty()) return;
    const size_t cells = slots_.size();
    width_ = slots_.back() / static_cast<double>(cells);
    first_.resize(cells + 1);
    size_t j = 0;
    for (size_t c = 0; c <= cells; ++c) {
      const double start = width_ * static_cast<double>(c);
      while (j < slots_.size() && slots_[j] < start) ++j;
      first_[c] = j;
    }
  }

  // The bucket of s, 0 < s <= t_S.
  int64_t Bucket(double s) const {
    const size_t cells = first_.size() - 1;
    const size_t c = std::min(cells - 1, static_cast<size_t>(s / width_));
    const size_t lo = first_[c];
    const size_t hi = std::min(slots_.size(), first_[c + 1] + 1);
    // Rounding in s / width_ can put s one cell off; then search it all.
    const bool bracketed = lo < hi && (lo == 0 || slots_[lo - 1] < s) && slots_[hi - 1] >= s;
    const auto begin = bracketed ? slots_.begin() + lo : slots_.begin();
    const auto end = bracketed ? slots_.begin() + hi : slots_.end();
    return std::lower_bound(begin, end, s) - slots_.begin();
  }

 private:
  const std::vector<double>& slots_;
  double width_ = 0.0;
  std::vector<size_t> first_;  // cells + 1 entries
};

// A signal before it is sorted into its bucket. The bucket fills what would
// be padding, so the ~50M signals of a `semi` run take 16 bytes each here.
struct PendingSignal {
  double time;
  int32_t page;
  int32_t bucket;
};

}  // namespace

Realization Realize(const WorldConfig& config, const Instance& instance, uint64_t seed,
                    uint64_t instance_number) {
  Realization r;
  r.horizon = config.horizon;
  r.slot_times = config.bandwidth.SlotTimes(config.horizon);
  const int m = static_cast<int>(instance.pages.size());
  const double slot_rate0 = config.bandwidth.rate[0];
  const double last_slot = r.slot_times.empty() ? 0.0 : r.slot_times.back();
  const SlotLocator locator(r.slot_times);

  r.change_begin.assign(m + 1, 0);
  std::vector<PendingSignal> signals;
  const auto add_signal = [&](double s, int32_t page) {
    signals.push_back({s, page, static_cast<int32_t>(locator.Bucket(s))});
  };
  for (int i = 0; i < m; ++i) {
    const policy::PageParams& p = instance.pages[i];
    r.change_begin[i] = static_cast<int64_t>(r.change_times.size());
    Rng changes(seed, instance_number, i, Stream::kChanges);
    Rng recall(seed, instance_number, i, Stream::kTrueSignals);
    Rng delays(seed, instance_number, i, Stream::kDelays);
    std::poisson_distribution<int> poisson_delay(config.delay.mean > 0 ? config.delay.mean : 1.0);
    if (p.change_rate > 0) {
      for (double t = changes.Exponential(p.change_rate); t <= config.horizon;
           t += changes.Exponential(p.change_rate)) {
        r.change_times.push_back(t);
        // Each change is signalled with probability λ (recall).
        if (!(recall.Uniform() < p.recall)) continue;
        double s = t;
        switch (config.delay.kind) {
          case SignalDelay::Kind::kNone:
            break;
          case SignalDelay::Kind::kPoissonSlots:
            s += poisson_delay(delays) / slot_rate0;
            break;
          case SignalDelay::Kind::kExponential:
            s += delays.Exponential(1.0 / config.delay.mean);
            break;
        }
        if (s <= last_slot) {
          add_signal(s, i);
          ++r.num_true_signals;
        }
      }
    }
    if (p.false_rate > 0) {
      Rng fp(seed, instance_number, i, Stream::kFalseSignals);
      for (double t = fp.Exponential(p.false_rate); t <= last_slot;
           t += fp.Exponential(p.false_rate)) {
        add_signal(t, i);
        ++r.num_false_signals;
      }
    }
  }
  r.change_begin[m] = static_cast<int64_t>(r.change_times.size());

  // Counting sort of the signals into slot buckets (bucket j: t_{j-1} < s <= t_j).
  const size_t num_slots = r.slot_times.size();
  r.signal_begin.assign(num_slots + 1, 0);
  for (const PendingSignal& s : signals) ++r.signal_begin[s.bucket + 1];
  for (size_t j = 0; j < num_slots; ++j) r.signal_begin[j + 1] += r.signal_begin[j];
  r.signal_page.resize(signals.size());
  r.signal_time.resize(signals.size());
  std::vector<int64_t> fill(r.signal_begin.begin(), r.signal_begin.end() - 1);
  for (const PendingSignal& s : signals) {
    const int64_t at = fill[s.bucket]++;
    r.signal_page[at] = s.page;
    r.signal_time[at] = s.time;
  }
  return r;
}

}  // namespace sim
}  // namespace recrawl
