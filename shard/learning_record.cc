#include "shard/learning_record.h"

namespace recrawl {
namespace shard {
namespace {

void SummaryToRecord(const LearningState::Summary& s, ChangedSummary* out) {
  out->set_count(s.count);
  out->set_mean_log_tau(s.mean_u);
  out->set_m2_log_tau(s.m2_u);
}

LearningState::Summary SummaryFromRecord(const ChangedSummary& r) {
  LearningState::Summary s;
  s.count = r.count();
  s.mean_u = r.mean_log_tau();
  s.m2_u = r.m2_log_tau();
  return s;
}

}  // namespace

void LearningToRecord(const LearningState& state, LearningRecord* out) {
  out->set_unchanged_tau(state.unchanged_tau);
  out->set_unchanged_signals(state.unchanged_signals);
  out->set_signals(state.signals);
  out->set_signal_time(state.signal_time);
  SummaryToRecord(state.changed[0], out->mutable_changed0());
  SummaryToRecord(state.changed[1], out->mutable_changed1());
  SummaryToRecord(state.changed[2], out->mutable_changed2());
  SummaryToRecord(state.many, out->mutable_changed_many());
  out->set_many_mean_n(state.many_mean_n);
  out->set_many_m2_n(state.many_m2_n);
  out->set_many_c_un(state.many_c_un);
  out->set_crawls(state.crawls);
}

LearningState LearningFromRecord(const LearningRecord& record, const policy::PageParams& prior) {
  LearningState s = InitLearning(prior);
  s.unchanged_tau = record.unchanged_tau();
  s.unchanged_signals = record.unchanged_signals();
  s.signals = record.signals();
  s.signal_time = record.signal_time();
  s.changed[0] = SummaryFromRecord(record.changed0());
  s.changed[1] = SummaryFromRecord(record.changed1());
  s.changed[2] = SummaryFromRecord(record.changed2());
  s.many = SummaryFromRecord(record.changed_many());
  s.many_mean_n = record.many_mean_n();
  s.many_m2_n = record.many_m2_n();
  s.many_c_un = record.many_c_un();
  s.crawls = record.crawls();
  return s;
}

}  // namespace shard
}  // namespace recrawl
