#!/usr/bin/env bash
# Builds a request-handler fuzz target as a libFuzzer binary with clang, and
# optionally runs it:
#
#   shard/build_fuzzer.sh                      # build only
#   shard/build_fuzzer.sh -max_total_time=60   # build, then fuzz for 60 s
#
# FUZZ_TARGET picks the target: //shard:shard_fuzz_target (the default, the
# shard core's handlers; binary shard_fuzzer) or
# //services:coordinator_fuzz_target (the coordinator's handlers over an
# in-process cluster; binary coordinator_fuzzer) or
# //ingest:indexnow_fuzz_target (the gateway's IndexNow and CDN purge
# parsing and key cache; binary indexnow_fuzzer) or
# //ingest/feeds:feeds_fuzz_target (sitemap parsing and polling, gzip, Atom
# and RSS links, WebSub deliveries; binary feeds_fuzzer).
#
# Outside Bazel on purpose: pointing Bazel's auto-configured C++ toolchain at
# clang would re-fetch it and rebuild the whole tree for every other config
# in this shared workspace. Bazel still lists the sources (so this follows
# the BUILD files) and generates the protobuf code; clang compiles them all
# with coverage instrumentation, ASan and UBSan, and links Debian's
# libraries as the BUILD files do.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${FUZZ_TARGET:-//shard:shard_fuzz_target}
name=${target##*:}
name=${name%_target}er
out=${FUZZ_OUT:-${TMPDIR:-/tmp}/recrawl_$name}
# The objects; FUZZ_OBJ lets several targets share them (same flags), when
# Bazel has generated every target's protobuf code before the first build.
obj=${FUZZ_OBJ:-$out/obj}
mkdir -p "$obj" "$out/corpus"

bazel build "$target" >/dev/null  # generated protobuf code
srcs=$(bazel query "kind('source file', deps($target))" 2>/dev/null |
       grep -E '^//(cluster|client|shard|policy|proto|coordinator|services|ingest)[^:]*:.*\.cc$' |
       sed 's|^//||; s|:|/|')
gen=$(bazel query "kind('generated file', deps($target))" 2>/dev/null |
      grep -E '\.pb\.cc$' | sed 's|^//|bazel-bin/|; s|:|/|')
absl=$(grep -o -- '-labsl_[a-z0-9_]*' third_party/BUILD.bazel | tr '\n' ' ')

flags=(-std=c++17 -O1 -g -I. -Ibazel-bin -I/usr/include/libxml2 -fno-omit-frame-pointer
       -DSPDLOG_SHARED_LIB -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL
       -fsanitize=fuzzer-no-link,address,undefined)
# An object is rebuilt when its source or any header of the tree is newer
# (no per-file header tracking: a header change rebuilds everything).
if [[ ! -f "$obj/stamp" ]] ||
   [[ -n "$(find -L cluster client shard policy proto coordinator services ingest \
              bazel-bin/proto bazel-bin/shard bazel-bin/ingest \
              -name '*.h' -newer "$obj/stamp" -print -quit)" ]]; then
  rm -f "$obj"/*.o
fi
touch "$obj/stamp"
compile() {
  local src=$1 o="$obj/$(echo "$1" | tr '/' '_').o"
  if [[ ! -f "$o" || "$src" -nt "$o" ]]; then
    clang++ "${flags[@]}" -c "$src" -o "$o"
  fi
  echo "$o"
}
export -f compile
export obj
export flags_str="${flags[*]}"
objs=$(printf '%s\n' $srcs $gen |
       xargs -P "$(nproc)" -I{} bash -c 'flags=($flags_str); compile {}')
clang++ -fsanitize=fuzzer,address,undefined $objs -o "$out/$name" \
  -l:librocksdb.a -lgflags -lsnappy -lz -lbz2 -llz4 -lzstd -ldl \
  -lgrpc++ -lgrpc -lgpr -lprotobuf $absl -lspdlog -lfmt \
  -lprometheus-cpp-pull -lprometheus-cpp-core -lpsl -lxml2 -lcurl -lssl -lcrypto -lpthread
echo "built $out/$name" >&2

if [[ $# -gt 0 ]]; then
  "$out/$name" "$out/corpus" "$@"
fi
