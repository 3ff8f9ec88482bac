// Durability: a real shard process under a stream of
// signals, leases and reports is killed with SIGKILL; after a restart every
// acknowledged signal and report is there and no lease is lost.
//
// One client thread sends one request at a time and books what each
// acknowledgement promises. The request in flight when the process dies may
// or may not have been applied: the check allows both for the URLs it
// touched, and nothing else.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/shard.grpc.pb.h"
#include "services/clock.h"
#include "services/server_process.h"

namespace recrawl {
namespace services {
namespace {

constexpr int kUrls = 200;

std::string Url(int i) { return absl::StrCat("https://host", i, ".example/p"); }

// What the acknowledged requests say a URL's state is.
struct Expected {
  double last_crawl = 0.0;
  uint32_t signals = 0;  // n_cis since last_crawl
};

// The request in flight when the server died, and what it would change.
struct InFlight {
  std::map<int, Expected> if_applied;  // by URL
  bool report = false;                 // a report batch: applied, it resets signals to 0
                                       // and ends the leases it names
  bool lease = false;                  // a lease request (ids unknown)
};

class Booking {
 public:
  std::vector<Expected> urls = std::vector<Expected>(kUrls);
  std::map<uint64_t, int> leases;  // acknowledged, not reported: id → URL
  std::set<int> leased_urls;
  InFlight in_flight;
  uint64_t max_lease_id = 0;
  int64_t acked_signals = 0, acked_reports = 0, acked_leases = 0;
};

class Client {
 public:
  Client(ShardService::Stub* stub, Booking* book) : stub_(stub), book_(book) {}

  // Runs until a request fails (the server died) or `stop` is set.
  void Run(const std::atomic<bool>& stop) {
    grpc::ClientContext stream_ctx;
    auto stream = stub_->StreamSignals(&stream_ctx);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    uint64_t sequence = 0;
    while (!stop.load()) {
      const double op = u(rng_);
      bool ok;
      if (op < 0.6) {
        ok = SignalBatch(stream.get(), ++sequence);
      } else if (op < 0.85) {
        ok = ReportBatch();
      } else {
        ok = LeaseBatch();
      }
      if (!ok) return;
      book_->in_flight = InFlight();
    }
    stream->WritesDone();
    stream->Finish().IgnoreError();
  }

 private:
  // Signals for one URL, so that the acknowledgement's count is that URL's.
  bool SignalBatch(grpc::ClientReaderWriter<recrawl::SignalBatch, SignalBatchAck>* stream,
                   uint64_t sequence) {
    const int url = static_cast<int>(rng_() % kUrls);
    const int n = 1 + static_cast<int>(rng_() % 4);
    recrawl::SignalBatch batch;
    batch.set_sequence(sequence);
    const double now = Clock::UnixNow();
    for (int k = 0; k < n; ++k) {
      Signal* s = batch.add_signals();
      s->set_url(Url(url));
      // Distinct times in the past (after this URL's last crawl, which
      // was at least one request ago).
      s->set_time(now - k * 1e-6);
      s->set_source(SIGNAL_SOURCE_CDN);
    }
    Expected e = book_->urls[url];
    e.signals += n;
    book_->in_flight.if_applied[url] = e;
    SignalBatchAck ack;
    if (!stream->Write(batch) || !stream->Read(&ack)) return false;
    EXPECT_EQ(ack.sequence(), sequence);
    // Bloom filter false positives (shard/signal_keys.h) count as
    // duplicates; what counts is what the shard says it counted.
    EXPECT_EQ(ack.counted() + ack.duplicate(), static_cast<uint32_t>(n));
    book_->urls[url].signals += ack.counted();
    book_->acked_signals += ack.counted();
    return true;
  }

