// For tests that every method of a service checks its caller: calls a method
// by name with an empty request message (whatever its type) and returns how
// it ended. Thread-safe.
#ifndef RECRAWL_SERVICES_EMPTY_CALL_H_
#define RECRAWL_SERVICES_EMPTY_CALL_H_

#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"

namespace recrawl {
namespace services {

// The names of the methods of `service_full_name` (e.g.
// "recrawl.ShardService"), from the generated descriptors.
std::vector<std::string> MethodsOf(const std::string& service_full_name);

// Calls /service_full_name/method on `channel` with `token` (none for "")
// and a 5 s deadline; a streaming method is sent one empty message.
grpc::Status CallWithEmptyRequest(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& service_full_name, const std::string& method,
                                  const std::string& token);

}  // namespace services
}  // namespace recrawl

#endif  // RECRAWL_SERVICES_EMPTY_CALL_H_
