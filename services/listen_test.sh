#!/usr/bin/env bash
# With --port=0 each server listens on one port, the one its port file
# names (gRPC's SO_REUSEPORT would bind each poller to a port of its own).
set -uo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The TCP ports process $1 listens on, from /proc (no ss or lsof needed).
listening_ports() {
  python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        link = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if link.startswith("socket:["):
        inodes.add(link[8:-1])
ports = set()
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    with open(table) as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
print(" ".join(str(p) for p in sorted(ports)))
PY
}
source tests/server_ports.sh

check() {  # name, then the command
  local name=$1
  shift
  "$@" --port=0 --port_file="$tmp/$name.port" >"$tmp/$name.log" 2>&1 &
  local pid=$!
  local port _
  read -r port _ < <(server_ports "$tmp/$name.port") || { fail "$name did not serve: $(tail -3 "$tmp/$name.log")"; return; }
  local ports
  ports=$(listening_ports "$pid")
  [[ $ports == "$port" ]] || fail "$name listens on '$ports', its port file names $port"
  kill "$pid"
  wait "$pid" 2>/dev/null
}

check shard services/shard_server --data_dir="$tmp/shard" --host=127.0.0.1
check coordinator services/coordinator_server --shards=127.0.0.1:1 --num_shards=1 \
  --host=127.0.0.1

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
