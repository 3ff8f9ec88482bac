// The fetchers' side of a shard: what to crawl next (peek, lease) and what
// a crawl found (reports), which restarts τ and n_cis and teaches the
// estimators (main paper App. E; learning.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "cluster/batch_result.h"
#include "cluster/url_id.h"
#include "shard/learning_record.h"
#include "shard/shard.h"
#include "shard/store/url_record_merge.h"
#include "shard/time_text.h"

namespace recrawl {
namespace shard {
namespace {

// The fingerprint kept in memory for a content digest.
uint32_t DigestFingerprint(const std::string& digest) {
  return static_cast<uint32_t>(cluster::Fingerprint64(digest));
}

void ClearLease(UrlRecord* patch) {
  LeaseRecord* lease = patch->mutable_lease();
  lease->set_id(0);
  lease->set_holder("");
  lease->set_deadline(0.0);
}

}  // namespace

absl::StatusOr<PeekTopResponse> Shard::PeekTop(const PeekTopRequest& req, double now) {
  if (absl::Status s = Advance(now); !s.ok()) return s;
  double t = now_;
  if (req.has_time()) {
    if (!std::isfinite(req.time()) || req.time() < 0.0 ||
        req.time() > now_ + options_.max_lookahead) {
      return absl::InvalidArgumentError(absl::StrCat(
          "time: must be finite, >= 0 and at most ", TimeText(options_.max_lookahead),
          " s after the shard's clock (", TimeText(now_), "), got ", TimeText(req.time())));
    }
    t = req.time();
  }
  pick_time_ = std::max(pick_time_, t);
  const int k = static_cast<int>(
      std::min<uint32_t>(req.k(), static_cast<uint32_t>(options_.max_batch_items)));
  PeekTopResponse response;
  response.set_time(pick_time_);
  response.set_peek_id(peeks_.Begin());
  for (const PickedPage& p : index_.PickTop(pick_time_, k)) {
    Candidate* c = response.add_candidates();
    if (!req.values_only()) pages_.AppendUrl(p.page, c->mutable_url());
    c->set_value(p.value);
    peeks_.Add({p.page, pages_[p.page].id, LastCrawl(p.page), p.value});
  }
  return response;
}

absl::StatusOr<LeaseResponse> Shard::Lease(const LeaseRequest& req, double now) {
  if (absl::Status s = CheckBatchSize("slot_times", req.slot_times_size()); !s.ok()) {
    return s;
  }
  if (req.holder().size() > options_.max_holder_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "holder: ", req.holder().size(), " bytes, more than ", options_.max_holder_bytes));
  }
  absl::StatusOr<double> lease_duration = LeaseDuration(req.lease_duration());
  if (!lease_duration.ok()) return lease_duration.status();
  const double duration = *lease_duration;
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  if (req.request_id() != 0 && lease_requests_.Released(req.request_id())) {
    return absl::AbortedError(
        absl::StrCat("request_id: ", req.request_id(),
                     " was released before this request arrived; nothing leased"));
  }
  for (int j = 0; j < req.slot_times_size(); ++j) {
    const double s = req.slot_times(j);
    if (!std::isfinite(s) || s < 0.0 || s > now_ + options_.max_lookahead ||
        (j > 0 && s < req.slot_times(j - 1))) {
      return absl::InvalidArgumentError(
          absl::StrCat("slot_times[", j,
                       "]: must be finite, >= 0, non-decreasing and at "
                       "most ",
                       TimeText(options_.max_lookahead), " s after the shard's clock (",
                       TimeText(now_), "), got ", TimeText(s)));
    }
  }
  LeaseResponse response;
  // The grants go into this request's journal entry (journal_writer.h): one
  // sequential record for the batch instead of a patch per URL.
  slot_times_.clear();
  for (double slot_time : req.slot_times()) {
    pick_time_ = std::max(pick_time_, slot_time);
    slot_times_.push_back(pick_time_);
  }
  // Algorithm 1 slot by slot, one PickSlots call for each run of slots
  // between probes: each slot's pick comes out of the index leased, and a
  // polite host of a pick is held back for its minimum delay from the slot
  // time (the fetch will hit it then, as a crawl would; the index learns of
  // the crawl itself only from the report). A probe that is due
  // (probe_queue.h) takes its slot first, unless it is moot
  // (ProbeQueue::TakeDue); the slots before it are picked before it is
  // taken, so picks and probes are leased in slot order. The named peek's
  // picks (peek_log.h) fill the first slots of each run, best first, each
  // if its page is still the URL peeked, not crawled since the peek, and
  // leasable at the slot's time (LeaseAt: not leased, the host allowed).
  peeks_.Take(req.peek_id(), &peek_picks_);
  size_t next_peeked = 0;
  size_t run_start = 0;
  auto grant_pick = [&](PageId page, double value, double time, size_t slot) {
    probes_.ObservePick(value);
    last_pick_value_ = value;
    GrantLease(page, value, time, slot, req, duration, &response);
  };
  auto pick_run = [&](size_t end) {
    while (run_start < end && next_peeked < peek_picks_.size()) {
      const PeekLog::Pick& peeked = peek_picks_[next_peeked++];
      const PageSlot& slot = pages_[peeked.page];
      const double t = slot_times_[run_start];
      if (!slot.in_use || slot.id != peeked.url || LastCrawl(peeked.page) != peeked.last_crawl ||
          !index_.LeaseAt(peeked.page, t)) {
        continue;
      }
      grant_pick(peeked.page, peeked.value, t, run_start);
      ++peeked_leases_total_;
      ++run_start;
    }
    if (run_start < end) {
      run_times_.assign(slot_times_.begin() + run_start, slot_times_.begin() + end);
      for (const SlotPick& pick : index_.PickSlots(run_times_)) {
        grant_pick(pick.page, pick.value, pick.time, run_start + pick.slot);
      }
    }
    run_start = end;
  };
  for (size_t j = 0; j < slot_times_.size(); ++j) {
    const double t = slot_times_[j];
    if (!probes_.Due(t)) continue;
    pick_run(j);
    PageId page = 0;
    if (probes_.TakeDue(t, &index_, &page)) {
      GrantLease(page, index_.Value(page, t), t, j, req, duration, &response);
      run_start = j + 1;
    }
  }
  pick_run(slot_times_.size());
  leases_total_ += response.leases_size();
  pick_rate_.Add(now_, response.leases_size());
  FoldJournal();  // writes the entry
  if (absl::Status s = Commit(/*sync=*/false); !s.ok()) return s;
  return response;
}

