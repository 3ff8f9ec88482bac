#include "shard/store/url_record_merge.h"

#include <algorithm>
#include <deque>
#include <string>

#include "rocksdb/slice.h"

namespace recrawl {
namespace shard {
namespace {

// Appends the bytes of each operand that parses to `out`, which applies it
// as a patch to what `out` holds in the eyes of the protobuf parser. Checking
// that a small patch parses is cheap, and keeps one damaged operand from
// making the whole record unreadable. Returns how many did not parse.
template <typename Operands>
int AppendPatches(const Operands& operands, std::string* out) {
  UrlRecord probe;
  int bad = 0;
  for (const rocksdb::Slice& operand : operands) {
    if (!probe.ParseFromArray(operand.data(), static_cast<int>(operand.size()))) {
      ++bad;
      continue;
    }
    out->append(operand.data(), operand.size());
  }
  return bad;
}

class UrlRecordMergeOperator : public rocksdb::MergeOperator {
 public:
  explicit UrlRecordMergeOperator(const RecordLimits& limits) : limits_(limits) {}

  // Persisted in the database's OPTIONS file; change it with the format.
  const char* Name() const override { return "recrawl.UrlRecordPatch.1"; }

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    size_t total = in.existing_value != nullptr ? in.existing_value->size() : 0;
    for (const rocksdb::Slice& operand : in.operand_list) {
      total += operand.size();
    }
    if (total <= limits_.normalize_above_bytes) {
      if (in.existing_value != nullptr) {
        out->new_value.assign(in.existing_value->data(), in.existing_value->size());
      }
      // Operands were serialised by PatchUrl and are checksummed on disk;
      // one that does not parse is skipped rather than failing the merge.
      AppendPatches(in.operand_list, &out->new_value);
      return true;
    }
    UrlRecord record;
    if (in.existing_value != nullptr &&
        !ParseStoredRecord(in.existing_value->data(), in.existing_value->size(), limits_,
                           &record)) {
      out->existing_operand = *in.existing_value;
      return true;
    }
    UrlRecord patch;
    for (const rocksdb::Slice& operand : in.operand_list) {
      if (!patch.ParseFromArray(operand.data(), static_cast<int>(operand.size()))) {
        continue;
      }
      ApplyPatch(patch, limits_, &record);
    }
    return record.SerializeToString(&out->new_value);
  }

  bool PartialMergeMulti(const rocksdb::Slice& /*key*/,
                         const std::deque<rocksdb::Slice>& operand_list, std::string* new_value,
                         rocksdb::Logger* /*logger*/) const override {
    size_t total = 0;
    for (const rocksdb::Slice& operand : operand_list) total += operand.size();
    if (total <= limits_.normalize_above_bytes) {
      new_value->clear();
      // Returning false keeps the operands apart; nothing is lost.
      return AppendPatches(operand_list, new_value) == 0;
    }
    UrlRecord combined;
    UrlRecord patch;
    for (const rocksdb::Slice& operand : operand_list) {
      if (!patch.ParseFromArray(operand.data(), static_cast<int>(operand.size()))) {
        return false;
      }
      ApplyPatch(patch, limits_, &combined);
    }
    return combined.SerializeToString(new_value);
  }

 private:
  const RecordLimits limits_;
};

// Removes the first `n` entries of `field` (none if n <= 0).
template <typename T>
void DropOldest(int n, google::protobuf::RepeatedField<T>* field) {
  if (n > 0) field->erase(field->begin(), field->begin() + n);
}

}  // namespace

void AddOutcome(float elapsed, uint32_t signals, bool changed, OutcomeWindow* window) {
  window->add_elapsed(elapsed);
  window->add_signals(signals);
  window->add_changed(changed);
}

int WindowSize(const OutcomeWindow& window) {
  return std::min({window.elapsed_size(), window.signals_size(), window.changed_size()});
}

bool WindowsWithinLimits(const RecordLimits& limits, const UrlRecord& record) {
  const OutcomeWindow& w = record.outcomes();
  return w.elapsed_size() <= limits.max_outcomes && w.elapsed_size() == w.signals_size() &&
         w.elapsed_size() == w.changed_size() &&
         record.recent_signal_keys_size() <= limits.max_signal_keys;
}

void TrimWindows(const RecordLimits& limits, UrlRecord* record) {
  if (WindowsWithinLimits(limits, *record)) return;
  if (record->has_outcomes()) {
    OutcomeWindow* w = record->mutable_outcomes();
    const int keep = std::min(WindowSize(*w), limits.max_outcomes);
    DropOldest(w->elapsed_size() - keep, w->mutable_elapsed());
    DropOldest(w->signals_size() - keep, w->mutable_signals());
    DropOldest(w->changed_size() - keep, w->mutable_changed());
  }
  DropOldest(record->recent_signal_keys_size() - limits.max_signal_keys,
             record->mutable_recent_signal_keys());
}

bool ParseStoredRecord(const char* data, size_t size, const RecordLimits& limits,
                       UrlRecord* record) {
  if (!record->ParseFromArray(data, static_cast<int>(size))) return false;
  TrimWindows(limits, record);
  return true;
}

void ApplyPatch(const UrlRecord& patch, const RecordLimits& limits, UrlRecord* record) {
  record->MergeFrom(patch);
  TrimWindows(limits, record);
}

std::shared_ptr<rocksdb::MergeOperator> NewUrlRecordMergeOperator(const RecordLimits& limits) {
  return std::make_shared<UrlRecordMergeOperator>(limits);
}

}  // namespace shard
}  // namespace recrawl
