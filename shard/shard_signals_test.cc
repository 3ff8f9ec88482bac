// Signal ingestion of the shard core.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shard/shard_test_util.h"

namespace recrawl {
namespace shard {
namespace {

using ::testing::HasSubstr;
using ShardSignalsTest = testing::ShardTest;

// Every signal lands in exactly one counter or is rejected.
void ExpectCountersAddUp(const SignalBatchAck& ack, int size) {
  EXPECT_EQ(ack.counted() + ack.registered() + ack.duplicate() + ack.stale() + ack.unknown() +
                ack.result().rejected_size(),
            static_cast<uint32_t>(size));
  EXPECT_EQ(ack.result().applied(), ack.counted() + ack.registered());
}

TEST_F(ShardSignalsTest, CountsSignalsSinceTheLastCrawl) {
  Add("https://a.com/");
  now_ = 1100;
  const SignalBatchAck ack =
      Signals({MakeSignal("https://a.com/", 1050), MakeSignal("https://A.com:443/", 1060)});
  EXPECT_EQ(ack.sequence(), 1u);
  EXPECT_EQ(ack.counted(), 2u);
  ExpectCountersAddUp(ack, 2);
  const UrlState s = State("https://a.com/");
  EXPECT_EQ(s.signals_since_crawl(), 2u);
  EXPECT_EQ(s.last_signal_time(), 1060);
  EXPECT_EQ(shard_->GetStats(now_).signals_total(), 2u);
}

TEST_F(ShardSignalsTest, SignalsRaiseTheCrawlValue) {
  Upsert({Spec("https://a.com/", 1.0, 0.01, 0.8, 0.001)});
  now_ = 1010;
  const double before = State("https://a.com/").crawl_value();
  Signals({MakeSignal("https://a.com/", 1005)});
  const UrlState after = State("https://a.com/");
  EXPECT_GT(after.crawl_value(), before);
  // τ_eff = τ_elap + β·n.
  EXPECT_GT(after.effective_elapsed(), 10.0);
}

// Main paper App. C: a signal within T_DELAY after a crawl is about a
// change the crawl saw; one from before the crawl as well.
TEST_F(ShardSignalsTest, StaleSignalsAreDropped) {
  options_.t_delay = 30;
  Recreate();
  Add("https://a.com/");  // last crawl 1000
  now_ = 1200;
  const SignalBatchAck ack = Signals({
      MakeSignal("https://a.com/", 900),   // before the crawl
      MakeSignal("https://a.com/", 1020),  // within T_DELAY
      MakeSignal("https://a.com/", 1030),  // at T_DELAY: counted
  });
  EXPECT_EQ(ack.stale(), 2u);
  EXPECT_EQ(ack.counted(), 1u);
  ExpectCountersAddUp(ack, 3);
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 1u);
}

TEST_F(ShardSignalsTest, DuplicateDeliveriesCountOnce) {
  Add("https://a.com/");
  now_ = 1100;
  SignalBatchAck ack =
      Signals({MakeSignal("https://a.com/", 1050), MakeSignal("https://a.com/", 1050)});
  EXPECT_EQ(ack.counted(), 1u);
  EXPECT_EQ(ack.duplicate(), 1u);
  // Redelivered in a later batch (a resend after a broken stream).
  ack = Signals({MakeSignal("https://a.com/", 1050),
                 MakeSignal("https://a.com/", 1050, SIGNAL_SOURCE_CDN),
                 MakeSignal("https://a.com/", 1051)});
  EXPECT_EQ(ack.duplicate(), 1u);
  EXPECT_EQ(ack.counted(), 2u);  // another source or time is another signal
  ExpectCountersAddUp(ack, 3);
  // ... and after a restart.
  Open();
  ack = Signals({MakeSignal("https://a.com/", 1050, SIGNAL_SOURCE_CDN)});
  EXPECT_EQ(ack.duplicate(), 1u);
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 3u);
}

// A signal stamped a little ahead of the shard's clock is counted at the
// clock's time; a redelivery, which comes later and so would be clamped to
// another time, is still the same delivery (seen after a coordinator
// restart: PingClient resends what was not acknowledged).
TEST_F(ShardSignalsTest, RedeliveriesStampedAheadOfTheClockCountOnce) {
  Add("https://a.com/");
  now_ = 1100;
  SignalBatchAck ack = Signals({MakeSignal("https://a.com/", 1100.5)});
  EXPECT_EQ(ack.counted(), 1u);
  now_ = 1100.2;
  ack = Signals({MakeSignal("https://a.com/", 1100.5)});
  EXPECT_EQ(ack.duplicate(), 1u);
  now_ = 1101;
  ack = Signals({MakeSignal("https://a.com/", 1100.5)});
  EXPECT_EQ(ack.duplicate(), 1u);
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 1u);
}

