#include "shard/store/url_record_merge.h"

#include <deque>
#include <string>

#include "rocksdb/slice.h"

namespace recrawl {
namespace shard {
namespace {

class UrlRecordMergeOperator : public rocksdb::MergeOperator {
 public:
  explicit UrlRecordMergeOperator(const RecordLimits& limits)
      : limits_(limits) {}

  // Persisted in the database's OPTIONS file; change it with the format.
  const char* Name() const override { return "recrawl.UrlRecordPatch.1"; }

  bool FullMergeV2(const MergeOperationInput& in,
                   MergeOperationOutput* out) const override {
    UrlRecord record;
    if (in.existing_value != nullptr &&
        !record.ParseFromArray(in.existing_value->data(),
                               static_cast<int>(in.existing_value->size()))) {
      out->existing_operand = *in.existing_value;
      return true;
    }
    UrlRecord patch;
    for (const rocksdb::Slice& operand : in.operand_list) {
      // Operands were serialised by PatchUrl and are checksummed on disk;
      // one that does not parse is skipped rather than failing the merge.
      if (!patch.ParseFromArray(operand.data(),
                                static_cast<int>(operand.size()))) {
        continue;
      }
      ApplyPatch(patch, limits_, &record);
    }
    return record.SerializeToString(&out->new_value);
  }

  bool PartialMergeMulti(const rocksdb::Slice& /*key*/,
                         const std::deque<rocksdb::Slice>& operand_list,
                         std::string* new_value,
                         rocksdb::Logger* /*logger*/) const override {
    UrlRecord combined;
    UrlRecord patch;
    for (const rocksdb::Slice& operand : operand_list) {
      // Returning false keeps the operands apart; nothing is lost.
      if (!patch.ParseFromArray(operand.data(),
                                static_cast<int>(operand.size()))) {
        return false;
      }
      ApplyPatch(patch, limits_, &combined);
    }
    return combined.SerializeToString(new_value);
  }

 private:
  const RecordLimits limits_;
};

}  // namespace

void TrimWindows(const RecordLimits& limits, UrlRecord* record) {
  const int extra_outcomes = record->outcomes_size() - limits.max_outcomes;
  if (extra_outcomes > 0) {
    record->mutable_outcomes()->DeleteSubrange(0, extra_outcomes);
  }
  const int extra_keys =
      record->recent_signal_keys_size() - limits.max_signal_keys;
  if (extra_keys > 0) {
    auto* keys = record->mutable_recent_signal_keys();
    keys->erase(keys->begin(), keys->begin() + extra_keys);
  }
}

void ApplyPatch(const UrlRecord& patch, const RecordLimits& limits,
                UrlRecord* record) {
  record->MergeFrom(patch);
  TrimWindows(limits, record);
}

std::shared_ptr<rocksdb::MergeOperator> NewUrlRecordMergeOperator(
    const RecordLimits& limits) {
  return std::make_shared<UrlRecordMergeOperator>(limits);
}

}  // namespace shard
}  // namespace recrawl
