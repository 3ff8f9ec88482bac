#include "coordinator/lease_rounds.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/held_reports.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// Shards in memory: each has crawl values (best first), may fail its calls,
// and has the reports the coordinator holds for it. Every call is logged.
class FakeShards : public LeaseShards {
 public:
  explicit FakeShards(std::vector<std::vector<double>> values)
      : values_(std::move(values)),
        held_(static_cast<int>(values_.size()), 1000),
        fail_delivery_(values_.size(), false),
        fail_peek_(values_.size(), false),
        fail_lease_(values_.size(), false) {}

  bool DeliverHeld(int shard) override {
    if (!held_.Holds(shard)) return true;
    log_.push_back(absl::StrCat("deliver ", shard));
    if (fail_delivery_[shard]) return false;
    ReportCrawlsRequest batch;
    held_.Take(shard, 1000, &batch);
    applied_[shard] += batch.reports_size();
    held_.Delivered(static_cast<size_t>(batch.reports_size()));
    return true;
  }
  std::vector<std::optional<std::vector<double>>> Peek(double,
                                                       const std::vector<int>& asked) override {
    std::vector<std::optional<std::vector<double>>> out(values_.size());
    for (size_t s = 0; s < values_.size(); ++s) {
      if (asked[s] == 0) continue;
      log_.push_back(absl::StrCat("peek ", s));
      if (fail_peek_[s]) continue;
      const size_t k = std::min<size_t>(asked[s], values_[s].size());
      out[s] = std::vector<double>(values_[s].begin(), values_[s].begin() + k);
    }
    return out;
  }
  std::vector<std::optional<std::vector<double>>> Lease(
      const std::vector<std::vector<double>>& slots) override {
    std::vector<std::optional<std::vector<double>>> out(values_.size());
    for (size_t s = 0; s < values_.size(); ++s) {
      if (slots[s].empty()) continue;
      log_.push_back(absl::StrCat("lease ", s, " ", slots[s].size()));
      if (fail_lease_[s]) continue;
      const size_t k = std::min(slots[s].size(), values_[s].size());
      out[s] = std::vector<double>(values_[s].begin(), values_[s].begin() + k);
      values_[s].erase(values_[s].begin(), values_[s].begin() + k);
      leased_.insert(leased_.end(), out[s]->begin(), out[s]->end());
    }
    return out;
  }

  HeldReports& held() { return held_; }
  const std::vector<std::string>& log() const { return log_; }
  const std::vector<double>& leased() const { return leased_; }
  int applied(int shard) { return applied_[shard]; }

 private:
  std::vector<std::vector<double>> values_;
  HeldReports held_;

 public:
  std::vector<bool> fail_delivery_, fail_peek_, fail_lease_;

 private:
  std::vector<std::string> log_;
  std::vector<double> leased_;
  std::map<int, int> applied_;
};

class LeaseRoundsTest : public ::testing::Test {
 protected:
  void MakeCore(int shards, Mode mode) {
    CoordinatorOptions o;
    o.num_shards = shards;
    o.bandwidth = 100.0;
    o.mode = mode;
    o.pacer.grace = 0.5;
    o.pacer.max_lookahead = 1.0;
    o.directory.failure_timeout = 1.5;
    core_ = std::make_unique<Coordinator>(o, 0.0);
    for (int s = 0; s < shards; ++s) {
      ASSERT_TRUE(
          core_->directory().Record({absl::StrCat("shard", s), true, s, shards, "site"}, 0.0).ok());
    }
    core_->Tick(0.0);
  }
  LeaseRoundsResult Run(std::vector<double> slots, Mode mode, FakeShards* shards) {
    return RunLeaseRounds(std::move(slots), mode,
                          std::vector<bool>(core_->directory().num_shards(), true), core_.get(),
                          &mu_, shards);
  }
  static std::vector<double> Slots(int n) {
    std::vector<double> slots;
    for (int i = 0; i < n; ++i) slots.push_back(0.01 * i);
    return slots;
  }

  absl::Mutex mu_;
  std::unique_ptr<Coordinator> core_;
};

CrawlReport Report(uint64_t lease_id) {
  CrawlReport r;
  r.set_lease_id(lease_id);
  return r;
}

