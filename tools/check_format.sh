#!/usr/bin/env bash
# Checks that every C++ source is formatted as .clang-format says (exit 1
# and the files' names otherwise). Fix with:
#   git ls-files '*.cc' '*.h' | grep -v '^third_party/' | xargs clang-format-14 -i
set -uo pipefail
cd "$(dirname "$0")/.."
bad=()
while IFS= read -r f; do
  if ! clang-format-14 --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done < <(git ls-files '*.cc' '*.h' | grep -v '^third_party/')
if [[ ${#bad[@]} -gt 0 ]]; then
  printf 'not formatted: %s\n' "${bad[@]}"
  exit 1
fi
echo "all C++ sources formatted"
