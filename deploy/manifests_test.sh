#!/usr/bin/env bash
# Renders the Kubernetes manifests (deploy/k8s: the base and every overlay)
# with `kubectl kustomize`, lints the sources and the output with yamllint,
# and checks them and deploy/Dockerfile against the binaries
# (deploy/manifests_check.py: every flag exists in the binary's --helpfull,
# NUM_SHARDS = replicas, DNS name, ports, probes, libraries, packages).
# kubectl, yamllint, python3-yaml and openssl come from tools/install_deps.sh:
# a missing one fails the test.
set -uo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for tool in kubectl yamllint python3 openssl; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL: $tool is not installed; tools/install_deps.sh installs it"
    exit 1
  fi
done
python3 -c 'import yaml' || { echo "FAIL: python3-yaml is not installed"; exit 1; }

# A real copy: kustomize refuses files that are symlinks leading out of its
# root, which is what Bazel's runfiles are.
cp -RL deploy/k8s "$tmp/k8s"
rm -rf "$tmp"/k8s/base/secrets "$tmp"/k8s/overlays/*/secrets  # fresh ones below
RECRAWL_K8S_DIR=$tmp/k8s deploy/make_secrets.sh test >/dev/null || fail "make_secrets.sh"
python3 deploy/manifests_check.py tokens "$tmp/k8s/base/secrets/tokens" || failures=$((failures + 1))
tls=$tmp/k8s/overlays/tls/secrets
openssl verify -CAfile "$tls/ca.crt" "$tls/tls.crt" >/dev/null || fail "tls.crt is not signed by ca.crt"
names=$(openssl x509 -in "$tls/tls.crt" -noout -text)
for name in recrawl-shards recrawl-coordinator recrawl-coordinator.test.svc recrawl-ingest; do
  [[ $names == *"DNS:$name"* ]] || fail "tls.crt does not name $name"
done

rendered=()
for dir in base overlays/small overlays/large overlays/tls; do
  out=$tmp/${dir//\//_}.rendered.yaml
  if kubectl kustomize "$tmp/k8s/$dir" >"$out" 2>"$tmp/kustomize.err"; then
    rendered+=("$out")
  else
    fail "kubectl kustomize $dir: $(cat "$tmp/kustomize.err")"
  fi
done

yamllint --strict -c deploy/.yamllint "$tmp/k8s" "${rendered[@]}" ||
  fail "yamllint (config deploy/.yamllint)"

# Abseil's --helpfull lists every flag; it exits 1 after printing.
services/shard_server --helpfull >"$tmp/shard.help" 2>&1
services/coordinator_server --helpfull >"$tmp/coordinator.help" 2>&1
ingest/ingest_server --helpfull >"$tmp/ingest.help" 2>&1
python3 deploy/manifests_check.py manifests --help shard="$tmp/shard.help" \
  --help coordinator="$tmp/coordinator.help" --help ingest="$tmp/ingest.help" \
  "${rendered[@]}" || failures=$((failures + 1))

# The Dockerfile, against the real source tree (its build context).
root=$(cd "$(dirname "$(readlink -f deploy/Dockerfile)")/.." && pwd)
python3 deploy/manifests_check.py dockerfile deploy/Dockerfile "$root" \
  services/shard_server services/coordinator_server ingest/ingest_server client/recrawlctl ||
  failures=$((failures + 1))

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS: rendered ${#rendered[@]} kustomizations"
