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

OutcomeRecord Outcome(double fetch_time) {
  OutcomeRecord outcome;
  outcome.set_fetch_time(fetch_time);
  outcome.set_outcome(CRAWL_OUTCOME_CHANGED);
  outcome.set_elapsed(1.0f);
  outcome.set_signals(1);
  return outcome;
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
  *patch.add_outcomes() = Outcome(200.0);
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
  ASSERT_EQ(record.outcomes_size(), 1);
  EXPECT_EQ(record.outcomes(0).fetch_time(), 200.0);
}

TEST(ApplyPatchTest, WindowsKeepTheNewestEntries) {
  RecordLimits limits;
  limits.max_outcomes = 3;
  limits.max_signal_keys = 2;
  UrlRecord record = BaseRecord();
  for (int i = 0; i < 5; ++i) {
    UrlRecord patch;
    *patch.add_outcomes() = Outcome(i);
    patch.add_recent_signal_keys(100 + i);
    ApplyPatch(patch, limits, &record);
  }
  ASSERT_EQ(record.outcomes_size(), 3);
  EXPECT_EQ(record.outcomes(0).fetch_time(), 2.0);
  EXPECT_EQ(record.outcomes(2).fetch_time(), 4.0);
  ASSERT_EQ(record.recent_signal_keys_size(), 2);
  EXPECT_EQ(record.recent_signal_keys(0), 103u);
  EXPECT_EQ(record.recent_signal_keys(1), 104u);
}

TEST(TrimWindowsTest, LeavesShortWindowsAlone) {
  UrlRecord record = BaseRecord();
  *record.add_outcomes() = Outcome(1.0);
  const std::string before = record.SerializeAsString();
  TrimWindows(RecordLimits(), &record);
  EXPECT_EQ(record.SerializeAsString(), before);
}

class MergeOperatorTest : public ::testing::Test {
 protected:
  MergeOperatorTest() {
    limits_.max_outcomes = 4;
    op_ = NewUrlRecordMergeOperator(limits_);
  }

  // RocksDB's full merge; `existing` null for a missing record.
  std::string FullMerge(const std::string* existing,
                        const std::vector<std::string>& operands) {
    std::vector<rocksdb::Slice> slices(operands.begin(), operands.end());
    rocksdb::Slice existing_slice;
    if (existing != nullptr) existing_slice = *existing;
    rocksdb::MergeOperator::MergeOperationInput in(
        "key", existing != nullptr ? &existing_slice : nullptr, slices,
        nullptr);
    std::string new_value;
    // As RocksDB does: a null slice, set by the operator to keep the
    // existing value instead of writing a new one.
    rocksdb::Slice existing_operand(nullptr, 0);
    rocksdb::MergeOperator::MergeOperationOutput out(new_value,
                                                     existing_operand);
    EXPECT_TRUE(op_->FullMergeV2(in, &out));
    if (existing_operand.data() != nullptr) return existing_operand.ToString();
    return new_value;
  }

  std::vector<std::string> Patches(int n) {
    std::vector<std::string> patches;
    for (int i = 0; i < n; ++i) {
      UrlRecord patch;
      patch.set_signals_since_crawl(i);
      patch.set_last_signal_time(10.0 + i);
      *patch.add_outcomes() = Outcome(i);
      patches.push_back(patch.SerializeAsString());
    }
    return patches;
  }

  RecordLimits limits_;
  std::shared_ptr<rocksdb::MergeOperator> op_;
};

TEST_F(MergeOperatorTest, FullMergeEqualsApplyingInOrder) {
  const std::string base = BaseRecord().SerializeAsString();
  const std::vector<std::string> patches = Patches(6);

  UrlRecord expected = BaseRecord();
  for (const std::string& p : patches) {
    UrlRecord patch;
    ASSERT_TRUE(patch.ParseFromString(p));
    ApplyPatch(patch, limits_, &expected);
  }
  UrlRecord merged;
  ASSERT_TRUE(merged.ParseFromString(FullMerge(&base, patches)));
  EXPECT_EQ(merged.SerializeAsString(), expected.SerializeAsString());
  EXPECT_EQ(merged.signals_since_crawl(), 5u);
  EXPECT_EQ(merged.outcomes_size(), 4);
}

TEST_F(MergeOperatorTest, PartialMergesCombineAssociatively) {
  const std::string base = BaseRecord().SerializeAsString();
  const std::vector<std::string> patches = Patches(7);
  const std::string all_at_once = FullMerge(&base, patches);

  // RocksDB may first combine the later operands, then meet the record.
  std::deque<rocksdb::Slice> tail(patches.begin() + 2, patches.end());
  std::string combined;
  ASSERT_TRUE(op_->PartialMergeMulti("key", tail, &combined, nullptr));
  const std::string in_two_steps =
      FullMerge(&base, {patches[0], patches[1], combined});
  EXPECT_EQ(in_two_steps, all_at_once);
}

TEST_F(MergeOperatorTest, PatchWithoutRecordHasNoUrl) {
  UrlRecord merged;
  ASSERT_TRUE(merged.ParseFromString(FullMerge(nullptr, Patches(2))));
  EXPECT_TRUE(merged.url().empty());
  EXPECT_EQ(merged.signals_since_crawl(), 1u);
}

TEST_F(MergeOperatorTest, MalformedRecordIsKeptAsIs) {
  const std::string garbage("\xff\xff\xff\xff", 4);
  UrlRecord probe;
  ASSERT_FALSE(probe.ParseFromString(garbage));
  EXPECT_EQ(FullMerge(&garbage, Patches(3)), garbage);
}

TEST_F(MergeOperatorTest, MalformedOperandIsSkippedInFullMerge) {
  const std::string base = BaseRecord().SerializeAsString();
  std::vector<std::string> patches = Patches(2);
  patches.insert(patches.begin() + 1, std::string("\xff\xff\xff", 3));
  UrlRecord merged;
  ASSERT_TRUE(merged.ParseFromString(FullMerge(&base, patches)));
  EXPECT_EQ(merged.signals_since_crawl(), 1u);
  EXPECT_EQ(merged.outcomes_size(), 2);

  std::deque<rocksdb::Slice> operands(patches.begin(), patches.end());
  std::string combined;
  EXPECT_FALSE(op_->PartialMergeMulti("key", operands, &combined, nullptr));
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