void Shard::GrantLease(PageId page, double value, double time, size_t slot, const LeaseRequest& req,
                       double duration, LeaseResponse* response) {
  const uint64_t id = NextLeaseId();
  const double deadline = time + duration;
  leases_.Grant(id, page, req.holder(), deadline);
  if (req.request_id() != 0) lease_requests_.Record(req.request_id(), id);
  journal_.AddLease({pages_[page].id, id, deadline, req.holder()});
  MarkUnfolded(page, journal_.next_seq());

  LeasedUrl* out = response->add_leases();
  pages_.AppendUrl(page, out->mutable_url());
  out->set_lease_id(id);
  // The slot asked for, not the later time it was valued at when the
  // shard's pick time had passed it: the coordinator dealt distinct slots
  // and paces by them (two fetchers' calls can reach a shard out of order).
  out->set_slot_time(req.slot_times(static_cast<int>(slot)));
  out->set_deadline(deadline);
  out->set_value(value);
}

absl::StatusOr<ReleaseLeasesResponse> Shard::ReleaseLeases(const ReleaseLeasesRequest& req,
                                                           double now) {
  if (absl::Status s = CheckBatchSize("lease_ids", req.lease_ids_size() + req.request_ids_size());
      !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  ReleaseLeasesResponse response;
  uint32_t released = 0;
  for (uint64_t id : req.lease_ids()) released += ReleaseLease(id);
  for (uint64_t request : req.request_ids()) {
    if (request == 0) continue;
    for (uint64_t id : lease_requests_.Release(request)) {
      released += ReleaseLease(id);
    }
  }
  response.set_released(released);
  response.mutable_result()->set_applied(
      static_cast<uint32_t>(req.lease_ids_size() + req.request_ids_size()));
  leases_released_total_ += released;
  FoldJournal();  // writes the entry
  if (absl::Status s = Commit(req.sync()); !s.ok()) return s;
  return response;
}

absl::StatusOr<RenewLeasesResponse> Shard::RenewLeases(const RenewLeasesRequest& req, double now) {
  if (absl::Status s = CheckBatchSize("lease_ids", req.lease_ids_size()); !s.ok()) {
    return s;
  }
  absl::StatusOr<double> duration = LeaseDuration(req.lease_duration());
  if (!duration.ok()) return duration.status();
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  RenewLeasesResponse response;
  BatchResult* result = response.mutable_result();
  for (int i = 0; i < req.lease_ids_size(); ++i) {
    const uint64_t id = req.lease_ids(i);
    const LeaseTable::Lease* lease = leases_.Find(id);
    if (lease == nullptr || !lease->active) {
      cluster::AddRejection(
          i,
          absl::NotFoundError(absl::StrCat("lease_ids[", i, "]: lease ", id,
                                           " is not active (never granted, expired, reported or "
                                           "released)")),
          result);
      response.add_deadlines(0.0);
      continue;
    }
    const PageId page = lease->page;
    const std::string holder = lease->holder;
    const double deadline = std::max(lease->deadline, now_ + *duration);
    leases_.Grant(id, page, holder, deadline);
    // A later grant of the same lease replaces the earlier at replay.
    journal_.AddLease({pages_[page].id, id, deadline, holder});
    MarkUnfolded(page, journal_.next_seq());
    response.add_deadlines(deadline);
    result->set_applied(result->applied() + 1);
  }
  FoldJournal();  // writes the entry
  if (absl::Status s = Commit(req.sync()); !s.ok()) return s;
  return response;
}

bool Shard::ReleaseLease(uint64_t id) {
  const LeaseTable::Lease* lease = leases_.Find(id);
  if (lease == nullptr || !lease->active) return false;
  const PageId page = lease->page;
  // The grant may be in the journal after the record: end it there too.
  journal_.AddLeaseEnd({pages_[page].id, id});
  leases_.Release(page);
  index_.ReleaseLease(page);
  UrlRecord& patch = patch_;
  patch.Clear();
  ClearLease(&patch);
  batch_.PatchUrl(pages_[page].id, patch);
  return true;
}

absl::StatusOr<ReportCrawlsResponse> Shard::ReportCrawls(const ReportCrawlsRequest& req,
                                                         double now) {
  if (absl::Status s = CheckBatchSize("reports", req.reports_size()); !s.ok()) {
    return s;
  }
  if (absl::Status s = BeginWrite(now); !s.ok()) return s;
  ReportCrawlsResponse response;
  BatchResult* result = response.mutable_result();
  for (int i = 0; i < req.reports_size(); ++i) {
    if (absl::Status s = ReportOne(req.reports(i), &response); !s.ok()) {
      cluster::AddRejection(i, s, result);
      continue;
    }
    result->set_applied(result->applied() + 1);
  }
  reports_total_ += result->applied();
  report_rate_.Add(now_, result->applied());
  FoldJournal();  // crawled URLs free journal entries
  if (absl::Status s = Commit(req.sync()); !s.ok()) return s;
  return response;
}

absl::Status Shard::ReportOne(const CrawlReport& report, ReportCrawlsResponse* response) {
  PageId page = kNoPage;
  switch (report.target_case()) {
    case CrawlReport::kLeaseId: {
      const LeaseTable::Lease* lease = leases_.Find(report.lease_id());
      if (lease == nullptr) {
        return absl::NotFoundError(
            absl::StrCat("lease_id: no lease ", report.lease_id(),
                         " (never granted, already reported, or its URL was leased again "
                         "or removed)"));
      }
      page = lease->page;
      break;
    }
    case CrawlReport::kUrl: {
      absl::StatusOr<cluster::NormalizedUrl> url =
          cluster::NormalizeUrl(report.url(), options_.url_limits);
      if (!url.ok()) return url.status();
      page = pages_.Find(cluster::UrlIdOf(url->spec()));
      if (page == kNoPage) return absl::NotFoundError("url: not known");
      break;
    }
    default:
      return absl::InvalidArgumentError("target: give a lease_id or a url");
  }
  absl::StatusOr<double> fetch_time = ItemTime(report.fetch_time(), "fetch_time");
  if (!fetch_time.ok()) return fetch_time.status();
  const double last_crawl = LastCrawl(page);
  if (*fetch_time < last_crawl) {
    return absl::FailedPreconditionError(absl::StrCat("fetch_time: ", TimeText(*fetch_time),
                                                      " is before the URL's last crawl at ",
                                                      TimeText(last_crawl)));
  }
  if (report.content_digest().size() > options_.max_digest_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("content_digest: ", report.content_digest().size(), " bytes, more than ",
                     options_.max_digest_bytes));
  }
  const CrawlOutcome outcome = report.outcome();
  switch (outcome) {
    case CRAWL_OUTCOME_UNSPECIFIED:
      if (report.content_digest().empty()) {
        return absl::InvalidArgumentError("outcome: UNSPECIFIED needs a content_digest to compare");
      }
      [[fallthrough]];
    case CRAWL_OUTCOME_CHANGED:
    case CRAWL_OUTCOME_UNCHANGED:
      RecordSuccess(page, *fetch_time, report.content_digest(), outcome, response);
      return absl::OkStatus();
    case CRAWL_OUTCOME_FAILED:
      RecordFailure(page, *fetch_time);
      response->set_failed(response->failed() + 1);
      return absl::OkStatus();
    case CRAWL_OUTCOME_GONE:
      RemovePage(page);
      response->set_gone(response->gone() + 1);
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat("outcome: unknown value ", outcome));
  }
}