// However many signals a URL gets before its next crawl, later ones are
// counted (the duplicate filter is only asked about redeliveries, which
// repeat an earlier time), and redeliveries are still caught.
TEST_F(ShardSignalsTest, ManySignalsInTimeOrderAreAllCounted) {
  Add("https://a.com/");
  now_ = 2000;
  std::vector<Signal> signals;
  for (int i = 0; i < 500; ++i) {
    signals.push_back(MakeSignal("https://a.com/", 1000.5 + i));
  }
  EXPECT_EQ(Signals(signals).counted(), 500u);
  EXPECT_EQ(State("https://a.com/").last_signal_time(), 1499.5);
  Open();
  const SignalBatchAck again =
      Signals({MakeSignal("https://a.com/", 1499.5), MakeSignal("https://a.com/", 1600)});
  EXPECT_EQ(again.duplicate(), 1u);
  EXPECT_EQ(again.counted(), 1u);
  // An out-of-order signal (earlier than the latest) is counted too unless
  // the filter, full of 501 keys, takes it for a duplicate: either way it
  // is accounted for.
  const SignalBatchAck late = Signals({MakeSignal("https://a.com/", 1200.25)});
  EXPECT_EQ(late.counted() + late.duplicate(), 1u);
  EXPECT_EQ(State("https://a.com/").last_signal_time(), 1600);
}

TEST_F(ShardSignalsTest, FutureTimesAreRejectedBeyondTheSkew) {
  options_.max_clock_skew = 60;
  Open();
  Add("https://a.com/");
  const SignalBatchAck ack = Signals({
      MakeSignal("https://a.com/", now_ + 30),    // within the skew: now
      MakeSignal("https://a.com/", now_ + 3600),  // too far
      MakeSignal("https://a.com/", std::numeric_limits<double>::quiet_NaN()),
      MakeSignal("https://a.com/", -5),
  });
  EXPECT_EQ(ack.counted(), 1u);
  ASSERT_EQ(ack.result().rejected_size(), 3);
  EXPECT_EQ(ack.result().rejected(0).index(), 1u);
  EXPECT_EQ(ack.result().rejected(0).code(), 11);  // OUT_OF_RANGE
  EXPECT_THAT(ack.result().rejected(0).message(), HasSubstr("time:"));
  EXPECT_EQ(ack.result().rejected(1).code(), 3);
  EXPECT_EQ(ack.result().rejected(2).code(), 3);
  EXPECT_EQ(State("https://a.com/").last_signal_time(), now_);
}

TEST_F(ShardSignalsTest, FutureTimesCanBeClamped) {
  options_.max_clock_skew = 60;
  options_.clamp_future_times = true;
  Open();
  Add("https://a.com/");
  const SignalBatchAck ack = Signals({MakeSignal("https://a.com/", now_ + 3600)});
  EXPECT_EQ(ack.counted(), 1u);
  EXPECT_EQ(State("https://a.com/").last_signal_time(), now_);
}

TEST_F(ShardSignalsTest, TimeZeroMeansNow) {
  Add("https://a.com/");
  now_ = 1234;
  EXPECT_EQ(Signals({MakeSignal("https://a.com/", 0)}).counted(), 1u);
  EXPECT_EQ(State("https://a.com/").last_signal_time(), 1234);
}

TEST_F(ShardSignalsTest, UnknownUrlsAreCountedAndSkipped) {
  Add("https://a.com/");
  const SignalBatchAck ack =
      Signals({MakeSignal("https://new.com/", 900), MakeSignal("nonsense", 900),
               MakeSignal("https://a.com/", 900), MakeSignal("https://other.com/", 900)});
  EXPECT_EQ(ack.unknown(), 2u);
  EXPECT_THAT(ack.unknown_indexes(), ::testing::ElementsAre(0u, 3u));
  EXPECT_EQ(ack.result().rejected_size(), 1);
  ExpectCountersAddUp(ack, 4);
  EXPECT_EQ(StateCode("https://new.com/"), absl::StatusCode::kNotFound);
}

