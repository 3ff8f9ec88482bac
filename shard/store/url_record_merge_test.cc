#include "shard/store/url_record_merge.h"

#include <deque>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/slice.h"
#include "shard/store/records.pb.h"

namespace recrawl {
namespace shard {
namespace {

UrlRecord BaseRecord() {
  UrlRecord record;
  record.set_url("https://example.com/a");
  record.set_politeness_host("example.com");
  record.set_importance(2.5);
  record.mutable_prior()->set_change_rate(0.1);
  record.mutable_prior()->set_recall(0.5);
  record.set_last_crawl_time(100.0);
  record.set_signals_since_crawl(3);
  record.mutable_lease()->set_id(9);
  record.mutable_lease()->set_holder("fetcher-1");
  record.mutable_lease()->set_deadline(130.0);
  return record;
}

// A crawl `elapsed` after the previous one, that found a change.
void AddCrawl(float elapsed, UrlRecord* record) {
  AddOutcome(elapsed, /*signals=*/1, /*changed=*/true, record->mutable_outcomes());
}

TEST(ApplyPatchTest, PresentFieldsReplaceEvenWithZero) {
  UrlRecord record = BaseRecord();
  // A crawl report: τ and n_cis restart, the lease ends, an outcome joins.
  UrlRecord patch;
  patch.set_last_crawl_time(200.0);
  patch.set_signals_since_crawl(0);
  patch.mutable_lease()->set_id(0);
  patch.mutable_lease()->set_holder("");
  patch.mutable_lease()->set_deadline(0.0);
  AddCrawl(100.0f, &patch);
  patch.mutable_prior()->set_recall(0.0);
  ApplyPatch(patch, RecordLimits(), &record);

  EXPECT_EQ(record.url(), "https://example.com/a");
  EXPECT_EQ(record.importance(), 2.5);
  EXPECT_EQ(record.last_crawl_time(), 200.0);
  EXPECT_TRUE(record.has_signals_since_crawl());
  EXPECT_EQ(record.signals_since_crawl(), 0u);
  EXPECT_EQ(record.lease().id(), 0u);
  EXPECT_EQ(record.lease().holder(), "");
  EXPECT_EQ(record.lease().deadline(), 0.0);
  // Fields of a sub-message the patch leaves out stay.
  EXPECT_EQ(record.prior().change_rate(), 0.1);
  EXPECT_EQ(record.prior().recall(), 0.0);
  ASSERT_EQ(WindowSize(record.outcomes()), 1);
  EXPECT_EQ(record.outcomes().elapsed(0), 100.0f);
  EXPECT_EQ(record.outcomes().signals(0), 1u);
  EXPECT_TRUE(record.outcomes().changed(0));
}

TEST(ApplyPatchTest, WindowsKeepTheNewestEntries) {
  RecordLimits limits;
  limits.max_outcomes = 3;
  limits.max_signal_keys = 2;
  UrlRecord record = BaseRecord();
  for (int i = 0; i < 5; ++i) {
    UrlRecord patch;
    AddCrawl(i, &patch);
    patch.add_recent_signal_keys(100 + i);
    ApplyPatch(patch, limits, &record);
  }
  ASSERT_TRUE(WindowsWithinLimits(limits, record));
  ASSERT_EQ(WindowSize(record.outcomes()), 3);
  EXPECT_EQ(record.outcomes().elapsed(0), 2.0f);
  EXPECT_EQ(record.outcomes().elapsed(2), 4.0f);
  ASSERT_EQ(record.recent_signal_keys_size(), 2);
  EXPECT_EQ(record.recent_signal_keys(0), 103u);
  EXPECT_EQ(record.recent_signal_keys(1), 104u);
}

TEST(TrimWindowsTest, LeavesShortWindowsAlone) {
  UrlRecord record = BaseRecord();
  AddCrawl(1.0f, &record);
  record.add_recent_signal_keys(1);
  const std::string before = record.SerializeAsString();
  TrimWindows(RecordLimits(), &record);
  EXPECT_EQ(record.SerializeAsString(), before);
}

TEST(TrimWindowsTest, RealignsOnTheNewestEntries) {
  RecordLimits limits;
  limits.max_outcomes = 8;
  UrlRecord record = BaseRecord();
  for (int i = 0; i < 3; ++i) AddCrawl(i, &record);
  record.mutable_outcomes()->add_elapsed(9.0f);  // a writer's bug
  EXPECT_FALSE(WindowsWithinLimits(limits, record));
  TrimWindows(limits, &record);
  EXPECT_TRUE(WindowsWithinLimits(limits, record));
  ASSERT_EQ(WindowSize(record.outcomes()), 3);
  EXPECT_EQ(record.outcomes().elapsed(0), 1.0f);
  EXPECT_EQ(record.outcomes().elapsed(2), 9.0f);
}

TEST(TrimWindowsTest, TrimmingSignalKeysAddsNoEmptyWindow) {
  RecordLimits limits;
  limits.max_signal_keys = 1;
  UrlRecord record = BaseRecord();
  record.add_recent_signal_keys(1);
  record.add_recent_signal_keys(2);
  TrimWindows(limits, &record);
  EXPECT_FALSE(record.has_outcomes());
  ASSERT_EQ(record.recent_signal_keys_size(), 1);
  EXPECT_EQ(record.recent_signal_keys(0), 2u);
}

// Both ways of merging: appending the patches' bytes for the readers to
// apply (small values), and applying them in the operator (normalize
// threshold 0: always).
class MergeOperatorTest : public ::testing::TestWithParam<size_t> {
 protected:
  MergeOperatorTest() {
    limits_.max_outcomes = 4;
    limits_.normalize_above_bytes = GetParam();
    op_ = NewUrlRecordMergeOperator(limits_);
  }

