// The crawl value both index implementations compute, so that the scheduling
// index and its brute-force oracle agree to the last bit on equal inputs.
#ifndef RECRAWL_SHARD_INDEX_PAGE_VALUE_H_
#define RECRAWL_SHARD_INDEX_PAGE_VALUE_H_

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "policy/crawl_policy.h"
#include "policy/crawl_value.h"
#include "policy/page_model.h"
#include "shard/index/crawl_index.h"

namespace recrawl {
namespace shard {

// The model as the indexes hold it: parameters rounded to float (which is
// how SchedulingIndex stores them to stay within 64 bytes a page). Both
// implementations round, so the oracle sees exactly what the fast index
// sees.
inline policy::PageParams IndexedParams(const policy::PageParams& params) {
  policy::PageParams rounded = params;
  rounded.importance = static_cast<float>(params.importance);
  rounded.change_rate = static_cast<float>(params.change_rate);
  rounded.recall = static_cast<float>(params.recall);
  rounded.false_rate = static_cast<float>(params.false_rate);
  return rounded;
}

// Throws std::invalid_argument naming the field if the index could not
// value `params` (PageModel::Check): owners check models first, so this is
// a caller's bug.
inline void CheckIndexable(const policy::PageParams& params) {
  const absl::Status s = policy::PageModel::Check(IndexedParams(params));
  if (!s.ok()) throw std::invalid_argument(std::string(s.message()));
}

inline policy::PageModel ZeroModel() {
  return policy::PageModel::Create(policy::PageParams{}).value();
}

// V of the policy's belief (main paper Sec. 5.1) in state (τ_elap, n_cis),
// with its growth bounds (crawl_value.h). τ_elap < 0 (a crawl time after t)
// is treated as 0.
inline policy::ValueGrowth BeliefGrowth(const policy::PageModel& belief,
                                        const policy::CrawlPolicy& policy, double tau_elap,
                                        int64_t n_cis) {
  return policy::NcisValueGrowth(belief, std::max(tau_elap, 0.0), n_cis, policy.MaxTerms());
}

inline double BeliefValue(const policy::PageModel& belief, const policy::CrawlPolicy& policy,
                          double tau_elap, int64_t n_cis) {
  return BeliefGrowth(belief, policy, tau_elap, n_cis).value;
}

// Higher value first; equal values by page id, so both indexes break ties
// the same way.
inline bool BetterPick(const PickedPage& a, const PickedPage& b) {
  if (a.value != b.value) return a.value > b.value;
  return a.page < b.page;
}

}  // namespace shard
}  // namespace recrawl

#endif  // RECRAWL_SHARD_INDEX_PAGE_VALUE_H_
