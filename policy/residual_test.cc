#include "policy/residual.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "boost/math/special_functions/gamma.hpp"
#include "boost/multiprecision/cpp_bin_float.hpp"
#include "gtest/gtest.h"

namespace recrawl {
namespace policy {
namespace {

using Big = boost::multiprecision::cpp_bin_float_50;

// R^i(x) = P(i + 1, x), the regularised lower incomplete gamma function,
// evaluated with 50 significant digits.
double Reference(int64_t i, double x) {
  return static_cast<double>(boost::math::gamma_p(Big(static_cast<double>(i) + 1.0), Big(x)));
}

double ReferenceComplement(int64_t i, double x) {
  return static_cast<double>(boost::math::gamma_q(Big(static_cast<double>(i) + 1.0), Big(x)));
}

std::vector<double> Arguments(int64_t i) {
  std::vector<double> xs;
  for (double e = -12.0; e <= 6.0; e += 0.5) xs.push_back(std::pow(10.0, e));
  // Around the Poisson mean, where the two tails meet.
  const double a = static_cast<double>(i) + 1.0;
  for (double k : {-6.0, -3.0, -1.0, -0.25, 0.0, 0.25, 1.0, 3.0, 6.0}) {
    const double x = a + k * std::sqrt(a);
    if (x > 0.0) xs.push_back(x);
  }
  xs.push_back(a - 1.0);
  xs.push_back(a + 1e-9);
  return xs;
}

double max_relative_error = 0.0;
int comparisons = 0;

void ExpectRelativelyClose(double got, double want, int64_t i, double x, const char* what) {
  if (want >= 1e-290) {
    max_relative_error = std::max(max_relative_error, std::fabs(got - want) / want);
    ++comparisons;
  }
  if (want < 1e-290) {
    // Below the normal range the reference is not representable to 1e-12.
    EXPECT_LE(got, 1e-280) << what << " i=" << i << " x=" << x;
    return;
  }
  EXPECT_LE(std::fabs(got - want), 1e-12 * want)
      << what << " i=" << i << " x=" << x << " got=" << got << " want=" << want;
}

TEST(ResidualTest, MatchesHighPrecisionReference) {
  for (int64_t i : {0, 1, 2, 3, 5, 10, 20, 31, 32, 33, 50, 100, 1000, 10000, 100000, 1000000}) {
    for (double x : Arguments(i)) {
      if (x > 1e6 * 1.0000001 && i < 1000000) continue;
      ExpectRelativelyClose(Residual(i, x), Reference(i, x), i, x, "R");
      ExpectRelativelyClose(ResidualComplement(i, x), ReferenceComplement(i, x), i, x, "1-R");
    }
  }
  std::cout << comparisons << " comparisons, max relative error " << max_relative_error << "\n";
  EXPECT_GT(comparisons, 1000);
}

TEST(ResidualTest, SmallArgumentHasNoCancellation) {
  // R^i(x) ~ x^{i+1}/(i+1)! for x -> 0, where 1 - e^{-x} Σ would give 0.
  EXPECT_NEAR(Residual(0, 1e-12) / 1e-12, 1.0, 1e-12);
  EXPECT_NEAR(Residual(1, 1e-6) / (0.5e-12), 1.0, 1e-6);
  EXPECT_NEAR(Residual(2, 1e-4) / (1e-12 / 6.0), 1.0, 1e-4);
}

TEST(ResidualTest, DerivativeIdentity) {
  // d/dx R^i(x) = R^{i−1}(x) − R^i(x) = pmf(i, x) (main paper App. A, Eq. 3).
  for (int64_t i : {1, 2, 7, 40}) {
    for (double x : {0.3, 2.0, 9.0, 45.0}) {
      const double h = 1e-5 * x;
      const double numeric = (Residual(i, x + h) - Residual(i, x - h)) / (2 * h);
      EXPECT_NEAR(numeric, PoissonPmf(i, x), 1e-7 * (1 + PoissonPmf(i, x)));
      EXPECT_NEAR(Residual(i - 1, x) - Residual(i, x), PoissonPmf(i, x), 1e-14);
    }
  }
}

TEST(ResidualTest, GivenExpMatchesAndHonoursAbsoluteTolerance) {
  for (int64_t i : {0, 1, 4, 12, 31, 40}) {
    for (double x : {1e-9, 0.3, 2.0, 9.5, 30.0, 650.0, 800.0}) {
      const double want = Reference(i, x);
      const double exact = ResidualGivenExp(i, x, std::exp(-x));
      if (want > 1e-290) {
        EXPECT_LE(std::fabs(exact - want), 1e-12 * want) << i << " " << x;
      }
      const double loose = ResidualGivenExp(i, x, std::exp(-x), 1e-9);
      EXPECT_LE(std::fabs(loose - want), 1e-9) << i << " " << x;
    }
  }
}

// The paired call is ResidualGivenExp twice: the same results, bit for bit,
// on both the direct path and the others, with the tolerance divided by
// each weight.
TEST(ResidualTest, PairMatchesTwoSingleCalls) {
  const double xs[] = {0.0, 1e-9, 0.3, 2.0, 9.5, 30.0, 650.0, 800.0};
  for (int64_t i : {0, 1, 4, 12, 31, 40}) {
    for (double xa : xs) {
      for (double xb : xs) {
        for (double tol : {0.0, 1e-13, 1e-9}) {
          const ResidualArgs a{xa, std::exp(-xa), 0.5};
          const ResidualArgs b{xb, std::exp(-xb), 3.0};
          double ra = -1.0, rb = -1.0;
          ResidualsGivenExp(i, a, b, tol, &ra, &rb);
          EXPECT_EQ(ra, ResidualGivenExp(i, xa, a.exp_neg_x, tol / a.weight))
              << i << " " << xa << " " << tol;
          EXPECT_EQ(rb, ResidualGivenExp(i, xb, b.exp_neg_x, tol / b.weight))
              << i << " " << xb << " " << tol;
        }
      }
    }
  }
}

TEST(ResidualTest, EdgeValues) {
  EXPECT_EQ(Residual(0, 0.0), 0.0);
  EXPECT_EQ(Residual(5, 0.0), 0.0);
  EXPECT_EQ(Residual(5, INFINITY), 1.0);
  EXPECT_EQ(ResidualComplement(5, 0.0), 1.0);
  EXPECT_EQ(PoissonPmf(0, 0.0), 1.0);
  EXPECT_EQ(PoissonPmf(3, 0.0), 0.0);
}

TEST(ResidualTest, PmfMatchesReference) {
  for (int64_t k : {1, 5, 32, 33, 200, 100000}) {
    for (double x : {0.5, 10.0, 33.0, 250.0, 1e5, 9e5}) {
      const Big ref = boost::multiprecision::exp(
          -Big(x) + Big(static_cast<double>(k)) * boost::multiprecision::log(Big(x)) -
          boost::multiprecision::lgamma(Big(static_cast<double>(k) + 1.0)));
      const double want = static_cast<double>(ref);
      if (want < 1e-290) continue;
      EXPECT_LE(std::fabs(PoissonPmf(k, x) - want), 1e-13 * want) << "k=" << k << " x=" << x;
    }
  }
}

}  // namespace
}  // namespace policy
}  // namespace recrawl
