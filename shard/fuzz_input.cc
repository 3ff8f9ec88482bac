#include "shard/fuzz_input.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace recrawl {
namespace shard {

std::string FuzzInput::Next(int kinds, const PayloadFn& payload) {
  if (++inputs_ % 5 == 0) return RandomBytes();
  std::string input;
  for (int ops = 1 + Int(6); ops > 0; --ops) {
    const uint8_t kind = static_cast<uint8_t>(Int(kinds));
    AppendOp(kind, payload(kind, *this), &input);
  }
  return input;
}

std::string FuzzInput::RandomBytes() {
  std::string s(Int(300), '\0');
  for (char& c : s) c = static_cast<char>(Int(256));
  return s;
}

void FuzzInput::AppendOp(uint8_t kind, std::string payload, std::string* input) {
  if (Int(4) == 0) Mutate(&payload);
  input->push_back(static_cast<char>(kind));
  input->push_back(static_cast<char>(Int(256)));
  input->push_back(static_cast<char>(payload.size() & 0xff));
  input->push_back(static_cast<char>(payload.size() >> 8));
  *input += payload;
}

double FuzzInput::Value() {
  static const double kSpecial[] = {0.0,
                                    -0.0,
                                    1.0,
                                    -1.0,
                                    0.5,
                                    1e-300,
                                    1e300,
                                    -1e300,
                                    1e12,
                                    1e6,
                                    2.0,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    1.7e9,
                                    1.7e9 + 1e6};
  if (Int(2) == 0) return kSpecial[Int(16)];
  return std::uniform_real_distribution<double>(-10, 10)(rng_) * std::pow(10.0, Int(12) - 6);
}

double FuzzInput::Time() {
  if (Int(3) == 0) return Value();
  return 1.7e9 + std::uniform_real_distribution<double>(-1e5, 1e4)(rng_);
}

std::string FuzzInput::Url() {
  static const char* kHosts[] = {"a.example", "B.example", "c.example:8080", "d.example"};
  switch (Int(12)) {
    case 0:
      return "";
    case 1:
      return "ftp://a.example/";
    case 2:
      return "https://a.example/" + std::string(3000, 'x');
    case 3:
      return "https://user:pw@a.example/";
    case 4:
      return "http://exa mple/";
    default:
      return absl::StrCat(Int(2) ? "https://" : "http://", kHosts[Int(4)], "/p", Int(20),
                          Int(3) == 0 ? "#frag" : "");
  }
}

void FuzzInput::Model(ChangeModel* m) {
  if (Int(2)) m->set_change_rate(Int(2) ? Value() : 1e-3 * Int(10));
  if (Int(2)) m->set_recall(Int(2) ? Value() : 0.1 * Int(11));
  if (Int(2)) m->set_false_rate(Int(2) ? Value() : 1e-4 * Int(10));
}

UpsertUrlsRequest FuzzInput::Upsert() {
  UpsertUrlsRequest r;
  for (int i = Items(); i > 0; --i) {
    UrlSpec* s = r.add_urls();
    s->set_url(Url());
    s->set_importance(Int(3) ? 0.1 * Int(50) : Value());
    if (Int(2)) Model(s->mutable_prior());
    if (Int(4) == 0) s->set_politeness_host(Int(2) ? "a.example" : "?");
    if (Int(3) == 0) s->set_last_crawl_time(Time());
  }
  return r;
}

DeleteUrlsRequest FuzzInput::Delete() {
  DeleteUrlsRequest r;
  for (int i = Items(); i > 0; --i) r.add_urls(Url());
  return r;
}

SignalBatch FuzzInput::Signals() {
  SignalBatch r;
  r.set_sequence(rng_());
  for (int i = Items(); i > 0; --i) {
    Signal* s = r.add_signals();
    s->set_url(Url());
    s->set_time(Int(3) ? 0.0 : Time());
    s->set_source(static_cast<SignalSource>(Int(8)));
  }
  return r;
}

PeekTopRequest FuzzInput::Peek() {
  PeekTopRequest r;
  if (Int(2)) r.set_time(Time());
  r.set_k(Int(3) ? Int(10) : static_cast<uint32_t>(rng_()));
  return r;
}

LeaseRequest FuzzInput::Lease() {
  LeaseRequest r;
  double t = Time();
  for (int i = Items(); i > 0; --i) {
    r.add_slot_times(Int(5) ? t : Time());
    t += Int(3);
  }
  r.set_holder(Int(10) ? "f" : std::string(400, 'h'));
  if (Int(2)) r.set_lease_duration(Int(2) ? Value() : 10.0 * Int(100));
  return r;
}

ReportCrawlsRequest FuzzInput::Reports() {
  ReportCrawlsRequest r;
  for (int i = Items(); i > 0; --i) {
    CrawlReport* c = r.add_reports();
    if (Int(2)) {
      c->set_lease_id(Int(3) ? 1 + Int(40) : rng_());
    } else {
      c->set_url(Url());
    }
    c->set_fetch_time(Int(2) ? 0.0 : Time());
    c->set_outcome(static_cast<CrawlOutcome>(Int(7)));
    if (Int(2)) c->set_content_digest(std::string(Int(80), 'd' + Int(3)));
  }
  return r;
}

GetUrlStateRequest FuzzInput::UrlState() {
  GetUrlStateRequest r;
  r.set_url(Url());
  if (Int(2)) r.set_time(Time());
  return r;
}

SetHostPolitenessRequest FuzzInput::Politeness() {
  SetHostPolitenessRequest r;
  for (int i = Items(); i > 0; --i) {
    HostPoliteness* h = r.add_hosts();
    h->set_host(Int(4) ? "a.example" : "bad host");
    if (Int(2)) h->set_min_delay(Int(2) ? Value() : Int(30));
    if (Int(2)) h->set_blocked_until(Time());
  }
  return r;
}

SetPolicyRequest FuzzInput::Policy() {
  SetPolicyRequest r;
  r.mutable_policy()->set_kind(static_cast<PolicyKind>(Int(6)));
  r.mutable_policy()->set_approx_terms(Int(4) - 1);
  if (Int(2)) r.set_t_delay(Int(2) ? Value() : Int(60));
  return r;
}

void FuzzInput::Mutate(std::string* s) {
  if (s->empty()) return;
  for (int k = 1 + Int(4); k > 0; --k) {
    (*s)[Int(static_cast<int>(s->size()))] = static_cast<char>(Int(256));
  }
}

}  // namespace shard
}  // namespace recrawl
