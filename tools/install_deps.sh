#!/usr/bin/env bash
# Installs the Debian packages recrawl builds, tests and runs with, skipping
# those already present. Everything comes from Debian: the build is offline.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-java g++ python3
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libboost-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  librocksdb-dev libspdlog-dev prometheus-cpp-dev
  # Routing by site: the public suffix list built into libpsl.
  libpsl-dev
  # Linked by name from third_party/BUILD.bazel (static RocksDB needs its
  # compression and flag libraries; spdlog uses the external fmt).
  libfmt-dev libgflags-dev libsnappy-dev zlib1g-dev libbz2-dev liblz4-dev libzstd-dev
  gnuplot-nox
  # The ingestion gateway: HTTP server, XML, outbound fetches, HMAC, gzip.
  libcpp-httplib-dev libxml2-dev libcurl4-openssl-dev libssl-dev
  # services/auth_test generates its TLS certificates with the CLI.
  openssl
  # services/metrics_lint_test lints both servers' /metrics with promtool.
  prometheus
  # shard/build_fuzzer.sh (CI's libFuzzer run): clang, and the compiler-rt
  # runtimes with libFuzzer and the sanitizers (a separate package from
  # clang in Debian 12, only recommended by it).
  clang libclang-rt-dev
  # tools/check_format.sh (CI): the tree's formatting, .clang-format.
  clang-format-14
  # deploy/manifests_test: yamllint lints the Kubernetes manifests, its
  # checker reads them with python3-yaml.
  yamllint python3-yaml
  # tests:wire_python_test: a Python client generated from proto/*.proto
  # (protoc's Python output, grpc_python_plugin from protobuf-compiler-grpc).
  python3-grpcio python3-protobuf
)
# deploy/manifests_test renders the manifests with `kubectl kustomize`; any
# kubectl will do (Debian's package would clash with another one's file).
if ! command -v kubectl >/dev/null; then packages+=(kubernetes-client); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "Installing: ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
