#include "services/parse_errors.h"

#include <atomic>
#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "spdlog/spdlog.h"

namespace recrawl {
namespace services {
namespace {

// The field of this thread's last UTF-8 refusal, "" when none.
thread_local std::string parse_error_field;

// At most this many protobuf lines a minute reach the log; the others are
// counted and summed up in the next line that gets through.
constexpr int kLinesPerMinute = 20;
std::atomic<int64_t> window_start{0};
std::atomic<int> window_lines{0};
std::atomic<int64_t> suppressed{0};

int64_t MinuteNow() {
  return std::chrono::duration_cast<std::chrono::minutes>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void LogHandler(google::protobuf::LogLevel level, const char* filename, int line,
                const std::string& message) {
  // "String field 'recrawl.UrlSpec.url' contains invalid UTF-8 data when
  // parsing a protocol buffer. ..."
  constexpr absl::string_view kPrefix = "String field '";
  if (absl::StartsWith(message, kPrefix) && absl::StrContains(message, "invalid UTF-8") &&
      absl::StrContains(message, "parsing")) {
    const size_t end = message.find('\'', kPrefix.size());
    if (end != std::string::npos) {
      parse_error_field = message.substr(kPrefix.size(), end - kPrefix.size());
    }
  }
  const int64_t minute = MinuteNow();
  if (window_start.exchange(minute) != minute) window_lines = 0;
  if (++window_lines > kLinesPerMinute) {
    ++suppressed;
    return;
  }
  const int64_t skipped = suppressed.exchange(0);
  const std::string text =
      skipped > 0 ? absl::StrCat(message, " (", skipped, " protobuf lines suppressed before)")
                  : message;
  if (level >= google::protobuf::LOGLEVEL_ERROR) {
    spdlog::warn("protobuf {}:{}: {}", filename, line, text);
  } else {
    spdlog::info("protobuf {}:{}: {}", filename, line, text);
  }
}

class Interceptor final : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (status.error_code() == grpc::StatusCode::INTERNAL && status.error_message().empty()) {
        if (std::optional<grpc::Status> error = TakeParseError()) {
          methods->ModifySendStatus(*error);
        }
      }
    }
    methods->Proceed();
  }
};

class Factory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo*) override {
    return new Interceptor();
  }
};

}  // namespace

void InstallProtobufLogHandler() { google::protobuf::SetLogHandler(&LogHandler); }

std::optional<grpc::Status> TakeParseError() {
  if (parse_error_field.empty()) return std::nullopt;
  // "recrawl.UrlSpec.url" → the field's own name, as the other messages
  // name fields; the message type says where it is.
  const std::string full = std::exchange(parse_error_field, "");
  const size_t dot = full.rfind('.');
  const std::string field = dot == std::string::npos ? full : full.substr(dot + 1);
  return grpc::Status(
      grpc::StatusCode::INVALID_ARGUMENT,
      absl::StrCat(field, ": not valid UTF-8 (", full, "; string fields must be UTF-8)"));
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> ParseErrorInterceptor() {
  return std::make_unique<Factory>();
}

}  // namespace services
}  // namespace recrawl
