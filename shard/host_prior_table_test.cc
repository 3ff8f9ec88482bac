#include "shard/host_prior_table.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace recrawl {
namespace shard {
namespace {

constexpr double kDay = 86400.0;

const policy::PageParams kDefault{1.0, 1.0 / kDay, 0.5, 0.1 / kDay};

// Pages' own learning states, as the shard keeps them: an outcome is learnt
// into the page's state after the table has pooled it.
class Pages {
 public:
  // LearnFromCrawl on `page` of `host`, pooled; true at a refit.
  bool Learn(HostPriorTable* table, HostId host, PageId page, double tau, int64_t n_cis,
             bool changed) {
    LearningState& state = State(page);
    LearningState learnt = state;
    EXPECT_TRUE(LearnFromCrawl(tau, n_cis, changed, 0.0, &learnt));
    const bool refit = table->Learn(host, page, tau, n_cis, changed, 0.0,
                                    [this](PageId other) { return State(other); });
    state = learnt;
    return refit;
  }
  LearningState& State(PageId page) {
    return states_.try_emplace(page, InitLearning(kDefault)).first->second;
  }

 private:
  std::map<PageId, LearningState> states_;
};

TEST(HostPriorTableTest, FitsPagesWithTheDefaultPriorFromTheHost) {
  HostPriorTable table(kDefault, LearningOptions(), HostLearningOptions());
  EXPECT_FALSE(table.Fitted(1));
  EXPECT_FALSE(table.NewPageModel(1, 1.0).has_value());
  // Hourly changes, crawled every half hour, on four pages.
  Pages pages;
  int refits = 0;
  for (int i = 0; i < 40; ++i) refits += pages.Learn(&table, 1, i % 4, 1800.0, 0, i % 2 == 0);
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
  Pages pages;
  for (int i = 0; i < 30; ++i) pages.Learn(&table, 4, i % 2, 1800.0, 0, i % 3 == 0);
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

// A host's pooled state is made at its second page with an outcome, from
// the first page's state: the same outcomes, fits and refit points as a
// learner fed every outcome of the host from the first on.
TEST(HostPriorTableTest, PoolsAHostFromItsSecondPageAsIfFromItsFirstOutcome) {
  HostPriorTable table(kDefault, LearningOptions(), HostLearningOptions());
  HostLearningState reference = InitHostLearning(kDefault);
  Pages pages;
  int refits = 0;
  int reference_refits = 0;
  for (int i = 0; i < 60; ++i) {
    // Page 7 alone for the first five outcomes, then pages 7, 8 and 9.
    const PageId page = i < 5 ? 7 : 7 + i % 3;
    const double tau = 1200.0 + 100.0 * (i % 7);
    const int64_t n = i % 5 == 0 ? 1 : 0;
    const bool changed = i % 2 == 0;
    refits += pages.Learn(&table, 3, page, tau, n, changed);
    reference_refits +=
        LearnHostFromCrawl(tau, n, changed, 0.0, LearningOptions(), HostLearningOptions(),
                           &reference) == HostUpdate::kRefitted;
    EXPECT_EQ(table.size(), i < 5 ? 0u : 1u) << i;
  }
  EXPECT_EQ(refits, reference_refits);
  HostLearningRecord record;
  ASSERT_TRUE(table.ToRecord(3, &record));
  EXPECT_EQ(record.pooled().crawls(), 60u);
  EXPECT_EQ(record.fitted_outcomes(), reference.fitted_outcomes);
  EXPECT_EQ(record.change_rate(), reference.change_rate);
  EXPECT_EQ(record.recall(), reference.recall);
  EXPECT_EQ(record.false_rate(), reference.false_rate);
  LearningState page = pages.State(8);
  const std::optional<LearnedModel> fit = table.FitPage(3, 2.0, page);
  ASSERT_TRUE(fit.has_value());
  const LearnedModel expected =
      FitPage(reference, 2.0, LearningOptions(), HostLearningOptions(), &page);
  EXPECT_EQ(fit->params.change_rate, expected.params.change_rate);
  EXPECT_EQ(fit->params.recall, expected.params.recall);
  EXPECT_EQ(fit->params.false_rate, expected.params.false_rate);
}

// A host with one crawled page has no pooled state and no host prior, for
// that page or new ones; removing the page pools what it learnt.
TEST(HostPriorTableTest, KeepsOnlyThePageOfAHostWithOneCrawledPage) {
  HostPriorTable table(kDefault, LearningOptions(), HostLearningOptions());
  Pages pages;
  for (int i = 0; i < 40; ++i) EXPECT_FALSE(pages.Learn(&table, 2, 5, 1800.0, 0, i % 2 == 0));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_FALSE(table.Fitted(2));
  EXPECT_FALSE(table.FitPage(2, 1.0, pages.State(5)).has_value());
  EXPECT_FALSE(table.NewPageModel(2, 1.0).has_value());
  HostLearningRecord record;
  EXPECT_FALSE(table.ToRecord(2, &record));
  EXPECT_TRUE(table.TakeUnwritten().empty());
  // Another page's removal changes nothing; the crawled page's pools it.
  EXPECT_FALSE(table.RemovePage(2, 6, pages.State(6)));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.RemovePage(2, 5, pages.State(5)));  // 40 outcomes: fitted
  EXPECT_TRUE(table.Fitted(2));
  ASSERT_TRUE(table.ToRecord(2, &record));
  EXPECT_EQ(record.pooled().crawls(), 40u);
  EXPECT_EQ(table.TakeUnwritten(), std::vector<HostId>{2});
  // Page 5 reused for a page of another host: that host starts afresh.
  pages.State(5) = InitLearning(kDefault);
  EXPECT_FALSE(pages.Learn(&table, 3, 5, 1800.0, 0, true));
  EXPECT_EQ(table.size(), 1u);
}

// After a restart a host with one crawled page is known by that page again
// (NotePage), so its second page pools both; a restored host ignores it.
TEST(HostPriorTableTest, NotePageFindsTheFirstPageAgain) {
  HostPriorTable table(kDefault, LearningOptions(), HostLearningOptions());
  Pages pages;
  for (int i = 0; i < 4; ++i) pages.Learn(&table, 1, 10, 1800.0, 0, i % 2 == 0);
  HostPriorTable restarted(kDefault, LearningOptions(), HostLearningOptions());
  restarted.NotePage(1, 10);
  restarted.NotePage(1, 11);  // (not crawled: the first page noted stays)
  pages.Learn(&restarted, 1, 12, 1800.0, 0, true);
  HostLearningRecord record;
  ASSERT_TRUE(restarted.ToRecord(1, &record));
  EXPECT_EQ(record.pooled().crawls(), 5u);
  restarted.NotePage(1, 13);
  EXPECT_EQ(restarted.size(), 1u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
