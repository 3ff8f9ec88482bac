// Fuzz target of the shard core's request handlers (libFuzzer entry point;
// shard_fuzz_test.cc drives the same function deterministically).
//
// An input is a sequence of operations, each
//   [kind: 1 byte][clock step: 1 byte][length: 2 bytes LE][payload]
// where the payload is parsed as the request message of that kind (a
// payload that does not parse is sent as the empty request). All inputs go
// to one shard on a temporary store, so that state built by one input meets
// the next, as in a long-running server. After every operation the shard
// must still answer and hold its invariants; sanitizers catch the rest.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cluster/url.h"
#include "shard/fuzz_input.h"
#include "shard/shard.h"
#include "shard/store/url_store.h"

namespace recrawl {
namespace shard {
namespace {

class FuzzedShard {
 public:
  FuzzedShard() {
    dir_ = (std::filesystem::temp_directory_path() / absl::StrCat("recrawl_shard_fuzz_", getpid()))
               .string();
    std::filesystem::remove_all(dir_);
    Open();
  }
  ~FuzzedShard() {
    shard_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Run(const uint8_t* data, size_t size) {
    ForEachFuzzOp(data, size,
                  [this](uint8_t kind, uint8_t clock_step, const uint8_t* payload, size_t len) {
                    now_ += clock_step * 0.25;
                    Apply(kind, payload, len);
                    CheckInvariants();
                  });
  }

 private:
  void Open() {
    shard_.reset();
    absl::StatusOr<std::unique_ptr<UrlStore>> store = UrlStore::Open(dir_);
    if (!store.ok()) std::abort();
    ShardOptions options;
    options.max_batch_items = 64;
    options.register_unknown_urls = true;
    options.failure_backoff = 5;
    absl::StatusOr<std::unique_ptr<Shard>> shard = Shard::Open(*std::move(store), options, now_);
    if (!shard.ok()) std::abort();
    shard_ = *std::move(shard);
  }

  template <typename Message>
  static Message Parse(const uint8_t* data, size_t len) {
    return ParseOrEmpty<Message>(data, len);
  }

  void Apply(uint8_t kind, const uint8_t* data, size_t len) {
    switch (kind % 11) {
      case 0:
        shard_->UpsertUrls(Parse<UpsertUrlsRequest>(data, len), now_).IgnoreError();
        break;
      case 1:
        shard_->DeleteUrls(Parse<DeleteUrlsRequest>(data, len), now_).IgnoreError();
        break;
      case 2: {
        const SignalBatch batch = Parse<SignalBatch>(data, len);
        for (const Signal& signal : batch.signals()) CheckNormalForm(signal.url());
        shard_->IngestSignals(batch, now_).IgnoreError();
        break;
      }
      case 3:
        shard_->PeekTop(Parse<PeekTopRequest>(data, len), now_).IgnoreError();
        break;
      case 4:
        shard_->Lease(Parse<LeaseRequest>(data, len), now_).IgnoreError();
        break;
      case 5:
        shard_->ReportCrawls(Parse<ReportCrawlsRequest>(data, len), now_).IgnoreError();
        break;
      case 6:
        shard_->GetUrlState(Parse<GetUrlStateRequest>(data, len), now_).IgnoreError();
        break;
      case 7:
        shard_->SetHostPoliteness(Parse<SetHostPolitenessRequest>(data, len), now_).IgnoreError();
        break;
      case 8:
        shard_->SetPolicy(Parse<SetPolicyRequest>(data, len), now_).IgnoreError();
        break;
      case 9:
        shard_->GetStats(now_);
        break;
      case 10:
        // A restart: everything must come back from the store.
        if (len > 0 && data[0] == 0x5a) {
          const uint64_t urls = shard_->GetStats(now_).urls();
          Open();
          if (shard_->GetStats(now_).urls() != urls) std::abort();
        }
        break;
    }
  }

  // What the signal path takes for a URL in normal form is one.
  static void CheckNormalForm(const std::string& url) {
    const std::optional<absl::string_view> host = cluster::NormalFormHost(url);
    if (!host.has_value()) return;
    const absl::StatusOr<cluster::NormalizedUrl> normalized = cluster::NormalizeUrl(url);
    if (!normalized.ok() || normalized->spec() != url || normalized->host() != *host) {
      std::abort();
    }
  }

  void CheckInvariants() {
    const ShardStats stats = shard_->GetStats(now_);
    if (stats.leases_in_flight() > stats.urls()) std::abort();
    if (!std::isfinite(stats.crawl_value_level())) std::abort();
    PeekTopRequest peek;
    peek.set_k(4);
    absl::StatusOr<PeekTopResponse> top = shard_->PeekTop(peek, now_);
    if (!top.ok()) std::abort();
    for (const Candidate& c : top->candidates()) {
      if (!(c.value() >= 0.0) || !std::isfinite(c.value())) std::abort();
      GetUrlStateRequest req;
      req.set_url(c.url());
      if (!shard_->GetUrlState(req, now_).ok()) std::abort();
    }
  }

  std::string dir_;
  double now_ = 1.7e9;
  std::unique_ptr<Shard> shard_;
};

}  // namespace
}  // namespace shard
}  // namespace recrawl

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static recrawl::shard::FuzzedShard* shard = new recrawl::shard::FuzzedShard;
  shard->Run(data, size);
  return 0;
}
