#include "shard/host_trust.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/multi_source_model.h"

namespace recrawl {
namespace shard {
namespace {

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

constexpr int64_t kPersistEvery = 256;
constexpr uint8_t kAllSources = (1u << kTrustSources) - 1;
constexpr int64_t kFirstRefit = 64;
constexpr int64_t kLastDoublingRefit = 65536;

}  // namespace

HostTrustTable::HostTrustTable(const policy::SourceTrustPrior& prior, size_t max_changed_intervals)
    : prior_(prior), max_changed_(max_changed_intervals) {}

absl::Status HostTrustTable::Learn(HostId host, double change_rate, double tau,
                                   const IntervalSignals& signals, bool changed) {
  const SourceCounts& counts = signals.single;
  std::copy(counts.begin(), counts.end(), scratch_.counts.begin());
  scratch_.joint = signals.joint;
  auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    if (absl::Status s = policy::SourceTrustEstimator::CheckInterval(change_rate, tau, scratch_,
                                                                     changed, kTrustSources);
        !s.ok()) {
      return s;
    }
    if (host >= signalled_.size()) signalled_.resize(static_cast<size_t>(host) + 1, 0);
    uint8_t& signalled = signalled_[host];
    for (int s = 0; s < kTrustSources; ++s) {
      if (counts[s] > 0) signalled |= static_cast<uint8_t>(1u << s);
    }
    // With one source there is nothing to choose between.
    if (__builtin_popcount(signalled) < 2 && signals.joint == 0) return absl::OkStatus();
    it = hosts_
             .emplace(host, Host(policy::SourceTrustEstimator(kTrustSources, prior_, max_changed_)))
             .first;
  }
  return it->second.estimator.Add(change_rate, tau, scratch_, changed);
}

bool HostTrustTable::ShouldRefit(HostId host) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) return false;
  const policy::SourceTrustEstimator& e = it->second.estimator;
  const int64_t n = e.num_crawls();
  const bool due =
      n >= kFirstRefit && (n <= kLastDoublingRefit ? IsPowerOfTwo(n) : n % kLastDoublingRefit == 0);
  if (!due) return false;
  int signalled = 0;
  for (int s = 0; s < kTrustSources; ++s) signalled += e.signals(s) > 0.0;
  return signalled >= 2;
}

bool HostTrustTable::Refit(HostId host, double min_relative_weight) {
  std::optional<policy::SourceTrustEstimate> fit = Estimate(host);
  if (!fit.has_value()) return false;
  Host& h = hosts_.at(host);
  uint8_t mask = 0;
  double recall = 0.0, false_rate = 0.0;
  absl::StatusOr<policy::MultiSourceModel> model =
      policy::MultiSourceModel::Create({1.0, h.estimator.MeanChangeRate(), fit->sources});
  if (model.ok() && min_relative_weight > 0.0) {
    const std::vector<bool> trusted = model->TrustedSources(min_relative_weight);
    bool leaves_out = false;
    for (int s = 0; s < kTrustSources; ++s) {
      if (trusted[s]) mask |= static_cast<uint8_t>(1u << s);
      leaves_out |= !trusted[s] && h.estimator.signals(s) > 0.0;
    }
    if (leaves_out && mask != 0) {
      const policy::PageModel merged = model->MergedOf(trusted);
      recall = merged.recall();
      false_rate = merged.false_rate();
    } else {
      mask = 0;
    }
  }
  const bool changed =
      mask != h.trusted_mask || recall != h.trusted_recall || false_rate != h.trusted_false_rate;
  h.trusted_mask = mask;
  h.trusted_recall = recall;
  h.trusted_false_rate = false_rate;
  h.refit_crawls = h.estimator.num_crawls();
  SetMask(host, mask);
  return changed;
}

void HostTrustTable::SetMask(HostId host, uint8_t mask) {
  if (mask == 0) {
    if (host < masks_.size()) masks_[host] = kAllSources;
    return;
  }
  if (host >= masks_.size()) masks_.resize(static_cast<size_t>(host) + 1, kAllSources);
  masks_[host] = mask;
}

bool HostTrustTable::TrustedModel(HostId host, double* recall, double* false_rate) const {
  if (host >= masks_.size() || masks_[host] == kAllSources) return false;
  const Host& h = hosts_.at(host);
  if (h.trusted_mask == 0) return false;
  *recall = h.trusted_recall;
  *false_rate = h.trusted_false_rate;
  return true;
}

double HostTrustTable::Signals(HostId host, int source) const {
  auto it = hosts_.find(host);
  return it == hosts_.end() ? 0.0 : it->second.estimator.signals(source);
}

bool HostTrustTable::ShouldPersist(HostId host) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) return false;
  const int64_t crawls = it->second.estimator.num_crawls();
  if (crawls == it->second.written_crawls) return false;
  return crawls <= kPersistEvery ? IsPowerOfTwo(crawls)
                                 : crawls - it->second.written_crawls >= kPersistEvery;
}

void HostTrustTable::MarkWritten(HostId host) {
  auto it = hosts_.find(host);
  if (it != hosts_.end()) it->second.written_crawls = it->second.estimator.num_crawls();
}

