// SchedulingIndex's cohorts of pages alike (scheduling_index.h): pages with
// one value at all times, of which only the one of lowest id is in the pool.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "shard/index/scheduling_index.h"

namespace recrawl {
namespace shard {

bool SchedulingIndex::Alike(const Page& a, const Page& b) const {
  static_assert(offsetof(Page, importance) == 0 && offsetof(Page, last_crawl) == 16 &&
                    offsetof(Page, iota_lb) == kLikenessBytes,
                "Alike compares the model and the crawl time as one block");
  return a.n_cis == b.n_cis && std::memcmp(&a, &b, kLikenessBytes) == 0;
}

SchedulingIndex::Likeness SchedulingIndex::LikenessOf(const Page& p) {
  Likeness l;
  std::memcpy(l.bytes.data(), &p, kLikenessBytes);
  l.n_cis = p.n_cis;
  return l;
}

size_t SchedulingIndex::CohortBytes() const {
  size_t bytes = cohorts_.capacity() * sizeof(Cohort) +
                 free_cohorts_.capacity() * sizeof(uint32_t) +
                 led_by_.capacity() * (sizeof(PageId) + sizeof(uint32_t) + 1);
  for (const Cohort& c : cohorts_) bytes += c.followers.capacity() * sizeof(PageId);
  return bytes;
}

uint32_t SchedulingIndex::LedCohort(PageId page) const {
  if (led_by_.empty()) return kNoCohort;
  const auto it = led_by_.find(page);
  return it == led_by_.end() ? kNoCohort : it->second;
}

uint32_t SchedulingIndex::NewCohort(PageId leader) {
  uint32_t c;
  if (free_cohorts_.empty()) {
    c = static_cast<uint32_t>(cohorts_.size());
    cohorts_.emplace_back();
  } else {
    c = free_cohorts_.back();
    free_cohorts_.pop_back();
  }
  cohorts_[c].leader = leader;
  led_by_[leader] = c;
  return c;
}

void SchedulingIndex::ReleaseCohort(uint32_t c) {
  Cohort& cohort = cohorts_[c];
  cohort.leader = kNoPage;
  cohort.live = 0;
  std::vector<PageId>().swap(cohort.followers);
  free_cohorts_.push_back(c);
}

void SchedulingIndex::FreeCohort(uint32_t c) {
  led_by_.erase(cohorts_[c].leader);
  followers_ -= cohorts_[c].live;
  ReleaseCohort(c);
}

void SchedulingIndex::Follow(PageId page, PageId leader) {
  ++stats_.follows;
  uint32_t into = LedCohort(leader);
  uint32_t from = LedCohort(page);
  if (from != kNoCohort) {
    // The page's own followers follow the leader too: the smaller cohort's
    // move into the larger, which the leader leads.
    led_by_.erase(page);
    if (into == kNoCohort || cohorts_[from].followers.size() > cohorts_[into].followers.size()) {
      std::swap(into, from);
      cohorts_[into].leader = leader;
      led_by_[leader] = into;
    }
    if (from != kNoCohort) {
      Cohort& target = cohorts_[into];
      for (PageId f : cohorts_[from].followers) {
        Page& fp = pages_[f];
        if (fp.state != kFollower || fp.pos != from) continue;
        fp.pos = into;
        target.followers.push_back(f);
        std::push_heap(target.followers.begin(), target.followers.end(), std::greater<PageId>());
      }
      target.live += cohorts_[from].live;  // still followers: followers_ stays
      ReleaseCohort(from);
    }
  }
  if (into == kNoCohort) into = NewCohort(leader);
  Page& p = pages_[page];
  p.state = kFollower;
  p.pos = into;
  Cohort& cohort = cohorts_[into];
  cohort.followers.push_back(page);
  std::push_heap(cohort.followers.begin(), cohort.followers.end(), std::greater<PageId>());
  ++cohort.live;
  ++followers_;
}

PageId SchedulingIndex::NextFollower(uint32_t c) {
  Cohort& cohort = cohorts_[c];
  if (cohort.followers.size() > 2 * cohort.live + 64) {
    // Mostly stale: keep the live entries (once each).
    std::vector<PageId> kept;
    kept.reserve(cohort.live);
    for (PageId f : cohort.followers) {
      const Page& fp = pages_[f];
      if (fp.state == kFollower && fp.pos == c) kept.push_back(f);
    }
    std::sort(kept.begin(), kept.end());
    kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
    cohort.followers = std::move(kept);  // sorted: a min-heap already
  }
  while (cohort.live > 0 && !cohort.followers.empty()) {
    std::pop_heap(cohort.followers.begin(), cohort.followers.end(), std::greater<PageId>());
    const PageId f = cohort.followers.back();
    cohort.followers.pop_back();
    Page& fp = pages_[f];
    if (fp.state != kFollower || fp.pos != c) continue;  // stale
    --cohort.live;
    --followers_;
    fp.state = kCandidate;
    return f;
  }
  return kNoPage;
}

PageId SchedulingIndex::HandOver(PageId leader, uint32_t c) {
  led_by_.erase(leader);
  const PageId next = NextFollower(c);
  if (next == kNoPage || cohorts_[c].live == 0) {
    cohorts_[c].leader = kNoPage;  // erased above
    FreeCohort(c);
  } else {
    cohorts_[c].leader = next;
    led_by_[next] = c;
  }
  return next;
}

void SchedulingIndex::HandOverInPool(PageId leader, uint32_t c, const CandidatePool::Entry& like) {
  const PageId next = HandOver(leader, c);
  if (next != kNoPage) candidates_.AddLike(next, like, pages_[next].host);
}

void SchedulingIndex::Unfollow(PageId page) {
  Page& p = pages_[page];
  const uint32_t c = p.pos;
  const CandidatePool::Entry like = candidates_.Find(cohorts_[c].leader);
  --cohorts_[c].live;
  --followers_;
  p.state = kCandidate;
  candidates_.AddLike(page, like, p.host);
}

void SchedulingIndex::EnqueueCohort(PageId leader) {
  const uint32_t c = LedCohort(leader);
  if (c == kNoCohort) return;
  const float iota = pages_[leader].iota_lb;
  for (PageId f : cohorts_[c].followers) {
    Page& fp = pages_[f];
    if (fp.state != kFollower || fp.pos != c) continue;
    fp.iota_lb = std::max(fp.iota_lb, iota);  // both lower bounds on one crossing
    Enqueue(f);                               // once: Enqueue changes its state
  }
  FreeCohort(c);
}

std::string SchedulingIndex::CheckCohorts() const {
  size_t live = 0;
  for (uint32_t c = 0; c < cohorts_.size(); ++c) {
    const Cohort& cohort = cohorts_[c];
    if (cohort.leader == kNoPage) continue;
    live += cohort.live;
    const Page& leader = pages_[cohort.leader];
    if (leader.state != kCandidate || LedCohort(cohort.leader) != c) {
      return "cohort " + std::to_string(c) + ": its leader " + std::to_string(cohort.leader) +
             " is not a candidate leading it (state " + std::to_string(leader.state) + ")";
    }
  }
  if (live != followers_) return "followers_ is not the cohorts' count";
  size_t found = 0;
  for (PageId id = 0; id < pages_.size(); ++id) {
    const Page& p = pages_[id];
    if (p.state != kFollower) continue;
    ++found;
    if (p.pos >= cohorts_.size() || cohorts_[p.pos].leader == kNoPage) {
      return "follower " + std::to_string(id) + " of no cohort";
    }
    const PageId leader = cohorts_[p.pos].leader;
    if (!(leader < id) || !Alike(pages_[leader], p)) {
      return "follower " + std::to_string(id) + " not alike its leader " + std::to_string(leader) +
             " or of a lower id";
    }
  }
  if (found != followers_) return "followers_ is not the pages' count";
  return "";
}

void SchedulingIndex::DropCohorts() {
  cohorts_.clear();
  free_cohorts_.clear();
  led_by_.clear();
  followers_ = 0;
}

}  // namespace shard
}  // namespace recrawl
