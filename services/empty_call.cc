#include "services/empty_call.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "client/credentials.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/generic/generic_stub.h"

namespace recrawl {
namespace services {

std::vector<std::string> MethodsOf(const std::string& service_full_name) {
  std::vector<std::string> names;
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service_full_name);
  if (service == nullptr) return names;
  for (int i = 0; i < service->method_count(); ++i) names.push_back(service->method(i)->name());
  return names;
}

grpc::Status CallWithEmptyRequest(const std::shared_ptr<grpc::Channel>& channel,
                                  const std::string& service_full_name, const std::string& method,
                                  const std::string& token) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  client::AttachToken(&context, token);
  grpc::CompletionQueue cq;
  // An empty request message: zero bytes, but a buffer.
  grpc::Slice nothing("");
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&context, absl::StrCat("/", service_full_name, "/", method),
                            grpc::ByteBuffer(&nothing, 1), &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

}  // namespace services
}  // namespace recrawl
