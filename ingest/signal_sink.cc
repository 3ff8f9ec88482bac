#include "ingest/signal_sink.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
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

PingClientSink::PingClientSink(std::unique_ptr<client::PingClient> client)
    : client_(std::move(client)), thread_([this] { Run(); }) {}

PingClientSink::~PingClientSink() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
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

void PingClientSink::Run() {
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
    Commit(group);
    absl::MutexLock lock(&mu_);
    for (Request* r : group) r->done = true;
  }
}

void PingClientSink::Commit(const std::vector<Request*>& group) {
  // The requests that sent each signal, in order: a rejection or unknown
  // URL is given to the first one not yet given one.
  absl::flat_hash_map<std::string, std::deque<Request*>> owners;
  std::vector<DeliveryReport> reports(group.size());
  absl::flat_hash_map<Request*, DeliveryReport*> report_of;
  absl::Status status;
  for (size_t i = 0; i < group.size(); ++i) {
    report_of[group[i]] = &reports[i];
    for (const Signal& s : group[i]->signals) owners[IdentityOf(s)].push_back(group[i]);
  }
  for (Request* r : group) {
    for (const Signal& s : r->signals) {
      if (status.ok()) status = client_->Add(s);
    }
  }
  if (status.ok()) status = client_->Flush();
  // Rejections and unknown URLs are this group's (the client's only user
  // is this thread); give each back to the request that sent it.
  auto report_for = [&](const Signal& s) -> DeliveryReport* {
    auto it = owners.find(IdentityOf(s));
    if (it == owners.end() || it->second.empty()) return nullptr;
    Request* r = it->second.front();
    it->second.pop_front();
    return report_of[r];
  };
  for (const client::RejectedSignal& r : client_->TakeRejected()) {
    if (DeliveryReport* report = report_for(r.signal); report != nullptr) {
      ++report->rejected;
      if (report->error.ok()) report->error = r.status;
    }
  }
  for (const Signal& s : client_->TakeUnknown()) {
    if (DeliveryReport* report = report_for(s); report != nullptr) ++report->unknown;
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
}

}  // namespace ingest
}  // namespace recrawl