  // Crawl reports of a few URLs: by lease id where the URL is leased.
  bool ReportBatch() {
    ReportCrawlsRequest req;
    const double now = Clock::UnixNow();
    std::vector<int> urls;
    std::vector<uint64_t> lease_ids;
    for (int k = 0; k < 4; ++k) {
      const int url = static_cast<int>(rng_() % kUrls);
      if (book_->in_flight.if_applied.count(url)) continue;
      CrawlReport* r = req.add_reports();
      uint64_t lease_id = 0;
      if (book_->leased_urls.count(url)) {
        for (const auto& [id, u] : book_->leases) {
          if (u == url) lease_id = id;
        }
        r->set_lease_id(lease_id);
      } else {
        r->set_url(Url(url));
      }
      r->set_fetch_time(now);
      r->set_outcome(rng_() % 2 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
      urls.push_back(url);
      lease_ids.push_back(lease_id);
      book_->in_flight.if_applied[url] = Expected{now, 0};
    }
    book_->in_flight.report = true;
    grpc::ClientContext ctx;
    ReportCrawlsResponse resp;
    if (!stub_->ReportCrawls(&ctx, req, &resp).ok()) return false;
    EXPECT_EQ(resp.result().rejected_size(), 0);
    for (size_t k = 0; k < urls.size(); ++k) {
      book_->urls[urls[k]] = Expected{now, 0};
      if (lease_ids[k] != 0) {
        book_->leases.erase(lease_ids[k]);
        book_->leased_urls.erase(urls[k]);
      }
    }
    book_->acked_reports += urls.size();
    return true;
  }

  bool LeaseBatch() {
    LeaseRequest req;
    const double now = Clock::UnixNow();
    for (int k = 0; k < 4; ++k) req.add_slot_times(now);
    req.set_holder("durability");
    req.set_lease_duration(3600);
    book_->in_flight.lease = true;
    grpc::ClientContext ctx;
    LeaseResponse resp;
    if (!stub_->Lease(&ctx, req, &resp).ok()) return false;
    for (const LeasedUrl& l : resp.leases()) {
      const int url = std::stoi(l.url().substr(strlen("https://host")));
      EXPECT_EQ(book_->leased_urls.count(url), 0u) << "leased twice: " << url;
      EXPECT_GT(l.lease_id(), book_->max_lease_id);
      book_->max_lease_id = std::max(book_->max_lease_id, l.lease_id());
      book_->leases[l.lease_id()] = url;
      book_->leased_urls.insert(url);
    }
    book_->acked_leases += resp.leases_size();
    return true;
  }

  ShardService::Stub* stub_;
  Booking* book_;
  std::mt19937_64 rng_{12345};
};

TEST(ShardDurabilityTest, KilledUnderLoadLosesNothingAcknowledged) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "durability");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<std::string> args = {"--data_dir=" + dir + "/data", "--port=0",
                                         "--host=127.0.0.1"};
  auto start = [&](ServerProcess* server) {
    const absl::Status s =
        server->Start("services/shard_server", args, dir + "/port", dir + "/log");
    ASSERT_TRUE(s.ok()) << s;
  };

