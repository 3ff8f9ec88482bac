#include "shard/host_prior_table.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "shard/learning_record.h"

namespace recrawl {
namespace shard {

HostPriorTable::HostPriorTable(const policy::PageParams& default_prior,
                               const LearningOptions& options,
                               const HostLearningOptions& host_options)
    : default_prior_(default_prior), options_(options), host_options_(host_options) {}

bool HostPriorTable::Learn(HostId host, double tau, int64_t n_cis, bool changed, double t_delay) {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    it = hosts_.emplace(host, Host{InitHostLearning(default_prior_), 0, {}}).first;
  }
  Host& h = it->second;
  const HostUpdate update =
      LearnHostFromCrawl(tau, n_cis, changed, t_delay, options_, host_options_, &h.state);
  if (update != HostUpdate::kRefitted) return false;
  UpdateNewPage(&h);
  return true;
}

bool HostPriorTable::IsDefault(const policy::PageParams& prior) const {
  // Priors are kept as floats (LearningState).
  return static_cast<float>(prior.change_rate) == static_cast<float>(default_prior_.change_rate) &&
         static_cast<float>(prior.recall) == static_cast<float>(default_prior_.recall) &&
         static_cast<float>(prior.false_rate) == static_cast<float>(default_prior_.false_rate);
}

bool HostPriorTable::Fitted(HostId host) const {
  auto it = hosts_.find(host);
  return it != hosts_.end() && it->second.state.fitted_outcomes > 0;
}

std::optional<LearnedModel> HostPriorTable::FitPage(HostId host, double importance,
                                                    const LearningState& page) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end() || it->second.state.fitted_outcomes == 0) return std::nullopt;
  if (!IsDefault(Prior(page))) return std::nullopt;
  LearningState with_host_prior = page;
  return shard::FitPage(it->second.state, importance, options_, host_options_, &with_host_prior);
}

std::optional<double> HostPriorTable::SignalRate(HostId host, const LearningState& page,
                                                 double open_signals, double open_time) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end() || it->second.state.fitted_outcomes == 0) return std::nullopt;
  if (!IsDefault(Prior(page))) return std::nullopt;
  LearningState with_host_prior = page;
  SetPrior(HostPrior(it->second.state), &with_host_prior);
  return shard::SignalRate(
      with_host_prior, open_signals, open_time,
      PageLearningOptions(with_host_prior, it->second.state, options_, host_options_));
}

std::optional<policy::PageParams> HostPriorTable::NewPageModel(HostId host,
                                                               double importance) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end() || it->second.state.fitted_outcomes == 0) return std::nullopt;
  policy::PageParams model = it->second.new_page;
  model.importance = importance;
  return model;
}

void HostPriorTable::UpdateNewPage(Host* h) const {
  LearningState fresh = InitLearning(HostPrior(h->state));
  h->new_page = shard::FitPage(h->state, 1.0, options_, host_options_, &fresh).params;
}

bool HostPriorTable::ToRecord(HostId host, HostLearningRecord* record) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) return false;
  const HostLearningState& s = it->second.state;
  LearningToRecord(s.pooled, record->mutable_pooled());
  record->set_change_rate(s.change_rate);
  record->set_recall(s.recall);
  record->set_false_rate(s.false_rate);
  record->set_fitted_outcomes(s.fitted_outcomes);
  return true;
}

absl::Status HostPriorTable::Restore(HostId host, const HostLearningRecord& record) {
  HostLearningState s;
  s.pooled = LearningFromRecord(record.pooled(), default_prior_);
  s.change_rate = record.change_rate();
  s.recall = record.recall();
  s.false_rate = record.false_rate();
  s.fitted_outcomes = record.fitted_outcomes();
  if (!(s.change_rate >= 0.0f) || !std::isfinite(s.change_rate) || !(s.recall >= 0.0f) ||
      s.recall > 1.0f || !(s.false_rate >= 0.0f) || !std::isfinite(s.false_rate) ||
      s.fitted_outcomes > s.pooled.crawls) {
    return absl::InvalidArgumentError(
        absl::StrCat("host_learning: prior (", s.change_rate, ", ", s.recall, ", ", s.false_rate,
                     ") after ", s.fitted_outcomes, " of ", s.pooled.crawls, " outcomes"));
  }
  Host h{s, s.pooled.crawls, {}};
  if (s.fitted_outcomes > 0) UpdateNewPage(&h);
  hosts_.insert_or_assign(host, h);
  return absl::OkStatus();
}

std::vector<HostId> HostPriorTable::TakeUnwritten() {
  std::vector<HostId> out;
  for (auto& [host, h] : hosts_) {
    if (h.state.pooled.crawls != h.written_outcomes) {
      out.push_back(host);
      h.written_outcomes = h.state.pooled.crawls;
    }
  }
  return out;
}

void HostPriorTable::MarkWritten(HostId host) {
  auto it = hosts_.find(host);
  if (it != hosts_.end()) it->second.written_outcomes = it->second.state.pooled.crawls;
}

size_t HostPriorTable::MemoryBytes() const {
  return hosts_.capacity() * (sizeof(HostId) + sizeof(Host));
}

}  // namespace shard
}  // namespace recrawl