std::vector<HostId> HostTrustTable::TakeUnwritten() {
  std::vector<HostId> out;
  for (auto& [host, h] : hosts_) {
    if (h.estimator.num_crawls() != h.written_crawls) {
      out.push_back(host);
      h.written_crawls = h.estimator.num_crawls();
    }
  }
  return out;
}

std::optional<policy::SourceTrustEstimate> HostTrustTable::Estimate(HostId host) {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) return std::nullopt;
  Host& h = it->second;
  if (h.fit_crawls != h.estimator.num_crawls()) {
    h.fit = h.estimator.Estimate();
    h.fit_crawls = h.estimator.num_crawls();
  }
  return h.fit;
}

bool HostTrustTable::ToRecord(HostId host, SourceTrustRecord* record) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) return false;
  const policy::SourceTrustState state = it->second.estimator.State();
  record->Clear();
  for (double v : state.signals) record->add_signals(v);
  for (double v : state.unchanged_signals) record->add_unchanged_signals(v);
  record->set_unchanged_time(state.unchanged_time);
  record->set_unchanged_exposure(state.unchanged_exposure);
  record->set_changed_time(state.changed_time);
  record->set_changed_exposure(state.changed_exposure);
  record->set_crawls(state.num_crawls);
  record->set_changed(state.num_changed);
  record->set_compress_at(state.compress_at);
  const Host& h = it->second;
  record->set_trusted_mask(h.trusted_mask);
  record->set_trusted_recall(h.trusted_recall);
  record->set_trusted_false_rate(h.trusted_false_rate);
  record->set_fitted_crawls(h.refit_crawls);
  for (const policy::ChangedInterval& c : state.changed) {
    record->add_changed_weight(c.weight);
    record->add_changed_rate(c.change_rate);
    record->add_changed_tau(c.tau);
    record->add_changed_joint(c.joint);
    for (float n : c.counts) record->add_changed_counts(n);
  }
  return true;
}

absl::Status HostTrustTable::Restore(HostId host, const SourceTrustRecord& record) {
  policy::SourceTrustState state;
  state.num_sources = kTrustSources;
  state.signals.assign(record.signals().begin(), record.signals().end());
  state.unchanged_signals.assign(record.unchanged_signals().begin(),
                                 record.unchanged_signals().end());
  state.unchanged_time = record.unchanged_time();
  state.unchanged_exposure = record.unchanged_exposure();
  state.changed_time = record.changed_time();
  state.changed_exposure = record.changed_exposure();
  state.num_crawls = record.crawls();
  state.num_changed = record.changed();
  state.compress_at = record.compress_at();
  const int kept = record.changed_rate_size();
  if (record.changed_weight_size() != kept || record.changed_tau_size() != kept ||
      record.changed_joint_size() != kept || record.changed_counts_size() != kept * kTrustSources) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trust.changed_*: ", record.changed_weight_size(), " weights, ", kept, " rates, ",
        record.changed_tau_size(), " taus, ", record.changed_joint_size(), " joint counts and ",
        record.changed_counts_size(), " counts (", kTrustSources, " per interval)"));
  }
  state.changed.reserve(kept);
  for (int i = 0; i < kept; ++i) {
    policy::ChangedInterval c;
    c.weight = record.changed_weight(i);
    c.change_rate = record.changed_rate(i);
    c.tau = record.changed_tau(i);
    c.joint = record.changed_joint(i);
    for (int s = 0; s < kTrustSources; ++s) {
      c.counts.push_back(record.changed_counts(i * kTrustSources + s));
    }
    state.changed.push_back(std::move(c));
  }
  absl::StatusOr<policy::SourceTrustEstimator> estimator =
      policy::SourceTrustEstimator::FromState(state, prior_, max_changed_);
  if (!estimator.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("trust: ", estimator.status().message()));
  }
  if (record.trusted_mask() > kAllSources || !(record.trusted_recall() >= 0.0) ||
      record.trusted_recall() > 1.0 || !(record.trusted_false_rate() >= 0.0) ||
      !std::isfinite(record.trusted_false_rate()) ||
      (record.trusted_mask() != 0 && record.trusted_recall() + record.trusted_false_rate() <= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("trust.trusted_*: mask ", record.trusted_mask(),
                                                   ", recall ", record.trusted_recall(),
                                                   ", false rate ", record.trusted_false_rate()));
  }
  Host h(*std::move(estimator));
  h.written_crawls = h.estimator.num_crawls();
  h.trusted_mask = static_cast<uint8_t>(record.trusted_mask());
  h.trusted_recall = record.trusted_recall();
  h.trusted_false_rate = record.trusted_false_rate();
  h.refit_crawls = record.fitted_crawls();
  SetMask(host, h.trusted_mask);
  hosts_.insert_or_assign(host, std::move(h));
  return absl::OkStatus();
}

size_t HostTrustTable::MemoryBytes() const {
  // The map's slots, and each estimator's vectors (counted at their bound).
  const size_t per_host =
      2 * kTrustSources * sizeof(double) +
      max_changed_ * (2 * sizeof(float) + (1 + kTrustSources) * sizeof(uint16_t));
  return hosts_.capacity() * (sizeof(HostId) + sizeof(Host)) + hosts_.size() * per_host +
         masks_.capacity() + signalled_.capacity();
}

}  // namespace shard
}  // namespace recrawl
