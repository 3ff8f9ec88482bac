#include "shard/host_prior_table.h"

#include <string>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

constexpr double kDay = 86400.0;

const policy::PageParams kDefault{1.0, 1.0 / kDay, 0.5, 0.1 / kDay};

TEST(HostPriorTableTest, FitsPagesWithTheDefaultPriorFromTheHost) {
  HostPriorTable table(kDefault, LearningOptions(), HostLearningOptions());
  EXPECT_FALSE(table.Fitted(1));
  EXPECT_FALSE(table.NewPageModel(1, 1.0).has_value());
  // Hourly changes, crawled every half hour.
  int refits = 0;
  for (int i = 0; i < 40; ++i) refits += table.Learn(1, 1800.0, 0, i % 2 == 0, 0.0);
  EXPECT_TRUE(table.Fitted(1));
  EXPECT_GE(refits, 2);
  const LearningState page = InitLearning(kDefault);
  const std::optional<LearnedModel> fit = table.FitPage(1, 1.0, page);
  ASSERT_TRUE(fit.has_value());
  EXPECT_GT(fit->estimate.change_rate * kDay, 5.0);  // the host's, not daily
  // A page with its own prior keeps it; another host has nothing yet.
  EXPECT_FALSE(table.FitPage(1, 1.0, InitLearning({1.0, 2.0 / kDay, 0.5, 0.1 / kDay})));
  EXPECT_FALSE(table.FitPage(2, 1.0, page));
  // The open interval's signal rate leans on the host's prior as the fit does.
  const std::optional<double> rate = table.SignalRate(1, page, 0, 0.0);
  ASSERT_TRUE(rate.has_value());
  EXPECT_NE(*rate, SignalRate(page, 0, 0.0, LearningOptions()));
  EXPECT_FALSE(table.SignalRate(2, page, 0, 0.0).has_value());
  ASSERT_TRUE(table.NewPageModel(1, 3.0).has_value());
  EXPECT_EQ(table.NewPageModel(1, 3.0)->importance, 3.0);
}

TEST(HostPriorTableTest, RestoresWhatItWroteAndRejectsInconsistentRecords) {
  HostPriorTable table(kDefault, LearningOptions(), HostLearningOptions());
  for (int i = 0; i < 30; ++i) table.Learn(4, 1800.0, 0, i % 3 == 0, 0.0);
  HostLearningRecord record;
  ASSERT_TRUE(table.ToRecord(4, &record));
  HostLearningRecord none;
  EXPECT_FALSE(table.ToRecord(5, &none));  // no outcome of that host
  HostPriorTable restored(kDefault, LearningOptions(), HostLearningOptions());
  ASSERT_TRUE(restored.Restore(9, record).ok());
  EXPECT_EQ(restored.NewPageModel(9, 1.0)->change_rate, table.NewPageModel(4, 1.0)->change_rate);
  EXPECT_TRUE(restored.TakeUnwritten().empty());
  HostLearningRecord bad = record;
  bad.set_recall(1.5f);
  EXPECT_NE(std::string(restored.Restore(10, bad).message()).find("host_learning"),
            std::string::npos);
  bad = record;
  bad.set_fitted_outcomes(record.pooled().crawls() + 1);
  EXPECT_FALSE(restored.Restore(10, bad).ok());
  EXPECT_FALSE(restored.Fitted(10));
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
