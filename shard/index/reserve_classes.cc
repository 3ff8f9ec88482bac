#include "shard/index/reserve_classes.h"

#include <algorithm>
#include <climits>
#include <limits>

#include "shard/index/candidate_pool.h"
#include "shard/index/slope_class.h"

namespace recrawl {
namespace shard {
namespace {

bool Lower(const ReserveClasses::Entry& a, const ReserveClasses::Entry& b) {
  return a.value < b.value;  // std heap order: the largest on top
}

}  // namespace

void ReserveClasses::Start(double at) {
  Clear();
  at_ = at;
  ordered_ = false;
}

void ReserveClasses::Clear() {
  std::vector<Class>().swap(classes_);
  size_ = 0;
  window_base_ = INT_MIN;
  window_.fill(0);
  ordered_ = true;
}

ReserveClasses::Class& ReserveClasses::ClassFor(double later_slope) {
  const int id = SlopeClassOf(later_slope);
  // Classes by id in a window of ids from the first class's, else by a
  // scan (slopes spread over more than 2^(kWindow/8) either way).
  const int64_t slot = static_cast<int64_t>(id) - window_base_;
  const bool in_window = window_base_ != INT_MIN && slot >= 0 && slot < kWindow;
  if (in_window && window_[slot] > 0) return classes_[window_[slot] - 1];
  if (!in_window) {
    for (Class& k : classes_) {
      if (k.id == id) return k;
    }
  }
  if (window_base_ == INT_MIN && id != INT_MIN) window_base_ = id - kWindow / 2;
  const int64_t base_slot = static_cast<int64_t>(id) - window_base_;
  if (window_base_ != INT_MIN && base_slot >= 0 && base_slot < kWindow) {
    window_[base_slot] = static_cast<uint16_t>(classes_.size() + 1);
  }
  classes_.push_back({id, SlopeClassRate(id, later_slope), {}});
  return classes_.back();
}

void ReserveClasses::Add(PageId page, double t, double value, double later_slope) {
  Class& k = ClassFor(later_slope);
  k.rate = std::max(k.rate, later_slope);
  k.heap.push_back({CandidatePool::CeilFloat(value - k.rate * Age(t)), page});
  if (ordered_) std::push_heap(k.heap.begin(), k.heap.end(), Lower);
  ++size_;
}

void ReserveClasses::Order() {
  for (Class& k : classes_) {
    std::make_heap(k.heap.begin(), k.heap.end(), Lower);
    k.heap.shrink_to_fit();
  }
  ordered_ = true;
}

double ReserveClasses::Bound(const Class& k, double t) const {
  return static_cast<double>(k.heap.front().value) + k.rate * Age(t);
}

int ReserveClasses::TopClass(double t) const {
  int top = -1;
  double bound = -std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < classes_.size(); ++c) {
    if (classes_[c].heap.empty()) continue;
    const double b = Bound(classes_[c], t);
    if (top < 0 || b > bound) {
      bound = b;
      top = static_cast<int>(c);
    }
  }
  return top;
}

double ReserveClasses::TopBound(double t) const {
  const int c = TopClass(t);
  return c < 0 ? -std::numeric_limits<double>::infinity() : Bound(classes_[c], t);
}

ReserveClasses::Entry ReserveClasses::Pop(int c) {
  std::vector<Entry>& heap = classes_[c].heap;
  std::pop_heap(heap.begin(), heap.end(), Lower);
  const Entry e = heap.back();
  heap.pop_back();
  --size_;
  return e;
}

size_t ReserveClasses::MemoryBytes() const {
  size_t bytes = classes_.capacity() * sizeof(Class);
  for (const Class& k : classes_) bytes += k.heap.capacity() * sizeof(Entry);
  return bytes;
}

}  // namespace shard
}  // namespace recrawl
