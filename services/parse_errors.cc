#include "services/parse_errors.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/stubs/logging.h"
#include "spdlog/spdlog.h"

namespace recrawl {
namespace services {
namespace {

// The field of this thread's last UTF-8 refusal, "" when none.
thread_local std::string parse_error_field;

// At most this many protobuf lines reach the log in any 60 seconds; the
// others are counted and summed up in the next line that gets through.
constexpr int kLinesPerMinute = 20;
using SteadyTime = std::chrono::steady_clock::time_point;
ABSL_CONST_INIT absl::Mutex limiter_mu(absl::kConstInit);
// When the last kLinesPerMinute lines were logged (a ring, its oldest at
// `oldest_line`; SteadyTime{}: none yet).
std::array<SteadyTime, kLinesPerMinute> logged_at ABSL_GUARDED_BY(limiter_mu);
int oldest_line ABSL_GUARDED_BY(limiter_mu) = 0;
int64_t suppressed ABSL_GUARDED_BY(limiter_mu) = 0;

// Whether a line may be logged now: not if kLinesPerMinute were logged in
// the last 60 s. When it may, *skipped is the number suppressed since the
// last line logged.
bool MayLogLine(int64_t* skipped) {
  const SteadyTime now = std::chrono::steady_clock::now();
  absl::MutexLock lock(&limiter_mu);
  SteadyTime& oldest = logged_at[oldest_line];
  if (oldest != SteadyTime{} && now - oldest < std::chrono::minutes(1)) {
    ++suppressed;
    return false;
  }
  oldest = now;
  oldest_line = (oldest_line + 1) % kLinesPerMinute;
  *skipped = std::exchange(suppressed, 0);
  return true;
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
  int64_t skipped = 0;
  if (!MayLogLine(&skipped)) return;
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
