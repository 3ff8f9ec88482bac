#include "policy/page_model.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace policy {
namespace {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

PageModel Make(double mu, double delta, double lambda, double nu) {
  absl::StatusOr<PageModel> m = PageModel::Create({mu, delta, lambda, nu});
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

TEST(PageModelTest, DerivedQuantitiesMatchSection3) {
  const PageModel m = Make(0.7, 2.0, 0.25, 0.5);
  EXPECT_DOUBLE_EQ(m.alpha(), 1.5);                 // (1 − λ)Δ
  EXPECT_DOUBLE_EQ(m.gamma(), 1.0);                 // λΔ + ν
  EXPECT_DOUBLE_EQ(m.precision(), 0.5);             // λΔ/γ
  EXPECT_DOUBLE_EQ(m.beta(), std::log(2.0) / 1.5);  // −log(ν/γ)/α
  EXPECT_DOUBLE_EQ(m.log_signal_factor(), std::log(2.0));
  EXPECT_TRUE(m.signals_informative());
}

TEST(PageModelTest, FreshProbabilityIsEquationOne) {
  const PageModel m = Make(1.0, 2.0, 0.25, 0.5);
  const double tau = 0.3;
  EXPECT_NEAR(m.FreshProbability(tau, 2), std::exp(-m.alpha() * tau) * std::pow(0.5 / 1.0, 2),
              1e-15);
  // exp(−α τ_eff) is the same probability.
  EXPECT_NEAR(std::exp(-m.alpha() * m.EffectiveElapsed(tau, 2)), m.FreshProbability(tau, 2), 1e-15);
}

TEST(PageModelTest, NoFalseSignalsMakesBetaInfinite) {
  const PageModel m = Make(1.0, 1.0, 0.5, 0.0);
  EXPECT_EQ(m.beta(), kInf);
  EXPECT_DOUBLE_EQ(m.precision(), 1.0);
  EXPECT_EQ(m.EffectiveElapsed(0.1, 1), kInf);
  EXPECT_EQ(m.EffectiveElapsed(0.1, 0), 0.1);
  EXPECT_EQ(m.FreshProbability(0.1, 1), 0.0);
  // No signal yet: only the unsignalled changes count (not 0·∞).
  EXPECT_DOUBLE_EQ(m.FreshProbability(0.1, 0), std::exp(-0.05));
}

TEST(PageModelTest, ZeroRecallSignalsAreUninformative) {
  const PageModel m = Make(1.0, 1.0, 0.0, 0.4);
  EXPECT_FALSE(m.signals_informative());
  EXPECT_DOUBLE_EQ(m.alpha(), 1.0);
  EXPECT_DOUBLE_EQ(m.gamma(), 0.4);
  EXPECT_EQ(m.beta(), 0.0);
  EXPECT_EQ(m.precision(), 0.0);
  EXPECT_EQ(m.EffectiveElapsed(0.5, 7), 0.5);
}

TEST(PageModelTest, FullRecallHasNoUnsignalledChanges) {
  const PageModel m = Make(1.0, 1.0, 1.0, 0.5);
  EXPECT_EQ(m.alpha(), 0.0);
  EXPECT_EQ(m.beta(), kInf);
  EXPECT_DOUBLE_EQ(m.log_signal_factor(), std::log(1.5 / 0.5));
  // Freshness no longer decays with time, only with signals.
  EXPECT_DOUBLE_EQ(m.FreshProbability(100.0, 0), 1.0);
  EXPECT_NEAR(m.FreshProbability(100.0, 1), 0.5 / 1.5, 1e-15);
}

TEST(PageModelTest, NoSignalsAtAll) {
  const PageModel m = Make(1.0, 1.0, 0.0, 0.0);
  EXPECT_EQ(m.gamma(), 0.0);
  EXPECT_EQ(m.precision(), 0.0);
  EXPECT_FALSE(m.signals_informative());
}

TEST(PageModelTest, ZeroChangeRate) {
  const PageModel m = Make(1.0, 0.0, 0.5, 0.2);
  EXPECT_EQ(m.alpha(), 0.0);
  EXPECT_DOUBLE_EQ(m.gamma(), 0.2);
  EXPECT_FALSE(m.signals_informative());
  EXPECT_DOUBLE_EQ(m.FreshProbability(1e6, 3), 1.0);
}

TEST(PageModelTest, BeliefsDropSignals) {
  const PageModel m = Make(1.0, 1.0, 0.5, 0.3);
  EXPECT_EQ(m.WithoutSignals().gamma(), 0.0);
  EXPECT_DOUBLE_EQ(m.WithoutSignals().alpha(), 1.0);
  EXPECT_EQ(m.WithoutFalseSignals().beta(), kInf);
  EXPECT_DOUBLE_EQ(m.WithoutFalseSignals().gamma(), 0.5);
  EXPECT_DOUBLE_EQ(m.WithImportance(0.25).importance(), 0.25);
}

TEST(PageModelTest, RejectsInvalidValuesNamingTheField) {
  const double nan = std::nan("");
  struct Case {
    PageParams params;
    const char* field;
  } cases[] = {
      {{-1.0, 1.0, 0.5, 0.1}, "importance"},  {{nan, 1.0, 0.5, 0.1}, "importance"},
      {{1.0, -0.1, 0.5, 0.1}, "change_rate"}, {{1.0, kInf, 0.5, 0.1}, "change_rate"},
      {{1.0, 1.0, -0.5, 0.1}, "recall"},      {{1.0, 1.0, 1.5, 0.1}, "recall"},
      {{1.0, 1.0, nan, 0.1}, "recall"},       {{1.0, 1.0, 0.5, -1.0}, "false_rate"},
      {{1.0, 1.0, 0.5, nan}, "false_rate"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PageModel> m = PageModel::Create(c.params);
    ASSERT_FALSE(m.ok()) << c.field;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr(c.field));
  }
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
