#!/usr/bin/env bash
# Runs every test: installs missing packages, then `bazel test //...`.
# Extra arguments go to bazel (e.g. --config=asan). Ends with the summary line
# "N passed, M failed" counted from the GoogleTest results of this run.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh || exit 1

bazel test //... "$@"
status=$?
tools/test_summary.sh "$@"
exit $status
