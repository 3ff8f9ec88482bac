#!/usr/bin/env bash
# The main job: installs missing packages, builds the simulator and runs it on
# a small example (crawl values of one page under every policy, and the
# optimal continuous baselines of a 6-page example). Later work turns this
# into the local cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
bazel build -c opt //sim:recrawl_sim
sim=bazel-bin/sim/recrawl_sim

echo "Crawl value of a page (μ̃=0.01, Δ=1/day, λ=0.5, ν=0.3) 2 days after its"
echo "last crawl, with 1 signal since, under each policy:"
for p in greedy greedy_cis greedy_ncis approx1 approx2; do
  printf '  %-12s V = %s\n' "$p" "$("$sim" value --policy=$p --importance=0.01 \
    --change_rate=1 --recall=0.5 --false_rate=0.3 --tau=2 --cis_count=1)"
done
echo
for solver in baseline baseline_ncis azar2 lambdacrawl; do
  echo "Optimal continuous policy ($solver) for sim/examples/pages.csv at R = 2:"
  "$sim" solve --solver=$solver --bandwidth=2 --pages=sim/examples/pages.csv
  echo
done