// Sources are an enum: an unknown value is refused, like an unknown
// outcome.
TEST_F(ShardSignalsTest, UnknownSourcesAreRejected) {
  Add("https://a.com/");
  Signal bad = MakeSignal("https://a.com/", now_);
  bad.set_source(static_cast<SignalSource>(99));
  const SignalBatchAck ack = Signals({bad, MakeSignal("https://a.com/", now_)});
  EXPECT_EQ(ack.counted(), 1u);
  ASSERT_EQ(ack.result().rejected_size(), 1);
  EXPECT_EQ(ack.result().rejected(0).index(), 0u);
  EXPECT_EQ(ack.result().rejected(0).code(), 3);  // INVALID_ARGUMENT
  EXPECT_THAT(ack.result().rejected(0).message(), HasSubstr("source: unknown value 99"));
}

TEST_F(ShardSignalsTest, UnknownUrlsCanBeRegistered) {
  options_.register_unknown_urls = true;
  options_.default_importance = 3.0;
  Open();
  const SignalBatchAck ack =
      Signals({MakeSignal("https://new.com/x", 900), MakeSignal("https://new.com/x", 900)});
  EXPECT_EQ(ack.registered(), 1u);
  EXPECT_EQ(ack.duplicate(), 1u);
  ExpectCountersAddUp(ack, 2);
  const UrlState s = State("https://new.com/x");
  EXPECT_EQ(s.importance(), 3.0);
  EXPECT_EQ(s.signals_since_crawl(), 1u);
  EXPECT_DOUBLE_EQ(s.prior().change_rate(), options_.default_change_rate);
  // Durable like any other URL.
  Open();
  EXPECT_EQ(State("https://new.com/x").signals_since_crawl(), 1u);
}

// URLs in normal form and others take the same checks and find or
// register the same page.
TEST_F(ShardSignalsTest, UrlsAreKnownByTheirNormalForm) {
  options_.register_unknown_urls = true;
  options_.url_limits.max_length = 24;
  Open();
  const SignalBatchAck ack = Signals(
      {MakeSignal("HTTPS://New.com:443/x#f", 900), MakeSignal("https://new.com/x", 901),
       MakeSignal("https://new.com/12345678", 902), MakeSignal("https://new.com/123456789", 903)});
  EXPECT_EQ(ack.registered(), 2u);
  EXPECT_EQ(ack.counted(), 1u);
  ExpectCountersAddUp(ack, 4);
  ASSERT_EQ(ack.result().rejected_size(), 1);
  EXPECT_EQ(ack.result().rejected(0).index(), 3u);
  EXPECT_THAT(ack.result().rejected(0).message(), HasSubstr("longer than 24 bytes"));
  EXPECT_EQ(State("https://new.com/x").signals_since_crawl(), 2u);
  EXPECT_EQ(State("https://new.com/12345678").signals_since_crawl(), 1u);
}

TEST_F(ShardSignalsTest, OversizedBatchIsRejectedWhole) {
  options_.max_batch_items = 2;
  Open();
  SignalBatch batch;
  for (int i = 0; i < 3; ++i) *batch.add_signals() = MakeSignal("https://a.com/", 1);
  absl::StatusOr<SignalBatchAck> ack = shard_->IngestSignals(batch, now_);
  ASSERT_FALSE(ack.ok());
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(ack.status().message(), HasSubstr("signals: 3 items"));
}

// Signals of negligible precision are ranked as no signals (the exact NCIS
// value would cost time linear in ν/Δ), while the model keeps ν.
TEST_F(ShardSignalsTest, NegligibleSignalsAreIgnoredInRanking) {
  Upsert({Spec("https://noisy.com/", 1.0, 1e-5, 1e-6, 1e-1),
          Spec("https://quiet.com/", 1.0, 1e-5, 1e-6, 1e-1)});
  now_ = 5000;
  Signals({MakeSignal("https://noisy.com/", 4000), MakeSignal("https://noisy.com/", 4500)});
  const UrlState noisy = State("https://noisy.com/");
  EXPECT_EQ(noisy.signals_since_crawl(), 2u);
  EXPECT_FLOAT_EQ(noisy.estimate().false_rate(), 0.1);
  // The second signal re-estimated the signal rate (far below ν₀ = 0.1),
  // which moved only the change rate's negligible signalled part λΔ.
  const double quiet = State("https://quiet.com/").crawl_value();
  ASSERT_GT(quiet, 0.0);
  // λ < 1e-5: the change rate, and the value with it, moved by less than
  // that share.
  EXPECT_LT(noisy.ranked().recall(), 1e-5);
  EXPECT_NEAR(noisy.crawl_value(), quiet, 1e-5 * quiet);
  EXPECT_EQ(noisy.ranked().false_rate(), 0.0);  // the signals hidden
}

