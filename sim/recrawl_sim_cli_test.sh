#!/usr/bin/env bash
# End-to-end checks of the recrawl_sim command line: outputs, exit codes, and
# one-line errors that name the offending flag.
set -uo pipefail
sim=sim/recrawl_sim
pages=sim/examples/pages.csv
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

page=(--importance=0.01 --change_rate=1 --recall=0.5 --false_rate=0.3 --tau=2)

# Values: 17 significant digits, GREEDY ignores signals, signals raise NCIS.
greedy0=$("$sim" value --policy=greedy "${page[@]}" --cis_count=0) || fail "greedy"
greedy3=$("$sim" value --policy=greedy "${page[@]}" --cis_count=3) || fail "greedy"
[[ $greedy0 == "$greedy3" ]] || fail "greedy depends on cis_count: $greedy0 vs $greedy3"
[[ $greedy0 =~ ^[0-9]\.[0-9]{16}e-03$ || $greedy0 =~ ^0\.00[0-9]{17}$ ]] ||
  fail "greedy value not printed with 17 significant digits: $greedy0"
ncis0=$("$sim" value --policy=greedy_ncis "${page[@]}" --cis_count=0)
ncis1=$("$sim" value --policy=greedy_ncis "${page[@]}" --cis_count=1)
python3 -c "import sys; a,b=map(float,sys.argv[1:]); sys.exit(0 if b > a else 1)" \
  "$ncis0" "$ncis1" || fail "a signal did not raise the NCIS value ($ncis0, $ncis1)"
for p in greedy_cis approx1 approx2; do
  "$sim" value --policy=$p "${page[@]}" >/dev/null || fail "policy $p"
done

expect_error "--recall" value --policy=greedy_ncis --importance=1 --change_rate=1 --recall=2 --tau=1
expect_error "--importance" value --importance=-1 --change_rate=1 --tau=1
expect_error "--change_rate" value --importance=1 --change_rate=nan --tau=1
expect_error "--tau" value --importance=1 --change_rate=1
expect_error "tau" value --importance=1 --change_rate=1 --tau=abc
expect_error "--tau" value --importance=1 --change_rate=1 --tau=-1
expect_error "--cis_count" value --importance=1 --change_rate=1 --tau=1 --cis_count=-2
expect_error "--policy" value --policy=fancy --importance=1 --change_rate=1 --tau=1
expect_error "command" frobnicate

# Solvers: header, one row per page, objective line, Σ rates = R.
for solver in baseline baseline_ncis azar2 lambdacrawl_incompl; do
  out=$("$sim" solve --solver=$solver --bandwidth=2 --pages=$pages) || { fail "$solver"; continue; }
  [[ $(head -1 <<<"$out") == "index,rate,probability" ]] || fail "$solver header"
  [[ $(grep -c '^[0-9]' <<<"$out") -eq 6 ]] || fail "$solver rows"
  grep -q '^# objective=' <<<"$out" || fail "$solver objective"
  python3 - "$out" <<'PY' || fail "$solver rates do not sum to R"
import sys
rows = [l.split(",") for l in sys.argv[1].splitlines() if l[:1].isdigit()]
total = sum(float(r[1]) for r in rows)
sys.exit(0 if abs(total - 2.0) <= 1e-9 * 2.0 else 1)
PY
done
out=$("$sim" solve --solver=lambdacrawl --bandwidth=2 --pages=$pages) || fail lambdacrawl
# Rows 3 and 4 of the example have complete observations: probabilities.
[[ $(sed -n 5p <<<"$out") =~ ^3,,[0-9.e-]+$ ]] || fail "lambdacrawl complete page row: $(sed -n 5p <<<"$out")"
[[ $(sed -n 2p <<<"$out") =~ ^0,[0-9.e-]+,$ ]] || fail "lambdacrawl incomplete page row"
out=$("$sim" solve --solver=lambdacrawl_compl --bandwidth=1 --pages=$pages) || fail lambdacrawl_compl
[[ $(grep -c '^[0-9]*,,' <<<"$out") -eq 6 ]] || fail "lambdacrawl_compl gives probabilities"

expect_error "--solver" solve --solver=magic --bandwidth=1 --pages=$pages
expect_error "--bandwidth" solve --solver=baseline --bandwidth=0 --pages=$pages
expect_error "--bandwidth" solve --solver=baseline --pages=$pages
expect_error "--pages" solve --solver=baseline --bandwidth=1 --pages=/nonexistent.csv

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all recrawl_sim CLI checks passed"