  // RocksDB's full merge; `existing` null for a missing record.
  std::string FullMerge(const std::string* existing, const std::vector<std::string>& operands) {
    std::vector<rocksdb::Slice> slices(operands.begin(), operands.end());
    rocksdb::Slice existing_slice;
    if (existing != nullptr) existing_slice = *existing;
    rocksdb::MergeOperator::MergeOperationInput in(
        "key", existing != nullptr ? &existing_slice : nullptr, slices, nullptr);
    std::string new_value;
    // As RocksDB does: a null slice, set by the operator to keep the
    // existing value instead of writing a new one.
    rocksdb::Slice existing_operand(nullptr, 0);
    rocksdb::MergeOperator::MergeOperationOutput out(new_value, existing_operand);
    EXPECT_TRUE(op_->FullMergeV2(in, &out));
    if (existing_operand.data() != nullptr) return existing_operand.ToString();
    return new_value;
  }

  // The record a reader makes of a stored value; fails the test if none.
  UrlRecord Read(const std::string& value) {
    UrlRecord record;
    EXPECT_TRUE(ParseStoredRecord(value.data(), value.size(), limits_, &record));
    return record;
  }

  std::vector<std::string> Patches(int n) {
    std::vector<std::string> patches;
    for (int i = 0; i < n; ++i) {
      UrlRecord patch;
      patch.set_signals_since_crawl(i);
      patch.set_last_signal_time(10.0 + i);
      AddCrawl(i, &patch);
      patches.push_back(patch.SerializeAsString());
    }
    return patches;
  }

