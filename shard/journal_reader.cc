#include "shard/journal_reader.h"

#include <cstring>

namespace recrawl {
namespace shard {

JournalReader::JournalReader(const UrlStore* store) : store_(store) {}

absl::StatusOr<int64_t> JournalReader::ReadAll(
    absl::FunctionRef<void(uint64_t seq, absl::string_view entry)> fn) {
  return store_->ScanJournal([&](uint64_t seq, absl::string_view entry) {
    if (!found_) first_seq_ = seq;
    found_ = true;
    last_seq_ = seq;
    fn(seq, entry);
  });
}

bool JournalReader::ForEachRecord(absl::string_view entry, const JournalVisitor& visit) {
  using journal_internal::GetFixed;
  size_t i = 0;
  while (i < entry.size()) {
    const char* p = entry.data() + i;
    const size_t left = entry.size() - i;
    if (p[0] == kJournalSourcedSignalTag && left >= kJournalSourcedSignalBytes) {
      const int8_t source = GetFixed<int8_t>(p + 25);
      visit.signal({GetFixed<cluster::UrlId>(p + 1), GetFixed<double>(p + 9),
                    GetFixed<uint64_t>(p + 17),
                    source >= 0 && source < kTrustSources ? source : kUnknownJournalSource});
      i += kJournalSourcedSignalBytes;
    } else if (p[0] == kJournalSignalTag && left >= kJournalSignalBytes) {
      visit.signal(
          {GetFixed<cluster::UrlId>(p + 1), GetFixed<double>(p + 9), GetFixed<uint64_t>(p + 17)});
      i += kJournalSignalBytes;
    } else if ((p[0] == kJournalJointStateTag && left >= kJournalJointStateBytes) ||
               (p[0] == kJournalSplitStateTag && left >= kJournalSplitStateBytes) ||
               (p[0] == kJournalStateTag && left >= kJournalStateBytes)) {
      JournalState state{GetFixed<cluster::UrlId>(p + 1), GetFixed<uint16_t>(p + 9),
                         GetFixed<uint64_t>(p + 11), GetFixed<float>(p + 19)};
      state.split_known = p[0] != kJournalStateTag;
      size_t bytes = kJournalStateBytes;
      if (state.split_known) {
        std::memcpy(state.split.named.data(), p + kJournalStateBytes, kOtherTrustSource);
        bytes = kJournalSplitStateBytes;
      }
      if (p[0] == kJournalJointStateTag) {
        state.split.joint_events = GetFixed<uint8_t>(p + kJournalSplitStateBytes);
        state.split.joint_signals = GetFixed<uint8_t>(p + kJournalSplitStateBytes + 1);
        state.split.latest_sources = GetFixed<uint8_t>(p + kJournalSplitStateBytes + 2);
        bytes = kJournalJointStateBytes;
      }
      visit.state(state);
      i += bytes;
    } else if (p[0] == kJournalLeaseTag && left >= kJournalLeaseBytes &&
               left - kJournalLeaseBytes >= GetFixed<uint16_t>(p + 25)) {
      const uint16_t holder = GetFixed<uint16_t>(p + 25);
      visit.lease({GetFixed<cluster::UrlId>(p + 1), GetFixed<uint64_t>(p + 9),
                   GetFixed<double>(p + 17), absl::string_view(p + kJournalLeaseBytes, holder)});
      i += kJournalLeaseBytes + holder;
    } else if (p[0] == kJournalLeaseEndTag && left >= kJournalLeaseEndBytes) {
      visit.lease_end({GetFixed<cluster::UrlId>(p + 1), GetFixed<uint64_t>(p + 9)});
      i += kJournalLeaseEndBytes;
    } else {
      return false;
    }
  }
  return true;
}

bool JournalReader::ForEachUrl(absl::string_view entry,
                               absl::FunctionRef<void(cluster::UrlId)> visit) {
  return ForEachRecord(entry, {[&](const JournalSignal& s) { visit(s.url); },
                               [&](const JournalState& s) { visit(s.url); },
                               [&](const JournalLease& l) { visit(l.url); },
                               [&](const JournalLeaseEnd& e) { visit(e.url); }});
}

}  // namespace shard
}  // namespace recrawl
