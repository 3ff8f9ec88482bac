// The operator's side of a shard: adding, updating, removing URLs, and one
// URL's full state.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "cluster/batch_result.h"
#include "cluster/url_id.h"
#include "shard/learning_record.h"
#include "shard/shard.h"
#include "shard/time_text.h"

namespace recrawl {
namespace shard {
namespace {

absl::Status CheckRate(const char* field, double v, double max) {
  if (v >= 0.0 && v <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": must be a rate in [0, ", max, "] per second, got ", v));
}

// The given fields of a change model, checked.
absl::Status CheckChangeModel(const ChangeModel& m, double max_rate) {
  if (m.has_change_rate()) {
    if (absl::Status s = CheckRate("prior.change_rate", m.change_rate(), max_rate); !s.ok()) {
      return s;
    }
  }
  if (m.has_recall() && !(m.recall() >= 0.0 && m.recall() <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("prior.recall: must be a probability in [0, 1], got ", m.recall()));
  }
  if (m.has_false_rate()) {
    return CheckRate("prior.false_rate", m.false_rate(), max_rate);
  }
  return absl::OkStatus();
}

// `base` with the given fields of `m`.
policy::PageParams Overlay(policy::PageParams base, const ChangeModel& m) {
  if (m.has_change_rate()) base.change_rate = m.change_rate();
  if (m.has_recall()) base.recall = m.recall();
  if (m.has_false_rate()) base.false_rate = m.false_rate();
  return base;
}

void SetChangeModel(const policy::PageParams& p, ChangeModel* m) {
  m->set_change_rate(p.change_rate);
  m->set_recall(p.recall);
  m->set_false_rate(p.false_rate);
}

}  // namespace

absl::StatusOr<UpsertUrlsResponse> Shard::UpsertUrls(const UpsertUrlsRequest& req, double now) {
  if (absl::Status s = CheckBatchSize("urls", req.urls_size()); !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  UpsertUrlsResponse response;
  BatchResult* result = response.mutable_result();
  // An existing URL's update reads its stored record, which does not yet
  // hold this batch's writes: a URL given twice is rejected the second time.
  absl::flat_hash_map<cluster::UrlId, int> seen;
  // The new URLs' records go into the batch here; their pages are made
  // while the batch is written.
  std::vector<NewPage> added;
  size_t added_path_bytes = 0;
  for (int i = 0; i < req.urls_size(); ++i) {
    const UrlSpec& spec = req.urls(i);
    absl::StatusOr<cluster::NormalizedUrl> url =
        cluster::NormalizeUrl(spec.url(), options_.url_limits);
    if (!url.ok()) {
      cluster::AddRejection(i, url.status(), result);
      continue;
    }
    const cluster::UrlId id = cluster::UrlIdOf(url->spec());
    auto [it, first] = seen.emplace(id, i);
    if (!first) {
      cluster::AddRejection(i,
                            absl::InvalidArgumentError(absl::StrCat(
                                "url: the same URL as item ", it->second, " of this request")),
                            result);
      continue;
    }
    if (absl::Status s = UpsertOne(spec, *std::move(url), id, &added, &added_path_bytes); !s.ok()) {
      cluster::AddRejection(i, s, result);
      continue;
    }
    result->set_applied(result->applied() + 1);
  }
  response.set_created(static_cast<int64_t>(added.size()));
  // In key order (ids are keys, url_store.h): the memtable's skip list
  // starts each insert from where the one before went, which for a sorted
  // batch of random ids is a short search instead of one from the top.
  std::sort(added.begin(), added.end(),
            [](const NewPage& a, const NewPage& b) { return a.id < b.id; });
  for (const NewPage& page : added) batch_.PutUrl(NewRecord(page));
  absl::Status written = CommitAlongside(req.sync(), added.size(), [this, &added] {
    for (const NewPage& page : added) {
      // UpsertOne kept the arena's room for them.
      [[maybe_unused]] const PageId made = AddPage(page);
      assert(made != kNoPage);
    }
  });
  if (!written.ok()) return written;
  return response;
}

absl::Status Shard::UpsertOne(const UrlSpec& spec, cluster::NormalizedUrl url, cluster::UrlId id,
                              std::vector<NewPage>* added, size_t* added_path_bytes) {
  // The URL decides its owner; a politeness group stays within it.
  if (absl::Status s = CheckOwner(url.host(), "url"); !s.ok()) return s;
  std::string host(url.host());
  if (!spec.politeness_host().empty()) {
    absl::StatusOr<std::string> given = cluster::NormalizeHost(spec.politeness_host());
    if (!given.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("politeness_", given.status().message()));
    }
    host = *std::move(given);
    if (OwnerOf(host) != static_cast<int32_t>(options_.shard_index)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "politeness_host: \"", host, "\" is routed to shard ", OwnerOf(host),
          ", the URL to shard ", options_.shard_index, " (by ", cluster::RoutingName(routing_),
          "): a URL's politeness host must be of the "
          "same site as the URL"));
    }
  }
  if (!(spec.importance() >= 0.0 && spec.importance() <= options_.max_importance)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "importance: must be in [0, ", options_.max_importance, "], got ", spec.importance()));
  }
  if (absl::Status s = CheckChangeModel(spec.prior(), options_.max_rate); !s.ok()) {
    return s;
  }
  const double importance = spec.importance() + 0.0;  // -0.0 is stored as 0
  PageId page = pages_.Find(id);

  if (page == kNoPage) {
    NewPage created;
    created.last_crawl = now_;
    if (spec.has_last_crawl_time()) {
      absl::StatusOr<double> t = ItemTime(spec.last_crawl_time(), "last_crawl_time");
      if (!t.ok()) return t.status();
      created.last_crawl = *t;
    }
    const size_t path_bytes = PageTable::PathEntryBytes(url.path_and_query());
    if (!pages_.HasPathRoom(*added_path_bytes + path_bytes)) {
      return absl::ResourceExhaustedError("url: the shard's URL text arena is full (4 GiB)");
    }
    *added_path_bytes += path_bytes;
    created.id = id;
    created.url = std::move(url);
    created.host = std::move(host);
    created.model = Overlay(Defaults(), spec.prior());
    created.model.importance = importance;
    added->push_back(std::move(created));
    return absl::OkStatus();
  }

  // An existing URL: its stored record has the prior to update, and the
  // URL its id stands for.
  absl::StatusOr<UrlRecord> stored = store_->GetUrl(id);
  if (!stored.ok()) {
    return absl::InternalError(
        absl::StrCat("url: in memory but its record cannot be read: ", stored.status().message()));
  }
  if (stored->url() != url.spec()) {
    return absl::AlreadyExistsError(
        absl::StrCat("url: its id collides with that of the stored URL \"",
                     stored->url().substr(0, 128), "\"; not applied"));
  }
  PageSlot& slot = pages_[page];
  const policy::PageParams prior = Overlay(Overlay(Defaults(), stored->prior()), spec.prior());
  // Read before the slot's model changes (it may stand for the state).
  LearningState learning = pages_.Learning(page);
  SetPrior(prior, &learning);
  // The prior only counts until the URL has been crawled; then the fit,
  // which weighs it against the crawls.
  policy::PageParams model = prior;
  if (learning.crawls > 0) {
    const LearnedModel fit = Fit(learning, 1.0, options_.learning);
    if (fit.ok && IndexableModel(fit.params, options_.max_rate)) {
      model = fit.params;
    }
  }
  model.importance = importance;
  const HostId host_id = hosts_.Intern(host);
  slot.SetModel(model);
  pages_.SetLearning(page, learning);
  index_.Upsert(page, IndexView(host_id, RankingModel(host_id, model, learning.crawls > 0)),
                host_id, LastCrawl(page));

  UrlRecord patch;
  patch.set_politeness_host(host);
  patch.set_importance(model.importance);
  SetChangeModel(prior, patch.mutable_prior());
  SetChangeModel(model, patch.mutable_estimate());
  batch_.PatchUrl(id, patch);
  return absl::OkStatus();
}

