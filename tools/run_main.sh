#!/usr/bin/env bash
# The main job: installs missing packages, builds the servers and the
# recrawl_local binary (-c opt), and runs its demo: a local cluster of 4
# shard_server processes and a coordinator_server on loopback (stores under
# ./data), a simulated web of 100,000 URLs crawled in scaled time by
# GREEDY-NCIS, then by GREEDY on a fresh cluster, against the analytic
# BASELINE; bandwidth R -> 1.5R -> R at thirds. 3-4 minutes on 2 cores.
# Extra arguments go to recrawl_local (e.g. --urls=1000000, --duration=60;
# --help lists them). Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
bazel build -c opt //deploy:recrawl_local //services:shard_server \
  //services:coordinator_server //client:recrawlctl
exec bazel-bin/deploy/recrawl_local demo "$@"
