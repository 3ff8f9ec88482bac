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

uint32_t& HostPriorTable::MutableEntry(HostId host) {
  if (host >= entries_.size()) entries_.resize(static_cast<size_t>(host) + 1, 0);
  return entries_[host];
}

const HostPriorTable::Host* HostPriorTable::Pooled(HostId host) const {
  const uint32_t entry = Entry(host);
  if (entry == 0 || (entry & kOnePage) != 0) return nullptr;
  return &pooled_[entry - 1];
}

HostPriorTable::Host& HostPriorTable::AddPooled(HostId host, const HostLearningState& state,
                                                uint32_t written_outcomes) {
  pooled_.push_back(Host{state, host, written_outcomes});
  MutableEntry(host) = static_cast<uint32_t>(pooled_.size());
  return pooled_.back();
}

bool HostPriorTable::Refit(Host* h) {
  if (RefitHostIfDue(options_, host_options_, &h->state) != HostUpdate::kRefitted) return false;
  UpdateNewPage(*h);
  return true;
}

bool HostPriorTable::Learn(HostId host, PageId page, double tau, int64_t n_cis, bool changed,
                           double t_delay, absl::FunctionRef<LearningState(PageId)> learning_of) {
  uint32_t entry = Entry(host);
  if (entry == 0 && page < kOnePage) {
    // The host's first page with an outcome: its state holds them.
    MutableEntry(host) = kOnePage | page;
    return false;
  }
  if ((entry & kOnePage) != 0) {
    const PageId first = entry & ~kOnePage;
    if (first == page) return false;
    AddPooled(host, HostLearningFromPage(learning_of(first), default_prior_), 0);
    entry = static_cast<uint32_t>(pooled_.size());
  } else if (entry == 0) {
    // (A page id too large to keep in the entry: pooled at once.)
    AddPooled(host, InitHostLearning(default_prior_), 0);
    entry = static_cast<uint32_t>(pooled_.size());
  }
  Host& h = pooled_[entry - 1];
  if (!LearnFromCrawl(tau, n_cis, changed, t_delay, &h.state.pooled)) return false;
  return Refit(&h);
}

void HostPriorTable::NotePage(HostId host, PageId page) {
  if (Entry(host) == 0 && page < kOnePage) MutableEntry(host) = kOnePage | page;
}

bool HostPriorTable::RemovePage(HostId host, PageId page, const LearningState& learning) {
  const uint32_t entry = Entry(host);
  if ((entry & kOnePage) == 0 || (entry & ~kOnePage) != page) return false;
  Host& h = AddPooled(host, HostLearningFromPage(learning, default_prior_), 0);
  return Refit(&h);
}

bool HostPriorTable::IsDefault(const policy::PageParams& prior) const {
  // Priors are kept as floats (LearningState).
  return static_cast<float>(prior.change_rate) == static_cast<float>(default_prior_.change_rate) &&
         static_cast<float>(prior.recall) == static_cast<float>(default_prior_.recall) &&
         static_cast<float>(prior.false_rate) == static_cast<float>(default_prior_.false_rate);
}

bool HostPriorTable::Fitted(HostId host) const {
  const Host* h = Pooled(host);
  return h != nullptr && h->state.fitted_outcomes > 0;
}

const HostPriorTable::Host* HostPriorTable::FittedFor(HostId host,
                                                      const LearningState& page) const {
  const Host* h = Pooled(host);
  if (h == nullptr || h->state.fitted_outcomes == 0 || !IsDefault(Prior(page))) return nullptr;
  return h;
}

std::optional<LearnedModel> HostPriorTable::FitPage(HostId host, double importance,
                                                    const LearningState& page) const {
  const Host* h = FittedFor(host, page);
  if (h == nullptr) return std::nullopt;
  LearningState with_host_prior = page;
  return shard::FitPage(h->state, importance, options_, host_options_, &with_host_prior);
}

std::optional<double> HostPriorTable::SignalRate(HostId host, const LearningState& page,
                                                 double open_signals, double open_time) const {
  const Host* h = FittedFor(host, page);
  if (h == nullptr) return std::nullopt;
  LearningState with_host_prior = page;
  SetPrior(HostPrior(h->state), &with_host_prior);
  return shard::SignalRate(with_host_prior, open_signals, open_time,
                           PageLearningOptions(with_host_prior, h->state, options_, host_options_));
}

std::optional<policy::PageParams> HostPriorTable::NewPageModel(HostId host,
                                                               double importance) const {
  auto it = new_page_.find(host);
  if (it == new_page_.end()) return std::nullopt;
  policy::PageParams model = it->second;
  model.importance = importance;
  return model;
}

void HostPriorTable::UpdateNewPage(const Host& h) {
  LearningState fresh = InitLearning(HostPrior(h.state));
  new_page_[h.host] = shard::FitPage(h.state, 1.0, options_, host_options_, &fresh).params;
}

bool HostPriorTable::ToRecord(HostId host, HostLearningRecord* record) const {
  const Host* h = Pooled(host);
  if (h == nullptr) return false;
  const HostLearningState& s = h->state;
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
  const Host* existing = Pooled(host);
  Host& h = existing != nullptr ? pooled_[Entry(host) - 1] : AddPooled(host, s, 0);
  h.state = s;
  h.written_outcomes = s.pooled.crawls;
  if (s.fitted_outcomes > 0) {
    UpdateNewPage(h);
  } else {
    new_page_.erase(host);
  }
  return absl::OkStatus();
}

std::vector<HostId> HostPriorTable::TakeUnwritten() {
  std::vector<HostId> out;
  for (Host& h : pooled_) {
    if (h.state.pooled.crawls != h.written_outcomes) {
      out.push_back(h.host);
      h.written_outcomes = h.state.pooled.crawls;
    }
  }
  return out;
}

void HostPriorTable::MarkWritten(HostId host) {
  const Host* h = Pooled(host);
  if (h != nullptr) pooled_[Entry(host) - 1].written_outcomes = h->state.pooled.crawls;
}

size_t HostPriorTable::MemoryBytes() const {
  return entries_.capacity() * sizeof(uint32_t) + pooled_.capacity() * sizeof(Host) +
         new_page_.capacity() * (1 + sizeof(std::pair<HostId, policy::PageParams>));
}

}  // namespace shard
}  // namespace recrawl
