// Neumaier's compensated summation. The solvers add up to millions of positive
// rates that must meet a bandwidth to ~1e-15 relative, which plain summation
// cannot promise.
#ifndef RECRAWL_POLICY_COMPENSATED_SUM_H_
#define RECRAWL_POLICY_COMPENSATED_SUM_H_

#include <cmath>

namespace recrawl {
namespace policy {

class CompensatedSum {
 public:
  void Add(double x) {
    const double t = sum_ + x;
    if (std::fabs(sum_) >= std::fabs(x)) {
      compensation_ += (sum_ - t) + x;
    } else {
      compensation_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  double Total() const { return sum_ + compensation_; }

 private:
  double sum_ = 0.0;
  double compensation_ = 0.0;
};

}  // namespace policy
}  // namespace recrawl

#endif  // RECRAWL_POLICY_COMPENSATED_SUM_H_
