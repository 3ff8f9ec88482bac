#!/usr/bin/env bash
# Builds the shard's request-handler fuzz target (shard/shard_fuzz_target.cc)
# as a libFuzzer binary with clang, and optionally runs it:
#
#   shard/build_fuzzer.sh                      # build only
#   shard/build_fuzzer.sh -max_total_time=60   # build, then fuzz for 60 s
#
# Outside Bazel on purpose: pointing Bazel's auto-configured C++ toolchain at
# clang would re-fetch it and rebuild the whole tree for every other config
# in this shared workspace. Bazel still lists the sources (so this follows
# the BUILD files) and generates the protobuf code; clang compiles them all
# with coverage instrumentation, ASan and UBSan, and links Debian's
# libraries as the BUILD files do.
set -euo pipefail
cd "$(dirname "$0")/.."
target=//shard:shard_fuzz_target
out=${FUZZ_OUT:-${TMPDIR:-/tmp}/recrawl_shard_fuzzer}
mkdir -p "$out/obj" "$out/corpus"

bazel build "$target" >/dev/null  # generated protobuf code
srcs=$(bazel query "kind('source file', deps($target))" 2>/dev/null |
       grep -E '^//(shard|policy|proto)[^:]*:.*\.cc$' | sed 's|^//||; s|:|/|')
gen=$(bazel query "kind('generated file', deps($target))" 2>/dev/null |
      grep -E '\.pb\.cc$' | sed 's|^//|bazel-bin/|; s|:|/|')
absl=$(grep -o -- '-labsl_[a-z0-9_]*' third_party/BUILD.bazel | tr '\n' ' ')

flags=(-std=c++17 -O1 -g -I. -Ibazel-bin -fno-omit-frame-pointer
       -fsanitize=fuzzer-no-link,address,undefined)
# An object is rebuilt when its source or any header of the tree is newer
# (no per-file header tracking: a header change rebuilds everything).
if [[ ! -f "$out/stamp" ]] ||
   [[ -n "$(find -L shard policy proto bazel-bin/proto bazel-bin/shard \
              -name '*.h' -newer "$out/stamp" -print -quit)" ]]; then
  rm -f "$out"/obj/*.o
fi
touch "$out/stamp"
compile() {
  local src=$1 obj="$out/obj/$(echo "$1" | tr '/' '_').o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" ]]; then
    clang++ "${flags[@]}" -c "$src" -o "$obj"
  fi
  echo "$obj"
}
export -f compile
export out
export flags_str="${flags[*]}"
objs=$(printf '%s\n' $srcs $gen |
       xargs -P "$(nproc)" -I{} bash -c 'flags=($flags_str); compile {}')
clang++ -fsanitize=fuzzer,address,undefined $objs -o "$out/shard_fuzzer" \
  -l:librocksdb.a -lgflags -lsnappy -lz -lbz2 -llz4 -lzstd -ldl \
  -lgrpc++ -lgrpc -lgpr -lprotobuf $absl -lpthread
echo "built $out/shard_fuzzer" >&2

if [[ $# -gt 0 ]]; then
  "$out/shard_fuzzer" "$out/corpus" "$@"
fi
