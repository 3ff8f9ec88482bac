#!/usr/bin/env bash
# The gateway's /metrics, after some traffic (a refused IndexNow request,
# a refused webhook call, a health check), pass `promtool check metrics`
# (Debian's prometheus package), and the `code` label is a status name as
# on the other servers, never a number. No cluster is needed: nothing here
# reaches the signal path.
set -uo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
command -v promtool >/dev/null ||
  { echo "FAIL: promtool not found (Debian package prometheus; tools/install_deps.sh)"; exit 1; }

source tests/server_ports.sh

printf 'pinger pinger-token-0123456789\noperator operator-token-0123456789\n' >"$tmp/tokens"
ingest/ingest_server --host=127.0.0.1 --port=0 --port_file="$tmp/ingest.port" \
  --coordinator=127.0.0.1:1 --token_file="$tmp/tokens" >"$tmp/ingest.log" 2>&1 &
gateway=$!
read -r port _ < <(server_ports "$tmp/ingest.port") || fail "gateway did not serve: $(tail -5 "$tmp/ingest.log")"

python3 - "$port" >"$tmp/metrics" <<'PY' || fail "requests: see above"
import sys, urllib.request, urllib.error
base = "http://127.0.0.1:%s" % sys.argv[1]
def status(path, body=None, headers={}):
    try:
        return urllib.request.urlopen(urllib.request.Request(base + path, body, headers)).status
    except urllib.error.HTTPError as e:
        return e.code
assert status("/indexnow", b"{not json", {"Content-Type": "application/json"}) == 400
assert status("/cdn/purge", b'{"urls":[]}') == 401
assert status("/healthz") == 200
sys.stdout.write(urllib.request.urlopen(base + "/metrics").read().decode())
PY
if ! out=$(promtool check metrics <"$tmp/metrics" 2>&1); then
  fail "promtool check metrics: $out"
fi
grep -q 'recrawl_ingest_requests_total{code="BAD_REQUEST",source="indexnow"} 1' "$tmp/metrics" ||
  fail "the refused IndexNow request is not counted by its status name"
grep -q 'recrawl_ingest_requests_total{code="UNAUTHORIZED",source="cdn"} 1' "$tmp/metrics" ||
  fail "the refused webhook call is not counted by its status name"
if grep -E 'code="[0-9]+"' "$tmp/metrics"; then
  fail "a numeric code label"
fi

kill -TERM "$gateway"
wait "$gateway" || fail "gateway exit status $? after SIGTERM: $(tail -5 "$tmp/ingest.log")"
if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