// At the 2nd, 4th, 8th, ... signal since its crawl a page's signal rate is
// re-estimated with the open interval; what the crawls fit (α = (1 − λ)Δ
// and the precision) stays.
TEST_F(ShardSignalsTest, SignalCountsRefreshTheSignalRate) {
  Upsert({Spec("https://busy.com/", 1.0, 1e-3, 0.5, 1e-3)});  // γ₀ = 1.5e-3
  const UrlState before = State("https://busy.com/");
  now_ = 1100;
  std::vector<Signal> signals;
  for (int i = 0; i < 3; ++i) {
    signals.push_back(MakeSignal("https://busy.com/", 1001 + i));
  }
  Signals(signals);  // the 2nd refreshes, the 3rd does not
  const UrlState refreshed = State("https://busy.com/");
  EXPECT_EQ(refreshed.signals_since_crawl(), 3u);
  const ChangeModel& r = refreshed.ranked();
  const ChangeModel& b = before.ranked();
  auto gamma = [](const ChangeModel& m) { return m.recall() * m.change_rate() + m.false_rate(); };
  // γ̂ = (2 + 3·γ₀·τ̄) / (t − last crawl + 3·τ̄), τ̄ = 1/γ₀ (the prior's
  // time scale), at the 2nd signal's time.
  const double gamma0 = 1.5e-3, pseudo = 1.0 / gamma0;
  const double open = 1002 - State("https://busy.com/").last_crawl_time();
  EXPECT_NEAR(gamma(r), (2 + 3 * gamma0 * pseudo) / (open + 3 * pseudo), 1e-5 * gamma(r));
  EXPECT_NEAR((1 - r.recall()) * r.change_rate(), (1 - b.recall()) * b.change_rate(),
              1e-5 * b.change_rate());
  EXPECT_NEAR(r.false_rate() / gamma(r), b.false_rate() / gamma(b), 1e-5);
  // The estimate the crawls fit is not touched.
  EXPECT_FLOAT_EQ(refreshed.estimate().false_rate(), 1e-3f);
}

// A never-crawled page is re-ranked at its refreshes by the fit of its
// prior scaled to the new signal rate: the index's model is rescaled, not
// the prior fitted again.
TEST_F(ShardSignalsTest, RefreshesOfANeverCrawledPageDoNotRefitItsPrior) {
  Upsert(
      {Spec("https://a.com/", 1.0, 1e-3, 0.5, 1e-3), Spec("https://b.com/", 1.0, 2e-3, 0.3, 1e-4)});
  const uint64_t fits = shard_->prior_fits();
  now_ = 1100;
  for (int i = 0; i < 8; ++i) {
    Signals({MakeSignal("https://a.com/", 1001 + i), MakeSignal("https://b.com/", 1001 + i)});
  }
  EXPECT_EQ(shard_->prior_fits(), fits);  // 3 refreshes of each page
  // As fitting again would rank it, to float precision: γ̂ at the 8th
  // signal, with what the prior's fit says of α and αβ.
  const LearningOptions& o = options_.learning;
  const policy::PageParams prior{1.0, 1e-3, 0.5, 1e-3};
  const policy::PageParams fit = Fit(InitLearning(prior), 1.0, o).params;
  const UrlState a = State("https://a.com/");
  EXPECT_EQ(a.signals_since_crawl(), 8u);
  const double open = 1008 - a.last_crawl_time();  // T_DELAY is 0 here
  const policy::PageParams exact = WithSignalRate(fit, SignalRate(InitLearning(prior), 8, open, o));
  EXPECT_NEAR(a.ranked().change_rate(), exact.change_rate, 1e-6 * exact.change_rate);
  EXPECT_NEAR(a.ranked().recall(), exact.recall, 1e-6);
  EXPECT_NEAR(a.ranked().false_rate(), exact.false_rate, 1e-6 * exact.false_rate);
}

TEST_F(ShardSignalsTest, SignalsWhileLeasedCountAfterwards) {
  Add("https://a.com/");
  ASSERT_EQ(Lease(1).leases_size(), 1);
  now_ = 1100;
  EXPECT_EQ(Signals({MakeSignal("https://a.com/", 1050)}).counted(), 1u);
  EXPECT_EQ(State("https://a.com/").signals_since_crawl(), 1u);
}

}  // namespace
}  // namespace shard
}  // namespace recrawl
