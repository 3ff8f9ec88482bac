// Throughput of a real shard server over gRPC on loopback (docs/benchmarks.md,
// "Shard at 10^5, 10^6 and 10^7 URLs"):
// signals over one stream, leases and reports in batches (one request at a
// time, then several at once), next to RocksDB's raw put rate measured in
// the same run.
//
//   bazel build //services:shard_server //services:shard_server_benchmark
//   bazel-bin/services/shard_server_benchmark
//       --server=bazel-bin/services/shard_server --urls=1000000
//
// Client and server share the machine's cores, as in the main job.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_support.h"
#include "bench/index_work_report.h"
#include "grpcpp/grpcpp.h"
#include "proto/shard.grpc.pb.h"
#include "services/server_process.h"
#include "shard/store/url_store.h"

ABSL_FLAG(std::string, server, "services/shard_server", "Server binary");
ABSL_FLAG(int64_t, urls, 1000000, "URLs in the shard");
ABSL_FLAG(int, batch, 256, "Items per request");
ABSL_FLAG(int64_t, signals, 2000000, "Signals to stream");
ABSL_FLAG(int, window, 8, "Signal batches in flight on the stream");
ABSL_FLAG(int64_t, leases, 0,
          "URLs to lease, then report (0: a fifth of the URLs, the same share "
          "of a crawl cycle at every size)");
ABSL_FLAG(int, in_flight, 4,
          "Lease and report requests at once in the second half of each "
          "phase (the first half sends one at a time)");
ABSL_FLAG(std::string, dir, "", "Working directory (default: a temp dir)");

namespace recrawl {
namespace services {
namespace {

using bench::BenchDir;
using bench::Clock;
using bench::RawPutRate;
using bench::Seconds;
using bench::SyntheticUrl;

void Check(const grpc::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.error_message().c_str());
    std::exit(1);
  }
}

// Streams `total` signals in batches with up to `window` unacknowledged.
double StreamSignals(ShardService::Stub* stub, int64_t urls, int64_t total, int batch, int window) {
  grpc::ClientContext ctx;
  auto stream = stub->StreamSignals(&ctx);
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  const int64_t batches = (total + batch - 1) / batch;
  std::vector<SignalBatch> prepared(64);
  std::mt19937_64 rng(5);
  for (SignalBatch& b : prepared) {
    for (int k = 0; k < batch; ++k) {
      Signal* s = b.add_signals();
      s->set_url(SyntheticUrl(rng() % urls));
      s->set_source(SIGNAL_SOURCE_CDN);
    }
  }
  const Clock::time_point start = Clock::now();
  int64_t counted = 0;
  std::thread reader([&] {
    SignalBatchAck ack;
    for (int64_t i = 0; i < batches; ++i) {
      if (!stream->Read(&ack)) {
        std::fprintf(stderr, "stream broke\n");
        std::exit(1);
      }
      counted += ack.counted();
      std::lock_guard<std::mutex> lock(mu);
      --in_flight;
      cv.notify_one();
    }
  });
  for (int64_t i = 0; i < batches; ++i) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return in_flight < window; });
      ++in_flight;
    }
    SignalBatch& b = prepared[i % prepared.size()];
    b.set_sequence(i);
    stream->Write(b);
  }
  reader.join();
  const double s = Seconds(start);
  stream->WritesDone();
  Check(stream->Finish(), "stream");
  if (counted != batches * batch) {
    std::printf("  (%lld of %lld signals counted)\n", static_cast<long long>(counted),
                static_cast<long long>(batches * batch));
  }
  return batches * batch / s;
}

// The server's index work so far (ShardStats.index): what the lease rate
// pays for besides the transport and the store.
IndexWork FetchIndexWork(ShardService::Stub* stub) {
  grpc::ClientContext ctx;
  ShardStats stats;
  Check(stub->GetStats(&ctx, GetStatsRequest(), &stats), "stats");
  return stats.index();
}

