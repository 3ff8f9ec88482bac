#include "client/gateway_client.h"

#include <google/protobuf/util/json_util.h>
#include <httplib.h>

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ingest/gateway.pb.h"

namespace recrawl {
namespace client {
namespace {

constexpr char kKeysPath[] = "/admin/indexnow/keys";
constexpr char kSitemapsPath[] = "/admin/sitemaps";
constexpr char kWebSubPath[] = "/admin/websub";

absl::StatusCode CodeOfAnswer(int status) {
  switch (status) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAlreadyExists;
    case 429:
    case 502:
    case 503:
    case 504:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

// The "error" of an answer's JSON body, or the body itself.
std::string ErrorOf(const std::string& body) {
  ingest::DeliveryAnswer answer;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (google::protobuf::util::JsonStringToMessage(body, &answer, options).ok() &&
      !answer.error().empty()) {
    return answer.error();
  }
  return body;
}

// "?host=..&key=.." of the non-empty ones, escaped.
std::string Query(const std::string& host, const std::string& key) {
  std::string query;
  if (!host.empty()) absl::StrAppend(&query, "?host=", httplib::detail::encode_query_param(host));
  if (!key.empty()) {
    absl::StrAppend(&query, query.empty() ? "?" : "&",
                    "key=", httplib::detail::encode_query_param(key));
  }
  return query;
}

}  // namespace

absl::StatusOr<std::string> GatewayClient::Call(const std::string& method, const std::string& path,
                                                const std::string& body) {
  const bool tls = !options_.ca_file.empty();
  const std::string base = absl::StrCat(tls ? "https://" : "http://", options_.address);
  httplib::Client http(base, options_.cert_file, options_.key_file);
  if (!http.is_valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("gateway: cannot reach ", base, " (bad address or client certificate?)"));
  }
  if (tls) {
    http.set_ca_cert_path(options_.ca_file.c_str());
    http.enable_server_certificate_verification(true);
  }
  const auto timeout = std::chrono::microseconds(absl::ToInt64Microseconds(options_.timeout));
  http.set_connection_timeout(timeout);
  http.set_read_timeout(timeout);
  http.set_write_timeout(timeout);
  httplib::Headers headers;
  if (!options_.token.empty()) {
    headers.emplace("Authorization", absl::StrCat("Bearer ", options_.token));
  }
  httplib::Result result = method == "GET" ? http.Get(path.c_str(), headers)
                           : method == "POST"
                               ? http.Post(path.c_str(), headers, body, "application/json")
                               : http.Delete(path.c_str(), headers);
  if (!result) {
    return absl::UnavailableError(absl::StrCat("gateway ", base, ": ", method, " ", path, ": ",
                                               httplib::to_string(result.error())));
  }
  if (result->status != 200) {
    return absl::Status(
        CodeOfAnswer(result->status),
        absl::StrCat("gateway answered ", result->status, ": ", ErrorOf(result->body)));
  }
  return result->body;
}

absl::Status GatewayClient::AddIndexNowKey(const std::string& host, const std::string& key) {
  ingest::RegisteredKey request;
  request.set_host(host);
  request.set_key(key);
  std::string body;
  if (!google::protobuf::util::MessageToJsonString(request, &body).ok()) {
    return absl::InternalError("cannot encode the key as JSON");
  }
  return Call("POST", kKeysPath, body).status();
}

absl::Status GatewayClient::RemoveIndexNowKey(const std::string& host, const std::string& key) {
  return Call("DELETE", absl::StrCat(kKeysPath, Query(host, key)), "").status();
}

absl::StatusOr<std::vector<IndexNowKey>> GatewayClient::ListIndexNowKeys(const std::string& host) {
  absl::StatusOr<std::string> body = Call("GET", absl::StrCat(kKeysPath, Query(host, "")), "");
  if (!body.ok()) return body.status();
  ingest::RegisteredKeys keys;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(*body, &keys, options).ok()) {
    return absl::InternalError(absl::StrCat("gateway: not a key list: ", body->substr(0, 200)));
  }
  std::vector<IndexNowKey> out;
  for (const ingest::RegisteredKey& k : keys.keys()) out.push_back({k.host(), k.key()});
  return out;
}

absl::Status GatewayClient::AddSitemap(const std::string& url) {
  ingest::RegisteredSitemap request;
  request.set_url(url);
  std::string body;
  if (!google::protobuf::util::MessageToJsonString(request, &body).ok()) {
    return absl::InternalError("cannot encode the sitemap as JSON");
  }
  return Call("POST", kSitemapsPath, body).status();
}

absl::Status GatewayClient::RemoveSitemap(const std::string& url) {
  return Call("DELETE",
              absl::StrCat(kSitemapsPath, "?url=", httplib::detail::encode_query_param(url)), "")
      .status();
}

absl::StatusOr<std::vector<PolledSitemap>> GatewayClient::ListSitemaps() {
  absl::StatusOr<std::string> body = Call("GET", kSitemapsPath, "");
  if (!body.ok()) return body.status();
  ingest::SitemapList list;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(*body, &list, options).ok()) {
    return absl::InternalError(absl::StrCat("gateway: not a sitemap list: ", body->substr(0, 200)));
  }
  std::vector<PolledSitemap> out;
  for (const ingest::SitemapStatus& s : list.sitemaps()) {
    out.push_back(
        {s.url(), s.parent(), s.kind(), s.last_success(), s.last_error(), s.tracked_urls()});
  }
  return out;
}

absl::StatusOr<std::string> GatewayClient::AddWebSub(const std::string& hub,
                                                     const std::string& topic) {
  ingest::WebSubTopic request;
  request.set_hub(hub);
  request.set_topic(topic);
  std::string body;
  if (!google::protobuf::util::MessageToJsonString(request, &body).ok()) {
    return absl::InternalError("cannot encode the subscription as JSON");
  }
  absl::StatusOr<std::string> answer = Call("POST", kWebSubPath, body);
  if (!answer.ok()) return answer.status();
  ingest::WebSubTopic subscribed;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(*answer, &subscribed, options).ok()) {
    return absl::InternalError(
        absl::StrCat("gateway: not a subscription: ", answer->substr(0, 200)));
  }
  return subscribed.callback_id();
}

absl::Status GatewayClient::RemoveWebSub(const std::string& hub, const std::string& topic) {
  return Call("DELETE",
              absl::StrCat(kWebSubPath, "?hub=", httplib::detail::encode_query_param(hub),
                           "&topic=", httplib::detail::encode_query_param(topic)),
              "")
      .status();
}

absl::StatusOr<std::vector<WebSubSubscription>> GatewayClient::ListWebSub() {
  absl::StatusOr<std::string> body = Call("GET", kWebSubPath, "");
  if (!body.ok()) return body.status();
  ingest::WebSubList list;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(*body, &list, options).ok()) {
    return absl::InternalError(
        absl::StrCat("gateway: not a subscription list: ", body->substr(0, 200)));
  }
  std::vector<WebSubSubscription> out;
  for (const ingest::WebSubStatus& s : list.subscriptions()) {
    out.push_back({s.hub(), s.topic(), s.active(), s.pending(), s.lease_end(), s.last_error()});
  }
  return out;
}

}  // namespace client
}  // namespace recrawl
