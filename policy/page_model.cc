#include "policy/page_model.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace policy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

absl::Status CheckNonNegative(const char* field, double value) {
  if (std::isnan(value)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is NaN"));
  }
  if (std::isinf(value)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is infinite"));
  }
  if (value < 0.0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be >= 0, got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PageModel> PageModel::Create(const PageParams& params) {
  if (absl::Status s = Check(params); !s.ok()) return s;
  return PageModel(params);
}

absl::Status PageModel::Check(const PageParams& params) {
  for (auto [field, value] : {std::pair<const char*, double>{"importance", params.importance},
                              {"change_rate", params.change_rate},
                              {"recall", params.recall},
                              {"false_rate", params.false_rate}}) {
    if (absl::Status s = CheckNonNegative(field, value); !s.ok()) return s;
  }
  if (params.recall > 1.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("recall must be in [0, 1], got ", params.recall));
  }
  return absl::OkStatus();
}

PageModel::PageModel(const PageParams& params) : params_(params) {
  const double delta = params.change_rate;
  const double nu = params.false_rate;
  signalled_change_rate_ = params.recall * delta;
  alpha_ = (1.0 - params.recall) * delta;
  gamma_ = signalled_change_rate_ + nu;
  precision_ = gamma_ > 0.0 ? signalled_change_rate_ / gamma_ : 0.0;
  if (signalled_change_rate_ <= 0.0) {
    // Every signal is false: it says nothing about the page.
    log_signal_factor_ = 0.0;
    beta_ = 0.0;
  } else if (nu <= 0.0) {
    log_signal_factor_ = kInf;
    beta_ = kInf;
  } else {
    // log(γ/ν) = log1p(λΔ/ν), accurate when signals are mostly false.
    log_signal_factor_ = std::log1p(signalled_change_rate_ / nu);
    beta_ = alpha_ > 0.0 ? log_signal_factor_ / alpha_ : kInf;
  }
}

double PageModel::FreshProbability(double tau_elap, int64_t n_cis) const {
  // n_cis = 0 skips the signal term, whose 0·∞ would be NaN when ν = 0.
  if (n_cis <= 0) return std::exp(-alpha_ * tau_elap);
  if (std::isinf(log_signal_factor_)) return 0.0;
  return std::exp(-alpha_ * tau_elap - static_cast<double>(n_cis) * log_signal_factor_);
}

double PageModel::EffectiveElapsed(double tau_elap, int64_t n_cis) const {
  if (n_cis <= 0 || beta_ == 0.0) return tau_elap;
  if (std::isinf(beta_)) return kInf;
  return tau_elap + beta_ * static_cast<double>(n_cis);
}

PageModel PageModel::WithoutSignals() const {
  PageParams p = params_;
  p.recall = 0.0;
  p.false_rate = 0.0;
  return PageModel(p);
}

PageModel PageModel::WithoutFalseSignals() const {
  PageParams p = params_;
  p.false_rate = 0.0;
  return PageModel(p);
}

PageModel PageModel::WithImportance(double importance) const {
  PageParams p = params_;
  p.importance = importance;
  return PageModel(p);
}

}  // namespace policy
}  // namespace recrawl
