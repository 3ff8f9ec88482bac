#include "shard/index/candidate_pool.h"

#include <cmath>
#include <limits>

namespace recrawl {
namespace shard {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Slope classes 2^k for k in [kMinExponent, kMaxExponent]; slopes below the
// smallest are rounded up to it, above the largest they are void.
constexpr int kMinExponent = -40;
constexpr int kMaxExponent = 20;
constexpr int kSlopedClasses = kMaxExponent - kMinExponent + 1;
constexpr int kFlatClass = kSlopedClasses;      // slope 0: V is constant
constexpr int kVoidClass = kSlopedClasses + 1;  // bound +∞
constexpr int kClasses = kSlopedClasses + 2;
static_assert(kClasses <= 64, "the non-empty classes are a 64-bit mask");
// intercept + M t loses ~1e-16 (|intercept| + M t) to rounding; bounds are
// widened by more than that so they stay upper bounds.
constexpr double kRoundingSlack = 1e-12;

}  // namespace

CandidatePool::CandidatePool(Positions* positions) : positions_(positions) {
  classes_.reserve(kClasses);
  for (int k = 0; k < kClasses; ++k) {
    classes_.emplace_back(HigherIntercept(), SetPos{positions, k});
  }
}

size_t CandidatePool::MemoryBytes() const {
  size_t bytes = 0;
  for (const Heap& h : classes_) bytes += h.capacity() * sizeof(Entry);
  return bytes;
}

int CandidatePool::ClassOf(double slope) {
  if (slope <= 0.0) return kFlatClass;
  if (!(slope < kInf)) return kVoidClass;
  int exponent;
  const double mantissa = std::frexp(slope, &exponent);  // slope = m 2^e
  if (mantissa == 0.5) --exponent;  // exact power of two: 2^(e−1)
  if (exponent > kMaxExponent) return kVoidClass;
  if (exponent < kMinExponent) exponent = kMinExponent;
  return exponent - kMinExponent;
}

double CandidatePool::ClassSlope(int slope_class) {
  // 2^(k + kMinExponent), tabulated: this sits on the hot path of Top.
  static const auto* const table = [] {
    auto* slopes = new double[kClasses];
    for (int k = 0; k < kClasses; ++k) {
      slopes[k] = k < kSlopedClasses ? std::ldexp(1.0, k + kMinExponent) : 0.0;
    }
    return slopes;
  }();
  return table[slope_class];
}

double CandidatePool::BoundAt(int slope_class, const Entry& e,
                              double t) const {
  if (slope_class == kVoidClass) return kInf;
  if (e.at == t) return e.value;
  const double m = ClassSlope(slope_class);
  const double line = e.intercept + m * t;
  return line + kRoundingSlack * (std::fabs(e.intercept) + std::fabs(m * t));
}

void CandidatePool::Add(PageId page, double value, double at, double slope) {
  const int k = ClassOf(slope);
  const double m = ClassSlope(k);
  classes_[k].Push({value - m * at, value, at, page});
  Touch(k);
  ++size_;
}

void CandidatePool::Void(PageId page) {
  const int k = positions_->SlopeClass(page);
  if (k == kVoidClass) return;
  Entry e = classes_[k].at(positions_->Pos(page));
  classes_[k].Erase(positions_->Pos(page));
  Touch(k);
  e.value = -kInf;
  e.at = -kInf;
  e.intercept = kInf;
  classes_[kVoidClass].Push(e);
  Touch(kVoidClass);
}

void CandidatePool::Remove(PageId page) {
  const int k = positions_->SlopeClass(page);
  classes_[k].Erase(positions_->Pos(page));
  Touch(k);
  --size_;
}

void CandidatePool::Clear() {
  for (Heap& h : classes_) h.clear();
  non_empty_ = 0;
  size_ = 0;
}

int CandidatePool::BestClass(double t, double* bound) const {
  int best = -1;
  double best_bound = -kInf;
  PageId best_page = 0;
  for (uint64_t mask = non_empty_; mask != 0; mask &= mask - 1) {
    const int k = __builtin_ctzll(mask);
    const Entry& e = classes_[k].top();
    const double b = BoundAt(k, e, t);
    if (best < 0 || b > best_bound || (b == best_bound && e.page < best_page)) {
      best = k;
      best_bound = b;
      best_page = e.page;
    }
  }
  *bound = best_bound;
  return best;
}

bool CandidatePool::Top(double t, Entry* entry, double* bound) {
  top_class_ = BestClass(t, bound);
  if (top_class_ < 0) return false;
  *entry = classes_[top_class_].top();
  return true;
}

CandidatePool::Entry CandidatePool::PopTop() {
  const int k = top_class_;
  const Entry e = classes_[k].top();
  classes_[k].Erase(0);
  Touch(k);
  --size_;
  return e;
}

void CandidatePool::Touch(int k) {
  if (classes_[k].empty()) {
    non_empty_ &= ~(uint64_t{1} << k);
  } else {
    non_empty_ |= uint64_t{1} << k;
  }
}

std::vector<CandidatePool::Entry> CandidatePool::Entries() const {
  std::vector<Entry> all;
  all.reserve(size_);
  for (const Heap& h : classes_) {
    for (uint32_t i = 0; i < h.size(); ++i) all.push_back(h.at(i));
  }
  return all;
}

}  // namespace shard
}  // namespace recrawl
