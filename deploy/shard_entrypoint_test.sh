#!/usr/bin/env bash
# deploy/shard_entrypoint.sh: the shard index comes from the pod name's
# ordinal, the other flags pass through unchanged, a name without an ordinal
# is refused, and the real shard_server started through it serves as that
# shard and drains on SIGTERM (exec: the signal reaches the server).
set -uo pipefail
entry=deploy/shard_entrypoint.sh
server=services/shard_server
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A stand-in server that prints its arguments, one per line.
fake=$tmp/fake_server
printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done\n' >"$fake"
chmod +x "$fake"

out=$(POD_NAME=recrawl-shard-12 RECRAWL_SHARD_SERVER=$fake "$entry" --num_shards=16 \
  "--data_dir=/var/lib/recrawl/a b")
want=$'--shard_index=12\n--num_shards=16\n--data_dir=/var/lib/recrawl/a b'
[[ $out == "$want" ]] || fail "recrawl-shard-12: got '$out', want '$want'"

out=$(POD_NAME=web-0 RECRAWL_SHARD_SERVER=$fake "$entry")
[[ $out == "--shard_index=0" ]] || fail "web-0: got '$out'"

for name in recrawl-shard recrawl-shard-x1 recrawl-shard-; do
  err=$(POD_NAME=$name RECRAWL_SHARD_SERVER=$fake "$entry" 2>&1 >/dev/null)
  status=$?
  [[ $status -eq 2 ]] || fail "$name: exit $status, want 2"
  [[ $err == *"\"$name\""* ]] || fail "$name: the error does not name the pod: $err"
done

# The real server: an ordinal at or above --num_shards is refused by it.
err=$(POD_NAME=recrawl-shard-2 RECRAWL_SHARD_SERVER=$server "$entry" --num_shards=2 \
  --data_dir="$tmp/refused" --port=0 2>&1)
status=$?
[[ $status -ne 0 ]] || fail "shard 2 of 2 started"
[[ $err == *"shard_index 2 is not below num_shards 2"* ]] || fail "shard 2 of 2: $err"

# The real server as shard 1 of 2, stopped with SIGTERM.
log=$tmp/shard.log
POD_NAME=recrawl-shard-1 RECRAWL_SHARD_SERVER=$server "$entry" --num_shards=2 \
  --data_dir="$tmp/store" --port=0 --port_file="$tmp/port" >"$log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  [[ -s $tmp/port ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -s $tmp/port ]]; then
  grep -q "serving shard 1 of 2" "$log" || fail "no 'serving shard 1 of 2' in: $(cat "$log")"
  kill -TERM "$pid"
  wait "$pid"
  status=$?
  [[ $status -eq 0 ]] || fail "after SIGTERM the server exited $status"
  grep -q "stopped" "$log" || fail "no 'stopped' after SIGTERM in: $(cat "$log")"
else
  kill -KILL "$pid" 2>/dev/null
  fail "the server did not start: $(cat "$log")"
fi

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
