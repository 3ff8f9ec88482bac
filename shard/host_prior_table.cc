#include "shard/host_prior_table.h"

#include <cmath>
#include <cstring>
#include <utility>

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

HostLearningState HostPriorTable::Expand(const Host& h) const {
  // The prior is the pooled state's first member, which Host leaves out.
  static_assert(kSummariesOffset == 3 * sizeof(float));
  static_assert(sizeof(Host) == 100);  // as the header says
  HostLearningState state = InitHostLearning(default_prior_);
  std::memcpy(reinterpret_cast<unsigned char*>(&state.pooled) + kSummariesOffset, h.summaries,
              sizeof(h.summaries));
  state.change_rate = h.change_rate;
  state.recall = h.recall;
  state.false_rate = h.false_rate;
  state.fitted_outcomes = h.fitted_outcomes;
  return state;
}

void HostPriorTable::Compact(const HostLearningState& state, Host* h) {
  std::memcpy(h->summaries,
              reinterpret_cast<const unsigned char*>(&state.pooled) + kSummariesOffset,
              sizeof(h->summaries));
  h->change_rate = state.change_rate;
  h->recall = state.recall;
  h->false_rate = state.false_rate;
  h->fitted_outcomes = state.fitted_outcomes;
}

const HostPriorTable::Host* HostPriorTable::Pooled(HostId host) const {
  const uint32_t entry = Entry(host);
  if (entry == 0 || (entry & kOnePage) != 0) return nullptr;
  return &pooled_[entry - 1];
}

HostPriorTable::Host* HostPriorTable::MutablePooled(HostId host) {
  return const_cast<Host*>(std::as_const(*this).Pooled(host));
}

HostPriorTable::Host* HostPriorTable::AddPooled(HostId host, const HostLearningState& state) {
  Host& h = pooled_.emplace_back();
  Compact(state, &h);
  h.unwritten = true;
  MutableEntry(host) = static_cast<uint32_t>(pooled_.size());
  return &h;
}

bool HostPriorTable::Refit(HostId host, HostLearningState* state, Host* h) {
  const bool refitted = RefitHostIfDue(options_, host_options_, state) == HostUpdate::kRefitted;
  Compact(*state, h);
  if (refitted) UpdateNewPage(host, *state);
  return refitted;
}

bool HostPriorTable::Learn(HostId host, PageId page, double tau, int64_t n_cis, bool changed,
                           double t_delay, absl::FunctionRef<LearningState(PageId)> learning_of) {
  const uint32_t entry = Entry(host);
  if (entry == 0 && page < kOnePage) {
    // The host's first page with an outcome: its state holds them.
    MutableEntry(host) = kOnePage | page;
    return false;
  }
  HostLearningState state;
  Host* h = MutablePooled(host);
  if (h != nullptr) {
    state = Expand(*h);
  } else if (entry == 0) {
    // (A page id too large to keep in the entry: pooled at once.)
    state = InitHostLearning(default_prior_);
  } else {
    const PageId first = entry & ~kOnePage;
    if (first == page) return false;
    state = HostLearningFromPage(learning_of(first), default_prior_);
  }
  if (!LearnFromCrawl(tau, n_cis, changed, t_delay, &state.pooled)) return false;
  if (h == nullptr) h = AddPooled(host, state);
  h->unwritten = true;
  return Refit(host, &state, h);
}

void HostPriorTable::NotePage(HostId host, PageId page) {
  if (Entry(host) == 0 && page < kOnePage) MutableEntry(host) = kOnePage | page;
}

bool HostPriorTable::RemovePage(HostId host, PageId page, const LearningState& learning) {
  const uint32_t entry = Entry(host);
  if ((entry & kOnePage) == 0 || (entry & ~kOnePage) != page) return false;
  HostLearningState state = HostLearningFromPage(learning, default_prior_);
  return Refit(host, &state, AddPooled(host, state));
}

bool HostPriorTable::IsDefault(const policy::PageParams& prior) const {
  // Priors are kept as floats (LearningState).
  return static_cast<float>(prior.change_rate) == static_cast<float>(default_prior_.change_rate) &&
         static_cast<float>(prior.recall) == static_cast<float>(default_prior_.recall) &&
         static_cast<float>(prior.false_rate) == static_cast<float>(default_prior_.false_rate);
}

bool HostPriorTable::Fitted(HostId host) const {
  const Host* h = Pooled(host);
  return h != nullptr && h->fitted_outcomes > 0;
}

const HostPriorTable::Host* HostPriorTable::FittedFor(HostId host,
                                                      const LearningState& page) const {
  const Host* h = Pooled(host);
  if (h == nullptr || h->fitted_outcomes == 0 || !IsDefault(Prior(page))) return nullptr;
  return h;
}

std::optional<LearnedModel> HostPriorTable::FitPage(HostId host, double importance,
                                                    const LearningState& page) const {
  const Host* h = FittedFor(host, page);
  if (h == nullptr) return std::nullopt;
  LearningState with_host_prior = page;
  return shard::FitPage(Expand(*h), importance, options_, host_options_, &with_host_prior);
}

std::optional<double> HostPriorTable::SignalRate(HostId host, const LearningState& page,
                                                 double open_signals, double open_time) const {
  const Host* h = FittedFor(host, page);
  if (h == nullptr) return std::nullopt;
  const HostLearningState state = Expand(*h);
  LearningState with_host_prior = page;
  SetPrior(HostPrior(state), &with_host_prior);
  return shard::SignalRate(with_host_prior, open_signals, open_time,
                           PageLearningOptions(with_host_prior, state, options_, host_options_));
}

std::optional<policy::PageParams> HostPriorTable::NewPageModel(HostId host,
                                                               double importance) const {
  auto it = new_page_.find(host);
  if (it == new_page_.end()) return std::nullopt;
  policy::PageParams model = it->second;
  model.importance = importance;
  return model;
}

void HostPriorTable::UpdateNewPage(HostId host, const HostLearningState& state) {
  LearningState fresh = InitLearning(HostPrior(state));
  new_page_[host] = shard::FitPage(state, 1.0, options_, host_options_, &fresh).params;
}

bool HostPriorTable::ToRecord(HostId host, HostLearningRecord* record) const {
  const Host* h = Pooled(host);
  if (h == nullptr) return false;
  const HostLearningState s = Expand(*h);
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
  Host* h = MutablePooled(host);
  if (h == nullptr) h = AddPooled(host, s);
  Compact(s, h);
  h->unwritten = false;
  if (s.fitted_outcomes > 0) {
    UpdateNewPage(host, s);
  } else {
    new_page_.erase(host);
  }
  return absl::OkStatus();
}

std::vector<HostId> HostPriorTable::TakeUnwritten() {
  std::vector<HostId> out;
  for (HostId host = 0; host < entries_.size(); ++host) {
    Host* h = MutablePooled(host);
    if (h != nullptr && h->unwritten) {
      out.push_back(host);
      h->unwritten = false;
    }
  }
  return out;
}

void HostPriorTable::MarkWritten(HostId host) {
  if (Host* h = MutablePooled(host); h != nullptr) h->unwritten = false;
}

size_t HostPriorTable::MemoryBytes() const {
  return entries_.capacity() * sizeof(uint32_t) + pooled_.capacity() * sizeof(Host) +
         new_page_.capacity() * (1 + sizeof(std::pair<HostId, policy::PageParams>));
}

}  // namespace shard
}  // namespace recrawl
