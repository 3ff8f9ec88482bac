// Links one symbol of each library the ingestion gateway uses, so that a
// missing Debian package or a wrong link flag fails here first.

#include <curl/curl.h>
#include <httplib.h>
#include <libxml/parser.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <zlib.h>

int main() {
  httplib::Server server;
  xmlInitParser();
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  const unsigned char data[] = {'d'};
  if (HMAC(EVP_sha256(), "k", 1, data, 1, digest, &digest_size) == nullptr) return 1;
  curl_global_cleanup();
  return zlibVersion()[0] == '\0' || digest_size != 32;
}
