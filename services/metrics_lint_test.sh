#!/usr/bin/env bash
# Both servers' /metrics, after some traffic (an OK call and a refused one),
# pass `promtool check metrics` (Debian's prometheus package): counts are
# counters named *_total, names and help as Prometheus wants them. And the
# `code` label is a status name on both, never a number.
set -uo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
command -v promtool >/dev/null ||
  { echo "FAIL: promtool not found (Debian package prometheus; tools/install_deps.sh)"; exit 1; }

source tests/server_ports.sh
# GET http://127.0.0.1:$1/metrics into $2.
scrape() {
  python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1]).read().decode())' \
    "$1" >"$2"
}

services/shard_server --data_dir="$tmp/shard" --host=127.0.0.1 --port=0 \
  --metrics_port=0 --port_file="$tmp/shard.port" >"$tmp/shard.log" 2>&1 &
shard=$!
read -r shard_port shard_metrics < <(server_ports "$tmp/shard.port") ||
  fail "shard did not serve: $(tail -5 "$tmp/shard.log")"
services/coordinator_server --shards="127.0.0.1:$shard_port" --num_shards=1 \
  --host=127.0.0.1 --port=0 --metrics_port=0 --port_file="$tmp/coordinator.port" \
  >"$tmp/coordinator.log" 2>&1 &
coordinator=$!
read -r coordinator_port coordinator_metrics < <(server_ports "$tmp/coordinator.port") ||
  fail "coordinator did not serve: $(tail -5 "$tmp/coordinator.log")"

ctl=(client/recrawlctl --target="127.0.0.1:$coordinator_port")
"${ctl[@]}" stats >/dev/null || fail "recrawlctl stats"
"${ctl[@]}" bandwidth set 0 >/dev/null 2>&1 && fail "bandwidth 0 was accepted"
sleep 1.5  # a refresh of both servers' gauges and counters

for server in shard coordinator; do
  port_var=${server}_metrics
  scrape "${!port_var}" "$tmp/$server.metrics" || { fail "$server: no /metrics"; continue; }
  if ! out=$(promtool check metrics <"$tmp/$server.metrics" 2>&1); then
    fail "$server: promtool check metrics: $out"
  fi
  grep -q 'rpcs_total{.*code="OK"' "$tmp/$server.metrics" ||
    fail "$server: no RPC counted with code=\"OK\""
  if grep -E 'code="[0-9]+"' "$tmp/$server.metrics"; then
    fail "$server: a numeric code label"
  fi
done
grep -q 'code="INVALID_ARGUMENT"' "$tmp/coordinator.metrics" ||
  fail "coordinator: the refused call is not counted by its status name"

kill "$coordinator" "$shard" 2>/dev/null
wait
if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
