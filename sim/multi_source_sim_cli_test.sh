#!/usr/bin/env bash
# End-to-end check of multi_source_sim: a tiny run prints the table with every
# policy and writes the CSV; bad flags exit non-zero naming the flag.
set -uo pipefail
sim=sim/multi_source_sim
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

csv=${TEST_TMPDIR:-/tmp}/multi_source.csv
out=$("$sim" --m=30 --reps=2 --horizon=20 --bandwidth=5 --csv="$csv") || fail "tiny run exited non-zero"
for policy in GREEDY GREEDY-NCIS-MERGED GREEDY-NCIS-CDN-ONLY GREEDY-NCIS-SOURCES GREEDY-NCIS-SOURCES-LEARNED \
  GREEDY-NCIS-SOURCES-LEARNED-DELTA GREEDY-NCIS-SOURCES-LEARNED-FIT GREEDY-NCIS-SOURCES-LEARNED-SOURCE-FIT \
  GREEDY-NCIS-SOURCES-UNMATCHED GREEDY-NCIS-TRUSTED \
  GREEDY-NCIS-TRUSTED-LEARNED GREEDY-NCIS-TRUSTED-LEARNED-FIT GREEDY-NCIS-TRUSTED-LEARNED-RANKED-FIT; do
  [[ $out == *"| 30 | $policy |"* ]] || fail "table has no row for $policy: $out"
done
[[ $(head -1 "$csv") == "m,policy,rep,accuracy,wasted_share" ]] || fail "CSV header"
[[ $(wc -l <"$csv") -eq 27 ]] || fail "CSV should have 26 rows: $(cat "$csv")"

out=$("$sim" --m=30 --reps=1 --horizon=20 --bandwidth=5 --world=cms-noise) ||
  fail "cms-noise run exited non-zero"
[[ $out == *"| 30 | GREEDY-NCIS-TRUSTED |"* ]] || fail "cms-noise table: $out"
err=$("$sim" --world=nope --m=10 2>&1 >/dev/null) && fail "--world=nope exited 0"
[[ $err == *"--world"* ]] || fail "--world=nope error does not name the flag: $err"

out=$("$sim" --m=30 --reps=1 --horizon=20 --bandwidth=5 --policies=GREEDY,GREEDY-NCIS-SOURCES) ||
  fail "--policies run exited non-zero"
[[ $(grep -c "| 30 |" <<<"$out") -eq 3 ]] || fail "--policies: GREEDY, the reference and SOURCES: $out"
[[ $out == *"| 30 | GREEDY-NCIS-MERGED |"* ]] || fail "--policies: the reference runs: $out"
err=$("$sim" --m=10 --policies=NOPE 2>&1 >/dev/null) && fail "--policies=NOPE exited 0"
[[ $err == *"--policies"*"NOPE"* ]] || fail "--policies=NOPE error does not name the flag: $err"

err=$("$sim" --m=0 2>&1 >/dev/null) && fail "--m=0 exited 0"
[[ $err == *"--m"* ]] || fail "--m=0 error does not name the flag: $err"
err=$("$sim" --bandwidth=0 --m=10 2>&1 >/dev/null) && fail "--bandwidth=0 exited 0"
[[ $err == *"--bandwidth"* ]] || fail "--bandwidth=0 error does not name the flag: $err"

if ((failures > 0)); then exit 1; fi
echo PASS
