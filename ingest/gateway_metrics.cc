#include "ingest/gateway_metrics.h"

#include "prometheus/text_serializer.h"

namespace recrawl {
namespace ingest {

std::string HttpStatusName(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 202:
      return "ACCEPTED";
    case 304:
      return "NOT_MODIFIED";
    case 400:
      return "BAD_REQUEST";
    case 401:
      return "UNAUTHORIZED";
    case 403:
      return "FORBIDDEN";
    case 404:
      return "NOT_FOUND";
    case 405:
      return "METHOD_NOT_ALLOWED";
    case 409:
      return "CONFLICT";
    case 413:
      return "PAYLOAD_TOO_LARGE";
    case 422:
      return "UNPROCESSABLE_ENTITY";
    case 429:
      return "TOO_MANY_REQUESTS";
    case 500:
      return "INTERNAL_SERVER_ERROR";
    case 503:
      return "SERVICE_UNAVAILABLE";
    default:
      return "HTTP_" + std::to_string(code);
  }
}

GatewayMetrics::GatewayMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("recrawl_ingest_requests_total")
                    .Help("HTTP requests answered, by source and HTTP status code")
                    .Register(*registry_)),
      signals_(prometheus::BuildCounter()
                   .Name("recrawl_ingest_signals_total")
                   .Help("Signals by source and outcome (accepted, unknown, rejected, held)")
                   .Register(*registry_)),
      key_checks_(prometheus::BuildCounter()
                      .Name("recrawl_ingest_key_checks_total")
                      .Help("IndexNow key file checks by result (proved, refused, error)")
                      .Register(*registry_)),
      fetches_(prometheus::BuildCounter()
                   .Name("recrawl_ingest_feed_fetches_total")
                   .Help("Polled feed files by source and result (ok, not_modified, error)")
                   .Register(*registry_)) {}

std::string GatewayMetrics::Text() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void GatewayMetrics::Request(const std::string& source, int code) {
  requests_.Add({{"source", source}, {"code", HttpStatusName(code)}}).Increment();
}

void GatewayMetrics::Signals(const std::string& source, const std::string& outcome, uint64_t n) {
  if (n == 0) return;
  signals_.Add({{"source", source}, {"outcome", outcome}}).Increment(static_cast<double>(n));
}

void GatewayMetrics::KeyCheck(const std::string& result) {
  key_checks_.Add({{"result", result}}).Increment();
}

void GatewayMetrics::Fetch(const std::string& source, const std::string& result) {
  fetches_.Add({{"source", source}, {"result", result}}).Increment();
}

}  // namespace ingest
}  // namespace recrawl