  ServerProcess server;
  start(&server);
  auto stub = ShardService::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", server.port()),
                                                        grpc::InsecureChannelCredentials()));
  const double registered = Clock::UnixNow() - 86400;
  {
    grpc::ClientContext ctx;
    UpsertUrlsRequest req;
    for (int i = 0; i < kUrls; ++i) {
      UrlSpec* s = req.add_urls();
      s->set_url(Url(i));
      s->set_importance(1.0 + i % 7);
      s->set_last_crawl_time(registered);
    }
    UpsertUrlsResponse resp;
    ASSERT_TRUE(stub->UpsertUrls(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.result().applied(), static_cast<uint32_t>(kUrls));
  }

  Booking book;
  for (Expected& e : book.urls) e.last_crawl = registered;
  std::atomic<bool> stop{false};
  Client client(stub.get(), &book);
  std::thread load([&] { client.Run(stop); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  server.Stop(SIGKILL);  // mid-request, most likely
  load.join();
  ASSERT_GT(book.acked_signals, 100);
  ASSERT_GT(book.acked_reports, 100);
  ASSERT_GT(book.acked_leases, 10);

  ServerProcess restarted;
  start(&restarted);
  stub = ShardService::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", restarted.port()),
                                                   grpc::InsecureChannelCredentials()));
  std::set<int> leased_after;
  for (int i = 0; i < kUrls; ++i) {
    grpc::ClientContext ctx;
    GetUrlStateRequest req;
    req.set_url(Url(i));
    UrlState state;
    ASSERT_TRUE(stub->GetUrlState(&ctx, req, &state).ok()) << Url(i);
    const Expected& acked = book.urls[i];
    auto in_flight = book.in_flight.if_applied.find(i);
    const bool as_acked =
        state.last_crawl_time() == acked.last_crawl && state.signals_since_crawl() == acked.signals;
    bool as_in_flight = false;
    if (in_flight != book.in_flight.if_applied.end()) {
      // Applied in flight: a report's crawl time with no signals since, or
      // some or all of a signal batch (a batch may be counted in part).
      const Expected& e = in_flight->second;
      const uint32_t at_least = book.in_flight.report ? 0 : acked.signals;
      as_in_flight = state.last_crawl_time() == e.last_crawl &&
                     state.signals_since_crawl() <= e.signals &&
                     state.signals_since_crawl() >= at_least;
    }
    EXPECT_TRUE(as_acked || as_in_flight)
        << Url(i) << ": last crawl " << state.last_crawl_time() << " (acked " << acked.last_crawl
        << "), signals " << state.signals_since_crawl() << " (acked " << acked.signals << ")";
    if (state.has_lease()) leased_after.insert(i);
  }
  // Every acknowledged lease is there with its id, unless the report in
  // flight ended it; only the lease request in flight may have added more.
  std::map<uint64_t, int> open_leases;
  for (const auto& [id, url] : book.leases) {
    grpc::ClientContext ctx;
    GetUrlStateRequest req;
    req.set_url(Url(url));
    UrlState state;
    ASSERT_TRUE(stub->GetUrlState(&ctx, req, &state).ok());
    auto in_flight = book.in_flight.if_applied.find(url);
    const bool reported_in_flight = book.in_flight.report &&
                                    in_flight != book.in_flight.if_applied.end() &&
                                    state.last_crawl_time() == in_flight->second.last_crawl;
    if (reported_in_flight) {
      EXPECT_FALSE(state.has_lease()) << "lease " << id << " of " << Url(url);
      continue;
    }
    ASSERT_TRUE(state.has_lease()) << "lease " << id << " of " << Url(url);
    EXPECT_EQ(state.lease().lease_id(), id);
    leased_after.erase(url);
    open_leases[id] = url;
  }
  if (!book.in_flight.lease) {
    EXPECT_TRUE(leased_after.empty()) << leased_after.size() << " unknown";
  } else {
    EXPECT_LE(leased_after.size(), 4u);
  }
  // The acknowledged leases can be reported, and new ids are new.
  {
    grpc::ClientContext ctx;
    ReportCrawlsRequest req;
    for (const auto& [id, url] : open_leases) {
      CrawlReport* r = req.add_reports();
      r->set_lease_id(id);
      r->set_fetch_time(Clock::UnixNow());
      r->set_outcome(CRAWL_OUTCOME_UNCHANGED);
    }
    ReportCrawlsResponse resp;
    ASSERT_TRUE(stub->ReportCrawls(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.result().applied(), open_leases.size());
  }
  {
    grpc::ClientContext ctx;
    LeaseRequest req;
    req.add_slot_times(Clock::UnixNow());
    LeaseResponse resp;
    ASSERT_TRUE(stub->Lease(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.leases_size(), 1);
    EXPECT_GT(resp.leases(0).lease_id(), book.max_lease_id);
  }
  std::printf(
      "acknowledged before the kill: %lld signals, %lld reports, "
      "%lld leases (%zu outstanding)\n",
      static_cast<long long>(book.acked_signals), static_cast<long long>(book.acked_reports),
      static_cast<long long>(book.acked_leases), book.leases.size());
}

}  // namespace
}  // namespace services
}  // namespace recrawl
