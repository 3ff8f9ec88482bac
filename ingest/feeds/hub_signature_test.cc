#include "ingest/feeds/hub_signature.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace recrawl {
namespace feeds {
namespace {

using ::testing::HasSubstr;

TEST(HubSignatureTest, KnownVectorsOfEachMethod) {
  // RFC 4231 test case 2 (key "Jefe") for the SHA-2 family; SHA-1 from
  // RFC 2202 test case 2.
  const std::string body = "what do ya want for nothing?";
  EXPECT_EQ(*SignHubBody("sha1", "Jefe", body), "sha1=effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  EXPECT_EQ(*SignHubBody("sha256", "Jefe", body),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(*SignHubBody("sha384", "Jefe", body),
            "sha384=af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2"
            "c78b3239ecfab21649");
  EXPECT_EQ(*SignHubBody("sha512", "Jefe", body),
            "sha512=164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a99"
            "4a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737");
  EXPECT_EQ(SignHubBody("md5", "Jefe", body).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HubSignatureTest, EachMethodVerifies) {
  const std::string body = "<feed xmlns=\"http://www.w3.org/2005/Atom\"/>";
  for (const char* method : {"sha1", "sha256", "sha384", "sha512"}) {
    const std::string header = *SignHubBody(method, "s3cret", body);
    EXPECT_TRUE(VerifyHubSignature(header, "s3cret", body).ok()) << method;
    // Upper-case hex and method are the same signature.
    EXPECT_TRUE(VerifyHubSignature(absl::AsciiStrToUpper(header), "s3cret", body).ok()) << method;
    EXPECT_EQ(VerifyHubSignature(header, "other", body).code(), absl::StatusCode::kPermissionDenied)
        << method;
    EXPECT_EQ(VerifyHubSignature(header, "s3cret", body + " ").code(),
              absl::StatusCode::kPermissionDenied)
        << method;
  }
}

TEST(HubSignatureTest, BadHeadersAreRefused) {
  const std::string body = "x";
  const std::string good = *SignHubBody("sha256", "k", body);
  std::string flipped = good;
  flipped.back() = flipped.back() == '0' ? '1' : '0';
  absl::Status status = VerifyHubSignature(flipped, "k", body);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()), HasSubstr("does not match the body"));
  EXPECT_THAT(std::string(VerifyHubSignature("", "k", body).message()), HasSubstr("missing"));
  EXPECT_THAT(std::string(VerifyHubSignature("md5=abcd", "k", body).message()),
              HasSubstr("must be sha1="));
  EXPECT_THAT(std::string(VerifyHubSignature("sha256", "k", body).message()),
              HasSubstr("must be sha1="));
  EXPECT_THAT(std::string(VerifyHubSignature("sha256=abcd", "k", body).message()),
              HasSubstr("64 hex digits"));
  EXPECT_THAT(
      std::string(VerifyHubSignature("sha256=" + std::string(64, 'g'), "k", body).message()),
      HasSubstr("64 hex digits"));
  // A sha1 signature sent as sha256 does not pass.
  EXPECT_EQ(VerifyHubSignature("sha256=" + good.substr(7, 40), "k", body).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(HubSignatureTest, EmptySecretAndBody) {
  const std::string header = *SignHubBody("sha256", "", "");
  EXPECT_EQ(header, "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  EXPECT_TRUE(VerifyHubSignature(header, "", "").ok());
}

}  // namespace
}  // namespace feeds
}  // namespace recrawl
