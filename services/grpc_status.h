// absl::Status → grpc::Status, code and message kept (the two share the
// canonical code numbers). Thread-safe.
#ifndef RECRAWL_SERVICES_GRPC_STATUS_H_
#define RECRAWL_SERVICES_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace services {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_GRPC_STATUS_H_