  RecordLimits limits_;
  std::shared_ptr<rocksdb::MergeOperator> op_;
};

INSTANTIATE_TEST_SUITE_P(Normalizing, MergeOperatorTest, ::testing::Values(size_t{0}));
INSTANTIATE_TEST_SUITE_P(Appending, MergeOperatorTest, ::testing::Values(size_t{1024}));

TEST_P(MergeOperatorTest, FullMergeEqualsApplyingInOrder) {
  const std::string base = BaseRecord().SerializeAsString();
  const std::vector<std::string> patches = Patches(6);

  UrlRecord expected = BaseRecord();
  for (const std::string& p : patches) {
    UrlRecord patch;
    ASSERT_TRUE(patch.ParseFromString(p));
    ApplyPatch(patch, limits_, &expected);
  }
  const UrlRecord merged = Read(FullMerge(&base, patches));
  EXPECT_EQ(merged.SerializeAsString(), expected.SerializeAsString());
  EXPECT_EQ(merged.signals_since_crawl(), 5u);
  EXPECT_EQ(WindowSize(merged.outcomes()), 4);
}

TEST_P(MergeOperatorTest, PartialMergesCombineAssociatively) {
  const std::string base = BaseRecord().SerializeAsString();
  const std::vector<std::string> patches = Patches(7);
  const UrlRecord all_at_once = Read(FullMerge(&base, patches));

  // RocksDB may first combine the later operands, then meet the record.
  std::deque<rocksdb::Slice> tail(patches.begin() + 2, patches.end());
  std::string combined;
  ASSERT_TRUE(op_->PartialMergeMulti("key", tail, &combined, nullptr));
  const UrlRecord in_two_steps = Read(FullMerge(&base, {patches[0], patches[1], combined}));
  EXPECT_EQ(in_two_steps.SerializeAsString(), all_at_once.SerializeAsString());
}

TEST_P(MergeOperatorTest, MergingMergedValuesAgain) {
  // A value that is itself the result of a merge meets more patches (as in
  // successive compactions).
  const std::string base = BaseRecord().SerializeAsString();
  const std::vector<std::string> patches = Patches(9);
  const std::string first = FullMerge(&base, {patches.begin(), patches.begin() + 4});
  const UrlRecord twice = Read(FullMerge(&first, {patches.begin() + 4, patches.end()}));
  EXPECT_EQ(twice.SerializeAsString(), Read(FullMerge(&base, patches)).SerializeAsString());
  EXPECT_EQ(twice.signals_since_crawl(), 8u);
  EXPECT_EQ(twice.outcomes().elapsed(0), 5.0f);
}

TEST_P(MergeOperatorTest, ValuesStayBounded) {
  std::string value = BaseRecord().SerializeAsString();
  const std::vector<std::string> patches = Patches(300);
  for (const std::string& patch : patches) {
    value = FullMerge(&value, {patch});
    ASSERT_LE(value.size(), limits_.normalize_above_bytes + 200);
  }
  const UrlRecord record = Read(value);
  EXPECT_EQ(record.signals_since_crawl(), 299u);
  EXPECT_EQ(record.outcomes().elapsed(3), 299.0f);
}

TEST_P(MergeOperatorTest, PatchWithoutRecordHasNoUrl) {
  const UrlRecord merged = Read(FullMerge(nullptr, Patches(2)));
  EXPECT_TRUE(merged.url().empty());
  EXPECT_EQ(merged.signals_since_crawl(), 1u);
}

TEST_P(MergeOperatorTest, MalformedRecordStaysMalformed) {
  const std::string garbage("\xff\xff\xff\xff", 4);
  UrlRecord probe;
  ASSERT_FALSE(probe.ParseFromString(garbage));
  const std::string merged = FullMerge(&garbage, Patches(3));
  EXPECT_FALSE(ParseStoredRecord(merged.data(), merged.size(), limits_, &probe));
}

TEST_P(MergeOperatorTest, MalformedOperandIsSkipped) {
  const std::string base = BaseRecord().SerializeAsString();
  std::vector<std::string> patches = Patches(2);
  patches.insert(patches.begin() + 1, std::string("\xff\xff\xff", 3));
  const UrlRecord merged = Read(FullMerge(&base, patches));
  EXPECT_EQ(merged.signals_since_crawl(), 1u);
  EXPECT_EQ(WindowSize(merged.outcomes()), 2);

  // A partial merge declines instead; RocksDB then keeps the operands.
  std::deque<rocksdb::Slice> operands(patches.begin(), patches.end());
  std::string combined;
  EXPECT_FALSE(op_->PartialMergeMulti("key", operands, &combined, nullptr));
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
