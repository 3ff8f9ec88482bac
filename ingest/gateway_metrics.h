// The gateway's Prometheus metrics:
//   recrawl_ingest_requests_total{source, code}   HTTP requests answered, by
//       source (indexnow, cdn, websub: the hubs' callbacks, admin, other)
//       and HTTP status, named as the
//       other servers name theirs: a status name, never a number
//       (HttpStatusName: "OK", "ACCEPTED", "BAD_REQUEST", ...);
//   recrawl_ingest_signals_total{source, outcome} signals by source
//       (indexnow, cdn, sitemap, websub) and what became of them (accepted,
//       unknown, rejected, held: waiting for a key check; forged: a WebSub
//       delivery whose signature did not verify, counted once);
//   recrawl_ingest_key_checks_total{result}       key file checks (proved,
//       refused: fetched but not the key, error: not fetched);
//   recrawl_ingest_feed_fetches_total{source, result} outbound feed
//       requests by result: source sitemap, polled files (ok, not_modified,
//       error: not fetched, an HTTP status other than 200/304, or not a
//       sitemap); source websub, requests to hubs (ok: a 2xx answer,
//       error: anything else).
// Thread-safe (prometheus-cpp's counters are).
#ifndef RECRAWL_INGEST_GATEWAY_METRICS_H_
#define RECRAWL_INGEST_GATEWAY_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace recrawl {
namespace ingest {

// The HTTP status `code` as an upper-case name ("OK", "ACCEPTED",
// "TOO_MANY_REQUESTS"); a code without one here as "HTTP_<code>".
std::string HttpStatusName(int code);

class GatewayMetrics {
 public:
  GatewayMetrics();

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // The registry in Prometheus' text format (the /metrics page).
  std::string Text() const;

  void Request(const std::string& source, int code);
  void Signals(const std::string& source, const std::string& outcome, uint64_t n);
  void KeyCheck(const std::string& result);
  void Fetch(const std::string& source, const std::string& result);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& signals_;
  prometheus::Family<prometheus::Counter>& key_checks_;
  prometheus::Family<prometheus::Counter>& fetches_;
};

}  // namespace ingest
}  // namespace recrawl

#endif  // RECRAWL_INGEST_GATEWAY_METRICS_H_
