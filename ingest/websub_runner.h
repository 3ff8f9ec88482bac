// Drives a feeds::WebSubSubscriber (ingest/feeds/websub.h): a background
// thread POSTs the hub requests that are due (subscriptions, renewals,
// unsubscriptions, retries) through SafePostForm and reports each answer
// back; the gateway's callback routes hand it the hubs' intent
// verifications and content deliveries. A delivery whose signature
// verifies is delivered as signals (source WEBSUB, without a time: the
// sink stamps them on the cluster clock) before it is answered.
//
// Each subscription gets a fresh secret of 32 random bytes (OpenSSL
// RAND_bytes, hex). With state_file the subscriptions (hub, topic, secret)
// are kept there (ingest/websub_store.proto, via ingest/durable_file.h),
// saved before Subscribe / Unsubscribe return (the change undone when the
// save fails); Load subscribes to each again (the hub verifies anew and a
// new lease starts).
//
// Thread-safe.
#ifndef RECRAWL_INGEST_WEBSUB_RUNNER_H_
#define RECRAWL_INGEST_WEBSUB_RUNNER_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ingest/feeds/websub.h"
#include "ingest/gateway_metrics.h"
#include "ingest/safe_fetch.h"
#include "ingest/signal_sink.h"
#include "ingest/websub_store.pb.h"
#include "proto/shard.pb.h"

namespace recrawl {
namespace ingest {

struct WebSubRunnerOptions {
  // callback_base empty: Subscribe is refused (FAILED_PRECONDITION).
  feeds::WebSubOptions websub;
  FetchOptions fetch;
  std::string state_file;
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

class WebSubRunner {
 public:
  // Delivers signals and says what became of them (Gateway::DeliverSignals).
  using DeliverFn = std::function<absl::StatusOr<DeliveryReport>(std::vector<Signal>)>;

  // `metrics` (hub requests, as feed fetches of source "websub") must
  // outlive the runner.
  WebSubRunner(DeliverFn deliver, GatewayMetrics* metrics, WebSubRunnerOptions options);
  // Stop()s.
  ~WebSubRunner();
  WebSubRunner(const WebSubRunner&) = delete;
  WebSubRunner& operator=(const WebSubRunner&) = delete;

  // Subscribes again to the subscriptions saved in state_file; OK without
  // one; DATA_LOSS naming the file when it cannot be read or holds a bad
  // subscription.
  absl::Status Load();
  void Start();
  // Ends the thread; its hub request in flight is cancelled
  // (FetchOptions::cancel). Idempotent.
  void Stop();

  // Returns the callback id. INVALID_ARGUMENT naming "hub" or "topic";
  // FAILED_PRECONDITION without a callback base; INTERNAL when not saved.
  absl::StatusOr<std::string> Subscribe(absl::string_view hub, absl::string_view topic);
  // NOT_FOUND when there is no such subscription; INTERNAL when not saved.
  absl::Status Unsubscribe(absl::string_view hub, absl::string_view topic);
  std::vector<feeds::WebSubInfo> Subscriptions() const;

  // A hub's GET to the callback `id`.
  feeds::IntentAnswer OnIntent(absl::string_view id, const feeds::IntentRequest& request);
  // A hub's POST to the callback `id`: its signals delivered (the report),
  // or NOT_FOUND (no active subscription), PERMISSION_DENIED (the
  // signature does not verify; nothing signalled), or the delivery's error
  // (the coordinator unreachable).
  absl::StatusOr<DeliveryReport> OnDelivery(absl::string_view id, absl::string_view signature,
                                            absl::string_view body);

 private:
  void Run();
  absl::Status Save() ABSL_EXCLUSIVE_LOCKS_REQUIRED(save_mu_);

  const DeliverFn deliver_;
  GatewayMetrics* const metrics_;
  // Set by Stop; options_.fetch.cancel points here.
  std::atomic<bool> cancel_{false};
  const WebSubRunnerOptions options_;

  absl::Mutex save_mu_;
  mutable absl::Mutex mu_;
  feeds::WebSubSubscriber subscriber_ ABSL_GUARDED_BY(mu_);
  // The subscriptions kept, by callback id.
  std::map<std::string, StoredWebSubSubscription> kept_ ABSL_GUARDED_BY(mu_);
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_WEBSUB_RUNNER_H_