void Run() {
  const int64_t n = absl::GetFlag(FLAGS_urls);
  const int batch = absl::GetFlag(FLAGS_batch);
  const std::string dir = BenchDir(absl::GetFlag(FLAGS_dir), "recrawl_server_bench");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  const double raw = RawPutRate(dir + "/raw", n);
  std::filesystem::remove_all(dir + "/raw");
  std::printf("rocksdb raw put (120 B, WAL, batches of 1000): %.0fK/s\n", raw / 1e3);

  // Starts the shard on the benchmark's store; returns once it serves. A
  // restart at 10^7 URLs takes tens of seconds (its time is what is
  // measured), so the wait is bounded generously.
  const auto start_server = [&](ServerProcess* server) {
    const absl::Status started = server->Start(
        absl::GetFlag(FLAGS_server),
        {"--data_dir=" + dir + "/shard", "--port=0", "--host=127.0.0.1", "--block_cache_mb=8"},
        dir + "/port", dir + "/log", /*timeout_seconds=*/600);
    if (!started.ok()) {
      std::fprintf(stderr, "%s\n", started.ToString().c_str());
      std::exit(1);
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    return ShardService::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", server->port()), grpc::InsecureChannelCredentials(), args));
  };
  ServerProcess server;
  auto stub = start_server(&server);

  {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const Clock::time_point start = Clock::now();
    UpsertUrlsRequest req;
    for (int64_t i = 0; i < n; ++i) {
      UrlSpec* s = req.add_urls();
      s->set_url(SyntheticUrl(i));
      s->set_importance(u(rng));
      s->set_last_crawl_time(now - 86400 * u(rng));
      if (req.urls_size() == 1000 || i + 1 == n) {
        grpc::ClientContext ctx;
        UpsertUrlsResponse resp;
        Check(stub->UpsertUrls(&ctx, req, &resp), "upsert");
        req.Clear();
      }
    }
    std::printf("upsert over gRPC, batches of 1000: %.0fK URLs/s\n", n / Seconds(start) / 1e3);
  }
  const double signals = StreamSignals(stub.get(), n, absl::GetFlag(FLAGS_signals), batch,
                                       absl::GetFlag(FLAGS_window));
  std::printf(
      "signals over one stream, batches of %d, %d in flight: %.0fK/s "
      "(%.2f x raw put)\n",
      batch, absl::GetFlag(FLAGS_window), signals / 1e3, signals / raw);

  // Leases at the server's current time (slot time 0 is taken as now), then
  // reports of them by lease id; each half with one request at a time, the
  // other with --in_flight requests at once from as many client threads (a
  // shard serves many fetchers; the server runs one request at a time, and
  // the others' transport overlaps it).
  const int64_t total_leases =
      absl::GetFlag(FLAGS_leases) > 0 ? absl::GetFlag(FLAGS_leases) : n / 5;
  IndexWork work = FetchIndexWork(stub.get());
  const int in_flight = std::max(absl::GetFlag(FLAGS_in_flight), 1);
  std::vector<uint64_t> ids;
  for (const int clients : {1, in_flight}) {
    std::mutex mu;
    const size_t goal = ids.size() + static_cast<size_t>(total_leases / 2);
    const size_t before = ids.size();
    bool dry = false;
    auto lease = [&] {
      LeaseRequest req;
      req.set_holder("bench");
      req.set_lease_duration(3600);
      for (int k = 0; k < batch; ++k) req.add_slot_times(0.0);
      while (true) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (ids.size() >= goal || dry) return;
        }
        grpc::ClientContext ctx;
        LeaseResponse resp;
        Check(stub->Lease(&ctx, req, &resp), "lease");
        std::lock_guard<std::mutex> lock(mu);
        if (resp.leases_size() == 0) dry = true;
        for (const LeasedUrl& l : resp.leases()) ids.push_back(l.lease_id());
      }
    };
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) threads.emplace_back(lease);
    for (std::thread& t : threads) t.join();
    const double s = Seconds(start);
    const double leased = static_cast<double>(ids.size() - before);
    std::printf(
        "leases over gRPC, batches of %d, %d in flight: %.0fK URLs/s "
        "(%.2f x raw put)\n",
        batch, clients, leased / s / 1e3, leased / s / raw);
    bench::PrintIndexWorkPerLease(FetchIndexWork(stub.get()), leased, &work);
  }
  for (const int clients : {1, in_flight}) {
    // This half's ids, dealt to the clients in batches.
    const size_t begin = clients == 1 ? 0 : ids.size() / 2;
    const size_t end = clients == 1 ? ids.size() / 2 : ids.size();
    std::atomic<size_t> next{begin};
    auto report = [&](int client) {
      std::mt19937_64 rng(9 + client);
      while (true) {
        const size_t from = next.fetch_add(batch);
        if (from >= end) return;
        ReportCrawlsRequest req;
        for (size_t i = from; i < std::min(end, from + batch); ++i) {
          CrawlReport* r = req.add_reports();
          r->set_lease_id(ids[i]);
          r->set_outcome(rng() % 2 ? CRAWL_OUTCOME_CHANGED : CRAWL_OUTCOME_UNCHANGED);
        }
        grpc::ClientContext ctx;
        ReportCrawlsResponse resp;
        Check(stub->ReportCrawls(&ctx, req, &resp), "report");
      }
    };
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) threads.emplace_back(report, c);
    for (std::thread& t : threads) t.join();
    const double s = Seconds(start);
    const double reported = static_cast<double>(end - begin);
    std::printf(
        "reports over gRPC, batches of %d, %d in flight: %.0fK/s "
        "(%.2f x raw put)\n",
        batch, clients, reported / s / 1e3, reported / s / raw);
  }

  // SIGKILL, so that the store replays its WAL too. The baseline is the
  // store's own open (WAL replay included) and full scan, of a copy of the
  // killed store; then the time from the exec of a new server on the store
  // to its first answered lease.
  server.Stop(SIGKILL);
  double store_alone = 0.0;
  {
    const std::string copy = dir + "/copy";
    std::filesystem::copy(dir + "/shard", copy, std::filesystem::copy_options::recursive);
    const Clock::time_point start = Clock::now();
    absl::StatusOr<std::unique_ptr<shard::UrlStore>> store = shard::UrlStore::Open(copy);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      std::exit(1);
    }
    int64_t records = 0;
    absl::StatusOr<shard::ScanStats> scan =
        (*store)->ScanUrls([&records](cluster::UrlId, const shard::UrlRecord&) { ++records; });
    if (!scan.ok()) {
      std::fprintf(stderr, "%s\n", scan.status().ToString().c_str());
      std::exit(1);
    }
    store_alone = Seconds(start);
    std::printf(
        "store alone after SIGKILL: open + scan %.2f s (%lld "
        "records)\n",
        store_alone, static_cast<long long>(records));
    store->reset();
    std::filesystem::remove_all(copy);
  }
  {
    const Clock::time_point start = Clock::now();
    ServerProcess restarted;
    auto restarted_stub = start_server(&restarted);
    LeaseRequest req;
    req.set_holder("bench");
    req.add_slot_times(0.0);
    grpc::ClientContext ctx;
    LeaseResponse resp;
    Check(restarted_stub->Lease(&ctx, req, &resp), "lease after restart");
    const double restart = Seconds(start);
    std::printf(
        "restart after SIGKILL (%lld URLs): exec to the first lease "
        "answered %.2f s (%.2f x the store alone; %d leased)\n",
        static_cast<long long>(n), restart, restart / store_alone, resp.leases_size());
    restarted.Stop(SIGTERM);
    // The restarted server's own account of its start-up steps.
    std::ifstream log(dir + "/log");
    std::string line, loaded;
    while (std::getline(log, line)) {
      if (line.find("] loaded ") != std::string::npos) loaded = line;
    }
    std::printf("  the server's log: %s\n", loaded.c_str());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace services
}  // namespace recrawl

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  recrawl::services::Run();
  return 0;
}
