#!/bin/sh
# Writes the secret files the Kubernetes manifests are generated from, with
# fresh random tokens and keys; files that exist are kept (re-running does
# not rotate anything). They are never committed (deploy/k8s/.gitignore).
#
#   deploy/make_secrets.sh [NAMESPACE]
#
#   k8s/base/secrets/tokens            --token_file of both servers: one
#                                      "<role> <token>" line per role
#   k8s/base/secrets/ROLE.token        the same tokens one per file, for
#                                      clients (recrawlctl --token_file)
#   k8s/overlays/tls/secrets/ca.crt    a CA, and one certificate (tls.crt,
#   k8s/overlays/tls/secrets/tls.crt   tls.key) for the coordinator, the
#   k8s/overlays/tls/secrets/tls.key   shards and the gateway, naming their
#                                      Services in NAMESPACE (default:
#                                      default)
#   k8s/overlays/tls/secrets/ca.key    the CA's key: keep it out of the cluster
#
# RECRAWL_K8S_DIR writes under another copy of k8s/ (the tests).
set -eu

namespace=${1:-default}
k8s=${RECRAWL_K8S_DIR:-$(dirname "$0")/k8s}
auth=$k8s/base/secrets
tls=$k8s/overlays/tls/secrets
umask 077
mkdir -p "$auth" "$tls"

# 48 hex digits (services/auth.h: 16 to 256 printable characters).
new_token() { od -An -tx1 -N24 /dev/urandom | tr -d ' \n'; }

if [ -e "$auth/tokens" ]; then
  echo "keeping $auth/tokens"
else
  for role in operator fetcher pinger internal; do
    token=$(new_token)
    printf '%s\n' "$token" >"$auth/$role.token"
    printf '%s %s\n' "$role" "$token"
  done >"$auth/tokens.tmp"
  mv "$auth/tokens.tmp" "$auth/tokens"
  echo "wrote $auth/tokens and $auth/{operator,fetcher,pinger,internal}.token"
fi

if [ -e "$tls/tls.crt" ]; then
  echo "keeping $tls/tls.crt"
  exit 0
fi
command -v openssl >/dev/null || { echo "make_secrets: needs openssl" >&2; exit 1; }
names="DNS:recrawl-coordinator,DNS:recrawl-coordinator.$namespace.svc"
names="$names,DNS:recrawl-coordinator.$namespace.svc.cluster.local"
names="$names,DNS:recrawl-shards,DNS:recrawl-shards.$namespace.svc"
names="$names,DNS:recrawl-shards.$namespace.svc.cluster.local,DNS:localhost"
names="$names,DNS:recrawl-ingest,DNS:recrawl-ingest.$namespace.svc"
names="$names,DNS:recrawl-ingest.$namespace.svc.cluster.local"
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=recrawl CA" \
  -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=recrawl" \
  -keyout "$tls/tls.key" -out "$tls/tls.csr" 2>/dev/null
# Server and client use: the coordinator presents it to the shards too.
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$names" \
  >"$tls/tls.ext"
openssl x509 -req -in "$tls/tls.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" \
  -CAcreateserial -days 825 -extfile "$tls/tls.ext" -out "$tls/tls.crt" 2>/dev/null
rm -f "$tls/tls.csr" "$tls/tls.ext" "$tls/ca.srl"
echo "wrote $tls/ca.crt, tls.crt, tls.key (names: $names) and ca.key"
