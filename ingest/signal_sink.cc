#include "ingest/signal_sink.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

namespace recrawl {
namespace ingest {
namespace {

// A signal's identity within a group, without its time (PingClient stamps
// signals that have none).
std::string IdentityOf(const Signal& s) {
  return absl::StrCat(static_cast<int>(s.source()), " ", s.url());
}

}  // namespace

PingClientSink::PingClientSink(std::vector<std::unique_ptr<client::PingClient>> clients,
                               ClientRenewal renewal)
    : renewal_(std::move(renewal)), clients_(std::move(clients)) {
  for (size_t lane = 0; lane < clients_.size(); ++lane) {
    lanes_.emplace_back([this, lane] { Run(lane); });
  }
}

PingClientSink::~PingClientSink() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& lane : lanes_) lane.join();
}

absl::StatusOr<DeliveryReport> PingClientSink::Deliver(std::vector<Signal> signals) {
  if (signals.empty()) return DeliveryReport{};
  Request request;
  request.signals = std::move(signals);
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the gateway is stopping");
  queue_.push_back(&request);
  mu_.Await(absl::Condition(&request.done));
  return std::move(request.result);
}

void PingClientSink::Run(size_t lane) {
  absl::Time made = absl::Now();
  bool delivered = true;
  while (true) {
    std::vector<Request*> group;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](PingClientSink* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, nothing left
      group.assign(queue_.begin(), queue_.end());
      queue_.clear();
    }
    if (renewal_.create && (!delivered || absl::Now() - made >= renewal_.period)) {
      absl::StatusOr<std::unique_ptr<client::PingClient>> fresh = renewal_.create();
      if (fresh.ok()) clients_[lane] = *std::move(fresh);
      made = absl::Now();
    }
    delivered = Commit(clients_[lane].get(), group);
    absl::MutexLock lock(&mu_);
    for (Request* r : group) r->done = true;
  }
}

bool PingClientSink::Commit(client::PingClient* client, const std::vector<Request*>& group) {
  absl::Status status;
  for (Request* r : group) {
    for (const Signal& s : r->signals) {
      if (status.ok()) status = client->Add(s);
    }
  }
  if (status.ok()) status = client->Flush();
  std::vector<DeliveryReport> reports(group.size());
  // Rejections and unknown URLs are this group's (the client's only user
  // is this lane); give each back to the request that sent it: the first
  // request with that signal not yet given one. Most groups have none, and
  // then no index is built.
  bool undelivered = false;
  std::vector<client::RejectedSignal> rejected = client->TakeRejected();
  std::vector<Signal> unknown = client->TakeUnknown();
  if (!rejected.empty() || !unknown.empty()) {
    absl::flat_hash_map<std::string, absl::InlinedVector<size_t, 1>> senders;
    for (size_t i = 0; i < group.size(); ++i) {
      for (const Signal& s : group[i]->signals) senders[IdentityOf(s)].push_back(i);
    }
    auto report_for = [&](const Signal& s) -> DeliveryReport* {
      auto it = senders.find(IdentityOf(s));
      if (it == senders.end() || it->second.empty()) return nullptr;
      const size_t i = it->second.front();
      it->second.erase(it->second.begin());
      return &reports[i];
    };
    for (const client::RejectedSignal& r : rejected) {
      if (absl::IsUnavailable(r.status) || absl::IsDeadlineExceeded(r.status)) {
        undelivered = true;
      }
      if (DeliveryReport* report = report_for(r.signal); report != nullptr) {
        ++report->rejected;
        if (report->error.ok()) report->error = r.status;
      }
    }
    for (const Signal& s : unknown) {
      if (DeliveryReport* report = report_for(s); report != nullptr) ++report->unknown;
    }
  }
  for (size_t i = 0; i < group.size(); ++i) {
    if (!status.ok()) {
      group[i]->result = status;
      continue;
    }
    DeliveryReport& report = reports[i];
    report.accepted = group[i]->signals.size() - report.unknown - report.rejected;
    group[i]->result = report;
  }
  return status.ok() && !undelivered;
}

}  // namespace ingest
}  // namespace recrawl
