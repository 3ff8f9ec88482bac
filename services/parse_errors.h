// Requests that do not parse, answered as the client's error.
//
// Protobuf refuses a message whose string field holds invalid UTF-8
// (proto3), and gRPC then answers INTERNAL with an empty message; protobuf
// logs one ERROR line per such request, naming the field. This turns that
// into INVALID_ARGUMENT naming the field:
//
//  * InstallProtobufLogHandler (once, at start, before serving) routes
//    protobuf's log lines through spdlog, rate-limited (a client sending
//    bad bytes cannot flood the log), and records the field of a UTF-8
//    refusal for the thread that parsed;
//  * ParseErrorInterceptor, a server interceptor, changes an RPC's INTERNAL
//    status with no message into INVALID_ARGUMENT "<field>: not valid
//    UTF-8 ..." when its thread recorded a refusal;
//  * a streaming handler whose Read failed asks TakeParseError itself.
//
// gRPC's synchronous server parses a request and sends its status on the
// thread that runs the call, which is what the thread-local record rests on.
#ifndef RECRAWL_SERVICES_PARSE_ERRORS_H_
#define RECRAWL_SERVICES_PARSE_ERRORS_H_

#include <memory>
#include <optional>
#include <string>

#include "grpcpp/grpcpp.h"
#include "grpcpp/support/server_interceptor.h"

namespace recrawl {
namespace services {

void InstallProtobufLogHandler();

// The status for the last parse refusal recorded on this thread (and
// forgets it): INVALID_ARGUMENT naming the field. nullopt if none.
std::optional<grpc::Status> TakeParseError();

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> ParseErrorInterceptor();

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_PARSE_ERRORS_H_
