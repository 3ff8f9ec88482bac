#include "sim/value_scheduler.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "shard/index/brute_force_index.h"
#include "shard/index/scheduling_index.h"

namespace recrawl {
namespace sim {
namespace {

// What the index is given for `page` under `policy`: the page as the policy
// models it, and whether that model reads signals.
absl::StatusOr<std::pair<policy::PageParams, bool>> IndexBelief(const policy::PageParams& page,
                                                                const policy::CrawlPolicy& policy) {
  absl::StatusOr<policy::PageModel> model = policy::PageModel::Create(page);
  if (!model.ok()) return model.status();
  const policy::PageModel belief = policy.Belief(*model);
  policy::PageParams params;
  params.importance = belief.importance();
  params.change_rate = belief.change_rate();
  params.recall = belief.recall();
  params.false_rate = belief.false_rate();
  return std::make_pair(params, belief.signals_informative());
}

}  // namespace

int CandidatesForPages(size_t num_pages) {
  return static_cast<int>(std::clamp(std::sqrt(static_cast<double>(num_pages)), 8.0, 1e6));
}

std::vector<policy::PageParams> NormalisedImportance(std::vector<policy::PageParams> pages) {
  double total = 0;
  for (const auto& p : pages) total += p.importance;
  for (auto& p : pages) p.importance = total > 0 ? p.importance / total : 0.0;
  return pages;
}

absl::StatusOr<std::unique_ptr<ValueScheduler>> ValueScheduler::Create(
    const std::vector<policy::PageParams>& pages, const std::vector<policy::CrawlPolicy>& per_page,
    ValueSchedulerOptions options) {
  if (pages.size() != per_page.size()) {
    return absl::InvalidArgumentError("one policy per page is needed");
  }
  const int terms = per_page.empty() ? 0 : per_page[0].MaxTerms();
  for (const policy::CrawlPolicy& p : per_page) {
    if (p.MaxTerms() != terms) {
      return absl::InvalidArgumentError("per-page policies must use the same number of NCIS terms");
    }
  }
  // The belief carries the policy (GREEDY drops the signals, GREEDY-CIS the
  // false positives), so the index values every page by the NCIS formula.
  const policy::CrawlPolicy valuation =
      terms > 0 ? policy::CrawlPolicy::Approx(terms) : policy::CrawlPolicy::GreedyNcis();
  std::unique_ptr<shard::CrawlIndex> index;
  if (options.argmax == ValueSchedulerOptions::Argmax::kBruteForce) {
    index = std::make_unique<shard::BruteForceIndex>(valuation);
  } else {
    shard::SchedulingIndex::Options index_options;
    if (options.target_candidates > 0) {
      index_options.target_candidates = options.target_candidates;
      index_options.max_candidates = 4 * options.target_candidates;
    }
    auto fast = std::make_unique<shard::SchedulingIndex>(valuation, index_options);
    fast->Reserve(pages.size());
    index = std::move(fast);
  }
  std::vector<char> informative(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    absl::StatusOr<std::pair<policy::PageParams, bool>> belief = IndexBelief(pages[i], per_page[i]);
    if (!belief.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("page ", i, ": ", belief.status().message()));
    }
    informative[i] = belief->second;
    // Every page is crawled at t = 0 and has its own host (no politeness in
    // the paper's experiments).
    index->Upsert(static_cast<shard::PageId>(i), belief->first, static_cast<shard::HostId>(i), 0.0);
  }
  return std::unique_ptr<ValueScheduler>(
      new ValueScheduler(std::move(index), per_page, std::move(informative), options));
}

ValueScheduler::ValueScheduler(std::unique_ptr<shard::CrawlIndex> index,
                               std::vector<policy::CrawlPolicy> per_page,
                               std::vector<char> informative, ValueSchedulerOptions options)
    : index_(std::move(index)),
      per_page_(std::move(per_page)),
      informative_(std::move(informative)),
      last_crawl_(informative_.size(), 0.0),
      options_(options) {}

double ValueScheduler::Value(int page, double t) const {
  return index_->Value(static_cast<shard::PageId>(page), t);
}

absl::Status ValueScheduler::UpdateModel(int page, const policy::PageParams& params) {
  absl::StatusOr<std::pair<policy::PageParams, bool>> belief = IndexBelief(params, per_page_[page]);
  if (!belief.ok()) return belief.status();
  informative_[page] = belief->second;
  // An existing page keeps its crawl state (last crawl, n_cis) in the index;
  // only the model it is valued by changes.
  index_->Upsert(static_cast<shard::PageId>(page), belief->first, static_cast<shard::HostId>(page),
                 last_crawl_[page]);
  return absl::OkStatus();
}

void ValueScheduler::OnSignal(int page, double t) {
  if (!informative_[page]) return;  // e.g. GREEDY's belief: V ignores it
  if (t - last_crawl_[page] < options_.discard_window) return;  // App. C
  index_->RecordSignal(static_cast<shard::PageId>(page), t);
}

int ValueScheduler::Next(double t) {
  const std::vector<shard::PickedPage> pick = index_->PickTop(t, 1);
  if (pick.empty()) return kIdle;
  last_value_ = pick[0].value;
  return static_cast<int>(pick[0].page);
}

void ValueScheduler::OnCrawl(int page, double t, bool) {
  last_crawl_[page] = t;
  index_->RecordCrawl(static_cast<shard::PageId>(page), t);
}

}  // namespace sim
}  // namespace recrawl
