#!/usr/bin/env bash
# End-to-end checks of every experiment subcommand of recrawl_sim with tiny
# settings: the markdown table on stdout, the long-form CSV (documented
# header, one row per (setting, policy)), a PNG plot, and one-line errors
# naming the flag for bad flag values.
set -uo pipefail
sim=sim/recrawl_sim
tmp=${TEST_TMPDIR:-$(mktemp -d)}
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error <substring> <args...>: non-zero exit, one stderr line naming it.
expect_error() {
  local want=$1; shift
  local err
  if err=$("$sim" "$@" 2>&1 >/dev/null); then
    fail "'$*' exited 0"
    return
  fi
  [[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || fail "'$*' error is not one line: $err"
  [[ $err == *"$want"* ]] || fail "'$*' error does not mention '$want': $err"
}

# check <experiment> <csv header> <expected CSV rows> <key columns> <args...>
# Runs the experiment with --csv/--plot and checks the three outputs. The
# first <key columns> CSV columns name a (setting, policy) pair: each must
# occur exactly once.
check() {
  local name=$1 header=$2 rows=$3 keys=$4; shift 4
  local csv=$tmp/$name.csv png=$tmp/$name.png out
  rm -f "$csv" "$png"
  if ! out=$("$sim" "$name" --reps=2 --threads=2 --seed=3 --csv="$csv" --plot="$png" "$@" 2>&1); then
    fail "$name exited non-zero: $out"
    return
  fi
  grep -q '^## ' <<<"$out" || fail "$name: no heading"
  grep -q '^|---|' <<<"$out" || fail "$name: no markdown table"
  [[ $(awk '/^\|---\|/ { rows = 1; next } rows && /^\| / { n++ } END { print n + 0 }' \
      <<<"$out") -ge 1 ]] || fail "$name: no table rows"
  grep -q '^2 repetitions, seed 3, 2 threads' <<<"$out" || fail "$name: no run footer"
  [[ -f $csv ]] || { fail "$name: no CSV"; return; }
  [[ $(head -1 "$csv") == "$header" ]] || fail "$name: CSV header '$(head -1 "$csv")'"
  python3 - "$csv" "$rows" "$keys" <<'PY' || fail "$name: CSV rows"
import csv, sys
path, rows, keys = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path) as f:
    table = list(csv.reader(f))
header, body = table[0], table[1:]
if len(body) != rows:
    sys.exit(f"{len(body)} rows, want {rows}")
if any(len(r) != len(header) for r in body):
    sys.exit("ragged rows")
if len({tuple(r[:keys]) for r in body}) != rows:
    sys.exit("a (setting, policy) pair occurs twice")
PY
  [[ -s $png ]] || { fail "$name: no plot"; return; }
  [[ $(head -c 8 "$png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "$name: plot is not a PNG"
}

grid="accuracy,stderr,wasted_share,harmonic_cost"
# 2 page counts × the paper's policies (8, 4, 7, 4; semi: 3 corruption levels × 3).
check fig3 "m,policy,$grid" $((2 * 8)) 2 --m=30,40 --horizon=5
check fig4 "m,policy,$grid" $((2 * 4)) 2 --m=30,40 --horizon=5
check fig6 "m,policy,$grid" $((2 * 7)) 2 --m=30,40 --horizon=5
check fig11 "m,policy,$grid" $((2 * 4)) 2 --m=30,40 --horizon=5
check semi "p,policy,$grid" $((3 * 3)) 2 --m=300 --horizon=3
check fig6 "m,policy,$grid" 2 2 --m=30 --horizon=5 --policies=GREEDY,GREEDY-NCIS
# shards: 2 worlds (uniform, news shard) × 2 page counts × 4 policies; plotted
# with a line per (policy, world) over m.
check shards "world,m,policy,$grid" $((2 * 2 * 4)) 3 --m=40,80 --horizon=3
# fig12: 400 times × 3 bandwidth schedules × 1 policy; key (t, schedule, R, policy).
check fig12 "t,schedule,R,policy,accuracy,stderr" $((400 * 3)) 4 --m=40 --horizon=4
check fig12 "t,schedule,R,policy,accuracy,stderr" $((400 * 3 * 2)) 4 --m=40 --horizon=4 \
  --policies=GREEDY,BASELINE
# appE: 5 crawl ratios × 2 estimators × 2 quantities.
check appE "crawl_ratio,estimator,quantity,truth,estimate,bias,stderr,abs_error,n" 20 3 \
  --horizon=2000
# learn: 2 page counts × 12 windows (whole run, last part, 10 in a row) ×
# (5 policies + 2 gaps); key (m, world, horizon, from, to, policy).
check learn "m,world,horizon,from,to,policy,accuracy,stderr" $((2 * 12 * 7)) 6 \
  --m=30,40 --horizon=5
check learn "m,world,horizon,from,to,policy,accuracy,stderr" $((2 * 12 * 2)) 6 \
  --m=300 --horizon=3 --world=fig6,semi --policies=GREEDY-NCIS,GREEDY-NCIS-LEARN-DEFAULT

for name in fig3 fig4 fig6 fig11 semi fig12 appE learn; do
  tiny=(--reps=1 --m=20 --horizon=1)
  [[ $name == appE ]] && tiny=(--reps=1 --horizon=100)
  expect_error "--reps" "$name" --reps=-1
  expect_error "--threads" "$name" --threads=0
  expect_error "--horizon" "$name" --horizon=-5
  expect_error "--csv" "$name" "${tiny[@]}" --csv=/nonexistent/dir/x.csv
  expect_error "--plot" "$name" "${tiny[@]}" --plot=/nonexistent/dir/x.png
done
expect_error "--m" fig6 --m=abc
expect_error "--m" fig12 --m=100,200
expect_error "--m" appE --m=100
expect_error "--policies" fig6 --policies=GREEDY,NOPE
expect_error "--policies" fig12 --policies=NOPE
expect_error "--policies" appE --policies=GREEDY
expect_error "--world" learn --world=mars
expect_error "--policies" learn --policies=BASELINE
expect_error "seed" fig12 --seed=abc
expect_error "command" fig13

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all experiment CLI checks passed"