TEST_F(LeaseRoundsTest, MergeLeasesTheBestValuesAcrossShards) {
  MakeCore(2, Mode::kMerge);
  FakeShards shards({{0.9, 0.5, 0.1}, {0.8, 0.7, 0.6, 0.55}});
  const LeaseRoundsResult r = Run(Slots(4), Mode::kMerge, &shards);
  EXPECT_EQ(r.unfilled_slots, 0u);
  EXPECT_THAT(shards.leased(), UnorderedElementsAre(0.9, 0.8, 0.7, 0.6));
}

TEST_F(LeaseRoundsTest, AHeldReportReachesItsShardBeforeTheShardLeases) {
  for (Mode mode : {Mode::kMerge, Mode::kSplitEqual}) {
    MakeCore(2, mode);
    FakeShards shards({{0.9, 0.5}, {0.8, 0.7}});
    ASSERT_TRUE(shards.held().Hold(1, Report(7)));
    Run(Slots(4), mode, &shards);
    ASSERT_FALSE(shards.log().empty());
    EXPECT_EQ(shards.log().front(), "deliver 1");
    EXPECT_EQ(shards.applied(1), 1);
    EXPECT_EQ(shards.held().pending(), 0u);
    EXPECT_EQ(shards.leased().size(), 4u);
  }
}

TEST_F(LeaseRoundsTest, AShardThatStillHoldsReportsLeasesNothing) {
  for (Mode mode : {Mode::kMerge, Mode::kSplitEqual}) {
    MakeCore(2, mode);
    FakeShards shards({{0.9, 0.5, 0.4, 0.3}, {0.8, 0.7}});
    shards.fail_delivery_[1] = true;
    ASSERT_TRUE(shards.held().Hold(1, Report(7)));
    const LeaseRoundsResult r = Run(Slots(4), mode, &shards);
    for (const std::string& call : shards.log()) {
      EXPECT_TRUE(call == "deliver 1" || call.rfind("peek 0", 0) == 0 ||
                  call.rfind("lease 0", 0) == 0)
          << call;
    }
    EXPECT_TRUE(shards.held().Holds(1));
    EXPECT_EQ(r.unfilled_slots, 0u);
    EXPECT_THAT(shards.leased(), UnorderedElementsAre(0.9, 0.5, 0.4, 0.3));
  }
}

TEST_F(LeaseRoundsTest, AFailedLeaseMovesItsSlotsToTheShardsThatAnswered) {
  for (Mode mode : {Mode::kMerge, Mode::kSplitEqual}) {
    MakeCore(2, mode);
    FakeShards shards({{0.9, 0.5, 0.4, 0.3}, {0.8, 0.7, 0.6, 0.55}});
    shards.fail_lease_[1] = true;
    const LeaseRoundsResult r = Run(Slots(4), mode, &shards);
    EXPECT_EQ(r.rounds, 2);
    EXPECT_EQ(r.unfilled_slots, 0u);
    EXPECT_THAT(shards.leased(), UnorderedElementsAre(0.9, 0.5, 0.4, 0.3));
  }
}

TEST_F(LeaseRoundsTest, AFailedPeekLeavesItsShardOut) {
  MakeCore(2, Mode::kMerge);
  FakeShards shards({{0.9, 0.5, 0.4, 0.3}, {0.8, 0.7, 0.6, 0.55}});
  shards.fail_peek_[1] = true;
  const LeaseRoundsResult r = Run(Slots(3), Mode::kMerge, &shards);
  EXPECT_EQ(r.unfilled_slots, 0u);
  EXPECT_THAT(shards.leased(), ElementsAre(0.9, 0.5, 0.4));
  for (const std::string& call : shards.log()) EXPECT_NE(call.rfind("lease 1", 0), 0u) << call;
}

TEST_F(LeaseRoundsTest, SlotsNoShardCanTakeStayUnfilled) {
  MakeCore(2, Mode::kSplitEqual);
  FakeShards shards({{0.9}, {0.8}});
  shards.fail_lease_[0] = shards.fail_lease_[1] = true;
  const LeaseRoundsResult r = Run(Slots(4), Mode::kSplitEqual, &shards);
  EXPECT_EQ(r.rounds, 1);
  EXPECT_EQ(r.unfilled_slots, 4u);
  EXPECT_TRUE(shards.leased().empty());
}

}  // namespace
}  // namespace coordinator
}  // namespace recrawl