PageId Shard::AddPage(const NewPage& added) {
  const PageId page = pages_.Add(added.id);
  const absl::string_view spec = added.url.spec();
  const size_t path = spec.size() - added.url.path_and_query().size();
  if (!pages_.SetUrl(page, spec.substr(0, path), spec.substr(path))) {
    pages_.Remove(page);
    return kNoPage;
  }
  PageSlot& slot = pages_[page];
  slot.SetModel(added.model);
  const HostId host_id = hosts_.Intern(added.host);
  index_.Upsert(page, IndexView(host_id, RankingModel(host_id, added.model, /*learnt=*/false)),
                host_id, added.last_crawl);
  return page;
}

UrlRecord Shard::NewRecord(const NewPage& added) const {
  // About half of what the record would be with every field given.
  UrlRecord record;
  record.set_url(added.url.spec());
  record.set_politeness_host(added.host);
  record.set_importance(added.model.importance);
  SetChangeModel(added.model, record.mutable_prior());
  record.set_last_crawl_time(added.last_crawl);
  record.set_signal_seq(journal_.next_seq());
  return record;
}

absl::StatusOr<DeleteUrlsResponse> Shard::DeleteUrls(const DeleteUrlsRequest& req, double now) {
  if (absl::Status s = CheckBatchSize("urls", req.urls_size()); !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  DeleteUrlsResponse response;
  BatchResult* result = response.mutable_result();
  for (int i = 0; i < req.urls_size(); ++i) {
    absl::StatusOr<cluster::NormalizedUrl> url =
        cluster::NormalizeUrl(req.urls(i), options_.url_limits);
    if (!url.ok()) {
      cluster::AddRejection(i, url.status(), result);
      continue;
    }
    const cluster::UrlId id = cluster::UrlIdOf(url->spec());
    const PageId page = pages_.Find(id);
    absl::StatusOr<UrlRecord> stored =
        page == kNoPage ? absl::NotFoundError("") : store_->GetUrl(id);
    if (!stored.ok() || stored->url() != url->spec()) {
      cluster::AddRejection(i, absl::NotFoundError("url: not known"), result);
      continue;
    }
    RemovePage(page);
    result->set_applied(result->applied() + 1);
  }
  if (absl::Status s = Commit(req.sync()); !s.ok()) return s;
  return response;
}

absl::StatusOr<UrlState> Shard::GetUrlState(const GetUrlStateRequest& req, double now) {
  if (absl::Status s = Advance(now); !s.ok()) return s;
  absl::StatusOr<cluster::NormalizedUrl> url =
      cluster::NormalizeUrl(req.url(), options_.url_limits);
  if (!url.ok()) return url.status();
  const cluster::UrlId id = cluster::UrlIdOf(url->spec());
  const PageId page = pages_.Find(id);
  if (page == kNoPage) return absl::NotFoundError("url: not known");
  absl::StatusOr<UrlRecord> record = store_->GetUrl(id);
  if (!record.ok()) return record.status();
  if (record->url() != url->spec()) {
    return absl::NotFoundError("url: not known");
  }
  double t = now_;
  if (req.has_time()) {
    if (!std::isfinite(req.time()) || req.time() < 0.0) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: must be finite and >= 0, got ", TimeText(req.time())));
    }
    t = req.time();
  }
  const PageSlot& slot = pages_[page];
  const PageView indexed = Indexed(page);
  const policy::PageParams model{slot.importance, slot.change_rate, slot.recall, slot.false_rate};

  UrlState state;
  state.set_url(url->spec());
  state.set_politeness_host(std::string(hosts_.Name(indexed.host)));
  state.set_importance(slot.importance);
  *state.mutable_prior() = record->prior();
  SetChangeModel(model, state.mutable_estimate());
  state.set_observed_crawls(pages_.LearningCrawls(page));
  state.set_last_crawl_time(indexed.last_crawl);
  state.set_signals_since_crawl(slot.n_cis);
  if (slot.latest_signal >= 0.0f) {
    state.set_last_signal_time(LastSignalTime(slot, indexed.last_crawl));
  }
  state.set_time(t);
  absl::StatusOr<policy::PageModel> m = policy::PageModel::Create(model);
  if (m.ok()) {
    const double tau = std::max(t - indexed.last_crawl, 0.0);
    state.set_effective_elapsed(m->EffectiveElapsed(tau, slot.n_cis));
    state.set_fresh_probability(m->FreshProbability(tau, slot.n_cis));
  }
  state.set_crawl_value(index_.Value(page, t));
  SetChangeModel(indexed.params, state.mutable_ranked());
  state.set_host_allowed_from(hosts_.AllowedFrom(indexed.host));
  if (std::optional<policy::SourceTrustEstimate> trust = trust_.Estimate(indexed.host)) {
    HostSourceTrust* t = state.mutable_host_trust();
    t->set_crawls(static_cast<uint64_t>(trust->num_crawls));
    t->set_changed(static_cast<uint64_t>(trust->num_changed));
    for (int s = 0; s < kTrustSources; ++s) {
      SourceTrust* source = t->add_sources();
      source->set_source(TrustSourceAt(s));
      source->set_recall(trust->sources[s].recall);
      source->set_false_rate(trust->sources[s].false_rate);
      source->set_signals(trust_.Signals(indexed.host, s));
      source->set_trusted(trust_.Trusted(indexed.host, s));
    }
  }
  if (const LeaseTable::Lease* lease = leases_.OfPage(page); lease != nullptr && lease->active) {
    LeaseState* l = state.mutable_lease();
    l->set_lease_id(lease->id);
    l->set_holder(lease->holder);
    l->set_deadline(lease->deadline);
  }
  // The window keeps τ_elap per crawl; fetch times follow back from the
  // last crawl.
  const OutcomeWindow& w = record->outcomes();
  const int n = WindowSize(w);
  double fetch = record->last_crawl_time();
  std::vector<OutcomeEntry> entries(n);
  for (int k = n - 1; k >= 0; --k) {
    OutcomeEntry& e = entries[k];
    e.set_fetch_time(fetch);
    e.set_elapsed(w.elapsed(k));
    e.set_signals(w.signals(k));
    e.set_outcome(w.changed(k) ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
    fetch -= w.elapsed(k);
  }
  for (OutcomeEntry& e : entries) *state.add_recent_outcomes() = std::move(e);
  if (record->has_content_digest()) {
    state.set_content_digest(record->content_digest());
  }
  state.set_consecutive_failures(slot.failures);
  double until = 0.0;
  if (leases_.Held(page, &until)) state.set_retry_after(until);
  return state;
}

}  // namespace shard
}  // namespace recrawl
