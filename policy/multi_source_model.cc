#include "policy/multi_source_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

absl::Status CheckNonNegative(const std::string& field, double value) {
  if (std::isnan(value)) return absl::InvalidArgumentError(absl::StrCat(field, " is NaN"));
  if (std::isinf(value)) return absl::InvalidArgumentError(absl::StrCat(field, " is infinite"));
  if (value < 0.0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be >= 0, got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MultiSourceModel::Check(const MultiSourceParams& params) {
  if (absl::Status s = CheckNonNegative("importance", params.importance); !s.ok()) return s;
  if (absl::Status s = CheckNonNegative("change_rate", params.change_rate); !s.ok()) return s;
  for (size_t i = 0; i < params.sources.size(); ++i) {
    const std::string prefix = absl::StrCat("sources[", i, "].");
    const SourceParams& source = params.sources[i];
    if (absl::Status s = CheckNonNegative(prefix + "recall", source.recall); !s.ok()) return s;
    if (source.recall > 1.0) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "recall must be in [0, 1], got ", source.recall));
    }
    if (absl::Status s = CheckNonNegative(prefix + "false_rate", source.false_rate); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<MultiSourceModel> MultiSourceModel::Create(const MultiSourceParams& params) {
  if (absl::Status s = Check(params); !s.ok()) return s;
  return MultiSourceModel(params);
}

std::optional<PageParams> MultiSourceModel::SingleSourceParams(const MultiSourceParams& params) {
  PageParams single{params.importance, params.change_rate, 0.0, 0.0};
  bool found = false;
  for (const SourceParams& source : params.sources) {
    if (source.recall <= 0.0) continue;
    if (found) return std::nullopt;
    found = true;
    single.recall = source.recall;
    single.false_rate = source.false_rate;
  }
  return single;
}

MultiSourceModel::MultiSourceModel(const MultiSourceParams& params) : params_(params) {
  const double delta = params.change_rate;
  const int num = static_cast<int>(params.sources.size());
  // P(no source signals a change), P(exactly one), P(two or more), summed
  // source by source so that no probability is a difference.
  double none = 1.0, one = 0.0, several = 0.0;
  for (const SourceParams& source : params.sources) {
    const double l = source.recall;
    several += one * l;
    one = one * (1.0 - l) + none * l;
    none *= 1.0 - l;
  }
  alpha_ = delta * none;
  joint_rate_ = delta * several;
  absorbing_rate_ = joint_rate_;
  sources_.resize(num);
  for (int s = 0; s < num; ++s) {
    double others_silent = 1.0;
    for (int r = 0; r < num; ++r) {
      if (r != s) others_silent *= 1.0 - params.sources[r].recall;
    }
    Source& out = sources_[s];
    const double nu = params.sources[s].false_rate;
    // Multiplied in PageModel's order (λΔ), so one source gives its bits.
    out.exclusive_rate = params.sources[s].recall * delta * others_silent;
    out.signal_rate = out.exclusive_rate + nu;
    if (out.exclusive_rate <= 0.0) {
      out.kind = SourceKind::kNoise;
      out.log_signal_factor = 0.0;
      out.beta = 0.0;
    } else if (nu <= 0.0) {
      out.kind = SourceKind::kProof;
      out.log_signal_factor = kInf;
      out.beta = kInf;
      absorbing_rate_ += out.exclusive_rate;
    } else {
      out.kind = SourceKind::kInformative;
      out.log_signal_factor = std::log1p(out.exclusive_rate / nu);
      out.beta = alpha_ > 0.0 ? out.log_signal_factor / alpha_ : kInf;
    }
  }
}

absl::Status CheckSourceSignals(const SourceSignals& signals, int num_sources) {
  if (signals.counts.size() != static_cast<size_t>(std::max(num_sources, 0))) {
    return absl::InvalidArgumentError(absl::StrCat("signals.counts has ", signals.counts.size(),
                                                   " entries, not one per source (", num_sources,
                                                   ")"));
  }
  for (size_t s = 0; s < signals.counts.size(); ++s) {
    if (signals.counts[s] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("signals.counts[", s, "] must be >= 0, got ", signals.counts[s]));
    }
  }
  if (signals.joint < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("signals.joint must be >= 0, got ", signals.joint));
  }
  return absl::OkStatus();
}

absl::Status MultiSourceModel::CheckSignals(const SourceSignals& signals) const {
  return CheckSourceSignals(signals, num_sources());
}

double MultiSourceModel::SignalLogOdds(const SourceSignals& signals) const {
  if (signals.joint > 0) return kInf;
  double sum = 0.0;
  for (size_t s = 0; s < sources_.size(); ++s) {
    const int64_t n = signals.counts[s];
    if (n <= 0 || sources_[s].kind == SourceKind::kNoise) continue;
    if (sources_[s].kind == SourceKind::kProof) return kInf;
    sum += static_cast<double>(n) * sources_[s].log_signal_factor;
  }
  return sum;
}

double MultiSourceModel::FreshProbability(double tau_elap, const SourceSignals& signals) const {
  const double log_odds = SignalLogOdds(signals);
  if (std::isinf(log_odds)) return 0.0;
  return std::exp(-alpha_ * tau_elap - log_odds);
}

double MultiSourceModel::EffectiveElapsed(double tau_elap, const SourceSignals& signals) const {
  const double log_odds = SignalLogOdds(signals);
  if (log_odds <= 0.0) return tau_elap;
  if (std::isinf(log_odds) || alpha_ <= 0.0) return kInf;
  double sum = tau_elap;
  for (size_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].kind != SourceKind::kInformative) continue;
    sum += sources_[s].beta * static_cast<double>(signals.counts[s]);
  }
  return sum;
}

PageModel MultiSourceModel::Merged() const {
  return MergedOf(std::vector<bool>(params_.sources.size(), true));
}

PageModel MultiSourceModel::MergedOf(const std::vector<bool>& trusted) const {
  double silent = 1.0, nu = 0.0;
  for (size_t s = 0; s < params_.sources.size(); ++s) {
    if (!trusted[s]) continue;
    silent *= 1.0 - params_.sources[s].recall;
    nu += params_.sources[s].false_rate;
  }
  return *PageModel::Create({params_.importance, params_.change_rate, 1.0 - silent, nu});
}

std::vector<bool> MultiSourceModel::TrustedSources(double min_relative_weight) const {
  double best = 0.0;
  for (const Source& source : sources_) best = std::max(best, source.log_signal_factor);
  std::vector<bool> trusted(sources_.size(), false);
  if (best <= 0.0) return trusted;
  for (size_t s = 0; s < sources_.size(); ++s) {
    const double w = sources_[s].log_signal_factor;
    trusted[s] = w > 0.0 && (std::isinf(best) ? std::isinf(w) : w >= min_relative_weight * best);
  }
  return trusted;
}

}  // namespace policy
}  // namespace recrawl