// A fetch that saw the page: τ and n_cis restart, the outcome (decided by
// the digests where there are two) feeds the page's learning, and the index
// hears of the new estimate when it moved meaningfully.
void Shard::RecordSuccess(PageId page, double fetch_time, const std::string& digest,
                          CrawlOutcome outcome, ReportCrawlsResponse* response) {
  PageSlot& slot = pages_[page];
  // Read before the crawl's digest or learning may give the page its entry.
  IntervalSignals split;
  const bool split_known = pages_.SourceSplit(page, slot.n_cis, &split);
  // The page's model learns from the signals it is ranked by. Once its
  // host's trust leaves a source out, crawls follow the trusted sources'
  // signals alone; read against every signal, their outcomes would credit
  // the other sources with the changes the trusted ones announced, and the
  // fitted change rate would run high (docs/results.md, "Learning each
  // page's change rate as well").
  const PageView indexed = Indexed(page);
  const int64_t learnt_signals = split_known && trust_.TrustedModel(indexed.host)
                                     ? TrustedSignals(indexed.host, split)
                                     : slot.n_cis;
  bool decided = outcome != CRAWL_OUTCOME_UNSPECIFIED;
  bool changed = outcome == CRAWL_OUTCOME_CHANGED;
  if (!digest.empty()) {
    const uint32_t fingerprint = DigestFingerprint(digest);
    if (uint32_t stored; pages_.Digest(page, &stored)) {
      decided = true;
      changed = fingerprint != stored;
    }
    pages_.SetDigest(page, fingerprint);
  }
  const double tau = fetch_time - indexed.last_crawl;
  const uint16_t n_cis = slot.n_cis;

  UrlRecord& patch = patch_;
  patch.Clear();
  LearningState learning;
  bool learnt = false;  // the outcome is in `learning`
  if (decided) {
    learning = pages_.Learning(page);
    const bool was_learning = learning.crawls > 0;
    if (LearnFromCrawl(tau, learnt_signals, changed, t_delay_, &learning)) {
      learnt = true;
      if (options_.pool_host_priors &&
          host_priors_.Learn(indexed.host, page, tau, learnt_signals, changed, t_delay_,
                             [this](PageId other) { return pages_.Learning(other); })) {
        WriteHost(indexed.host);  // a refit
      }
      pages_.SetLearning(page, learning);
      if (!was_learning) ++urls_learning_;
      ++observed_crawls_sum_;
      AddOutcome(static_cast<float>(tau), learnt_signals, changed, patch.mutable_outcomes());
      LearningToRecord(learning, patch.mutable_learning());
      patch.set_observed_crawls(learning.crawls);
    } else {
      ++rejected_fits_;  // an outcome the model cannot hold
    }
    if (changed) {
      response->set_changed(response->changed() + 1);
    } else {
      response->set_unchanged(response->unchanged() + 1);
    }
  } else {
    response->set_undecided(response->undecided() + 1);
  }

  const bool had_lease = leases_.OfPage(page) != nullptr;
  EndLeaseAndHold(page);
  index_.RecordCrawl(page, fetch_time);
  HostTable::Host& host = hosts_.Politeness(indexed.host);
  host.last_crawl = std::max(host.last_crawl, fetch_time);
  slot.n_cis = 0;
  pages_.RestartSourceSignals(page);
  slot.signal_filter = 0;
  slot.latest_signal = -1.0f;
  slot.unfolded = false;
  const bool had_failures = slot.failures > 0;
  slot.failures = 0;

  if (decided && learning.crawls > 0) {
    const std::optional<LearnedModel> pooled =
        options_.pool_host_priors ? host_priors_.FitPage(indexed.host, slot.importance, learning)
                                  : std::nullopt;
    const LearnedModel fit =
        pooled.has_value() ? *pooled : Fit(learning, slot.importance, options_.learning);
    const policy::PageParams current{slot.importance, slot.change_rate, slot.recall,
                                     slot.false_rate};
    if (!fit.ok || !IndexableModel(fit.params, options_.max_rate)) {
      ++rejected_fits_;
    } else {
      const bool rerank =
          RerankAfterCrawl(learning, n_cis, current, fit.params, options_.push_threshold);
      if (rerank) {
        slot.change_rate = static_cast<float>(fit.params.change_rate);
        slot.recall = static_cast<float>(fit.params.recall);
        slot.false_rate = static_cast<float>(fit.params.false_rate);
        index_.Upsert(page, IndexView(indexed.host, fit.params), indexed.host, fetch_time);
        ChangeModel* estimate = patch.mutable_estimate();
        estimate->set_change_rate(fit.params.change_rate);
        estimate->set_recall(fit.params.recall);
        estimate->set_false_rate(fit.params.false_rate);
      }
      if (learnt) {
        probes_.AfterCrawl(page, fetch_time, tau, changed, learning, rerank ? fit.params : current);
        if (split_known) LearnTrust(indexed.host, fit, tau, split, changed);
      }
    }
  }

  patch.set_last_crawl_time(fetch_time);
  SignalStatePatch(slot, fetch_time, &patch);  // none since the crawl
  if (!digest.empty()) patch.set_content_digest(digest);
  if (had_failures) {
    patch.set_consecutive_failures(0);
    patch.set_retry_after(0.0);
  }
  if (had_lease) ClearLease(&patch);
  batch_.PatchUrl(slot.id, patch);
}

