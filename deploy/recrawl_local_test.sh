#!/usr/bin/env bash
# deploy/recrawl_local end to end, tiny: the demo runs both policies on a
# 2-shard cluster and prints its summary (structural checks only: crawls
# happened, no more than the schedule asked for plus the coordinator's
# grace, freshness in [0, 1], the rows exist), stops its processes and
# removes its stores; SIGINT mid-run stops everything and exits 130; serve
# mode serves recrawlctl and an ingest gateway (an IndexNow POST with a key
# registered by recrawlctl) until SIGTERM; a bad flag is named.
set -uo pipefail
bin=deploy/recrawl_local
servers=(--shard_server=services/shard_server
  --coordinator_server=services/coordinator_server
  --ingest_server=ingest/ingest_server)
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# Processes whose command line names `dir` (the cluster's data dir).
left_in() { pgrep -f -- "$1" | grep -v "^$$\$" || true; }

# --- demo: 2,000 URLs, 2 shards, 24 simulated s at R = 50 (75 in the
# middle third), 10x time.
data=$tmp/demo
out=$("$bin" "${servers[@]}" --urls=2000 --shards=2 --duration=24 \
  --bandwidth=50 --time_scale=10 --fetchers=2 --data_dir="$data" \
  2>"$tmp/demo.err")
status=$?
[[ $status -eq 0 ]] || fail "demo exited $status: $(tail -5 "$tmp/demo.err")"
echo "$out"
for row in "freshness, whole run" "freshness, t 0-8 s at R = 50" \
  "freshness, t 8-16 s at R = 75" "freshness, t 16-24 s at R = 50" \
  "crawls reported (asked: 1400)" "crawls of unchanged pages" \
  "signals delivered" "crawls/s, real time" "signals/s, real time" \
  "leases/s, real time"; do
  grep -qF "| $row" <<<"$out" || fail "no row '$row'"
done
grep -qF "|  | GREEDY-NCIS | GREEDY | BASELINE |" <<<"$out" ||
  fail "no header with the three policies"
# Every freshness cell (per run and phase; per window) in [0, 1].
bad=$(awk -F'|' '/^\| freshness/ { from = 3 } /^\| [0-9.]+ \| [0-9]/ { from = 4 }
        /^\| (freshness|[0-9.]+ \| [0-9])/ {
          for (i = from; i < NF; ++i) { v = $i + 0; if (v < 0 || v > 1) print $0 } }' \
      <<<"$out")
[[ -z $bad ]] || fail "freshness outside [0, 1]: $bad"
windows=$(grep -cE '^\| [0-9.]+ \| [0-9]' <<<"$out")
[[ $windows -eq 30 ]] || fail "$windows freshness windows, want 30"
# Crawls: some, and at most what the schedule asked (1400) plus the slots
# of the coordinator's grace (0.25 s at R) and of a lease batch.
while read -r crawls; do
  [[ $crawls -gt 100 ]] || fail "only $crawls crawls"
  [[ $crawls -le 1450 ]] || fail "$crawls crawls, asked for 1400"
done < <(grep -F "| crawls reported" <<<"$out" |
  awk -F'|' '{ for (i = 3; i < NF - 1; ++i) { split($i, a, " "); print a[1] } }')
grep -qF "| reports rejected | 0 | 0 |" <<<"$out" || fail "reports rejected"
# The pinger streams the web's signals straight to the shards (the default)
# and GREEDY-NCIS's shards count some of them.
signals=$(grep -F "| signals delivered" <<<"$out" | awk -F'|' '{ split($3, a, " "); print a[1] }')
[[ ${signals:-0} -gt 0 ]] || fail "no signals delivered: '$signals'"
[[ -z $(left_in "$data") ]] || fail "processes left: $(left_in "$data")"
[[ ! -e $data/greedy_ncis && ! -e $data/greedy ]] ||
  fail "stores left without --keep_data"

# --- SIGINT in the middle of a crawl.
data=$tmp/interrupted
"$bin" "${servers[@]}" --urls=2000 --shards=2 --duration=600 --bandwidth=50 \
  --time_scale=10 --data_dir="$data" >/dev/null 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 300); do
  grep -q "crawl starts" "$tmp/int.err" && break
  sleep 0.1
done
sleep 1
kill -INT $pid
wait $pid
status=$?
[[ $status -eq 130 ]] || fail "SIGINT: exit $status, want 130: $(tail -3 "$tmp/int.err")"
[[ -z $(left_in "$data") ]] || fail "processes left after SIGINT: $(left_in "$data")"

# --- serve, recrawlctl against it, SIGTERM.
data=$tmp/serve
"$bin" serve "${servers[@]}" --urls=500 --shards=2 --data_dir="$data" \
  >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
for _ in $(seq 300); do
  grep -q "^try: " "$tmp/serve.out" && break
  sleep 0.1
done
command=$(sed -n 's|^try: bazel-bin/||p' "$tmp/serve.out")
[[ -n $command ]] || fail "serve printed no recrawlctl command: $(cat "$tmp/serve.err")"
# The coordinator's stats come from its periodic shard probes: wait for one
# that has seen the load.
for _ in $(seq 50); do
  stats=$($command 2>&1)
  status=$?
  [[ $status -ne 0 || $stats =~ all\ +500\  ]] && break
  sleep 0.1
done
[[ $status -eq 0 ]] || fail "recrawlctl against serve: $stats"
[[ $stats =~ all\ +500\  ]] || fail "recrawlctl stats does not show the 500 URLs: $stats"
# The gateway: a key registered with recrawlctl, then an IndexNow POST for
# one of the simulated web's pages.
gateway=$(sed -n 's|^ingest gateway: http://\([^ ]*\) .*|\1|p' "$tmp/serve.out")
[[ -n $gateway ]] || fail "serve printed no gateway address: $(cat "$tmp/serve.out")"
key=abcdef0123456789
out=$(client/recrawlctl --gateway="$gateway" --token_file="$data/tokens" \
  ingest keys add site0.example $key 2>&1) || fail "ingest keys add: $out"
answer=$(curl -sS --noproxy '*' -w ' %{http_code}' -X POST "http://$gateway/indexnow" \
  -H 'Content-Type: application/json' \
  -d '{"host":"site0.example","key":"'$key'","urlList":["https://site0.example/page/0"]}')
[[ $answer == *'"accepted":1'*' 200' ]] || fail "IndexNow POST: $answer"
kill -TERM $pid
wait $pid
status=$?
[[ $status -eq 130 ]] || fail "serve: exit $status after SIGTERM, want 130"
[[ -z $(left_in "$data") ]] || fail "processes left after serve: $(left_in "$data")"

# --- a bad flag is named.
err=$("$bin" --urls=0 2>&1)
[[ $? -eq 2 && $err == *"--urls"* ]] || fail "--urls=0: $err"

[[ $failures -eq 0 ]] && echo PASS
exit $((failures > 0))
