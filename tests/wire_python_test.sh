#!/usr/bin/env bash
# The wire API as a client in another language meets it: Python stubs
# generated from proto/*.proto alone by Debian's protoc and grpc_python_plugin
# (python3-grpcio, python3-protobuf), run by tests/wire_client.py against two
# shard_server processes and a coordinator_server on loopback, with role
# tokens. Fails when the .proto files do not compile for another language or
# when the servers answer otherwise than they say.
set -uo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# The system's interpreter, which has Debian's grpcio (not a pyenv one).
python=/usr/bin/python3
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT

die() {
  echo "FAIL: $*"
  for log in "$tmp"/*.log; do
    [[ -f $log ]] && { echo "--- $log"; tail -n 20 "$log"; }
  done
  exit 1
}

source tests/server_ports.sh

# Stubs from the .proto files, as any client would generate them.
mkdir -p "$tmp/stubs"
protoc -I. --python_out="$tmp/stubs" --grpc_out="$tmp/stubs" \
  --plugin=protoc-gen-grpc="$(command -v grpc_python_plugin)" proto/*.proto ||
  die "protoc could not generate Python stubs from proto/*.proto"

cat >"$tmp/tokens" <<'EOF'
# role token
fetcher fetcher-token-0123456789
pinger pinger-token-0123456789
operator operator-token-0123456789
internal internal-token-0123456789
EOF

shards=()
for s in 0 1; do
  services/shard_server --data_dir="$tmp/shard$s" --host=127.0.0.1 --port=0 \
    --port_file="$tmp/shard$s.port" --metrics_port=0 --shard_index=$s --num_shards=2 \
    --token_file="$tmp/tokens" >"$tmp/shard$s.log" 2>&1 &
  pids+=($!)
done
for s in 0 1; do
  read -r port _ < <(server_ports "$tmp/shard$s.port") || die "shard $s did not serve"
  shards+=("127.0.0.1:$port")
done
services/coordinator_server --shards="$(IFS=,; echo "${shards[*]}")" --num_shards=2 \
  --host=127.0.0.1 --port=0 --port_file="$tmp/coordinator.port" --metrics_port=0 \
  --bandwidth=1 --token_file="$tmp/tokens" >"$tmp/coordinator.log" 2>&1 &
pids+=($!)
read -r port _ < <(server_ports "$tmp/coordinator.port") || die "the coordinator did not serve"

PYTHONPATH="$tmp/stubs" "$python" tests/wire_client.py "127.0.0.1:$port" "$tmp/tokens" ||
  die "the Python client's checks"
echo "PASS"