void Shard::LearnTrust(HostId host, const LearnedModel& fit, double tau,
                       const IntervalSignals& signals, bool changed) {
  if (!trust_.Learn(host, fit.estimate.change_rate, tau, signals, changed).ok()) {
    ++rejected_trust_;
    return;
  }
  const bool rechosen =
      trust_.ShouldRefit(host) && trust_.Refit(host, options_.trusted_source_share);
  if (rechosen || trust_.ShouldPersist(host)) WriteHost(host);
}

// A fetch that failed says nothing about change: τ and n_cis go on, and the
// URL is held back for an exponentially growing time.
void Shard::RecordFailure(PageId page, double fetch_time) {
  PageSlot& slot = pages_[page];
  if (slot.failures < 0xff) ++slot.failures;
  const double backoff =
      std::min(options_.failure_backoff * std::ldexp(1.0, std::min<int>(slot.failures - 1, 60)),
               options_.max_failure_backoff);
  const double until = fetch_time + backoff;
  const LeaseTable::Lease* lease = leases_.OfPage(page);
  const bool had_lease = lease != nullptr;
  if (had_lease) {
    // The grant may be in the journal after the record: end it there too.
    journal_.AddLeaseEnd({slot.id, lease->id});
  }
  // Whether the index holds the page back (an active lease or a hold).
  const bool held_back = EndLeaseAndHold(page);
  UrlRecord& patch = patch_;
  patch.Clear();
  if (until > now_) {
    leases_.Hold(page, until);
    index_.Lease(page);  // a no-op if it was held back already
  } else if (held_back) {
    index_.ReleaseLease(page);
  }
  patch.set_consecutive_failures(slot.failures);
  patch.set_retry_after(until);
  if (had_lease) ClearLease(&patch);
  batch_.PatchUrl(slot.id, patch);
}

}  // namespace shard
}  // namespace recrawl
