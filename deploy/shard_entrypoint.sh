#!/bin/sh
# Starts shard_server as the shard whose index is this pod's StatefulSet
# ordinal: the digits after the last '-' of the pod name (recrawl-shard-3 →
# --shard_index=3). shard_server takes its index only as a flag, so this
# derives it and execs the server (same PID: it gets the stop signals).
#
#   shard_entrypoint.sh [shard_server flags...]
#
# The pod name comes from $POD_NAME (the downward API), else the host name
# (a StatefulSet pod's host name is its pod name). $RECRAWL_SHARD_SERVER
# names the server binary (default: shard_server next to this script).
set -eu

server=${RECRAWL_SHARD_SERVER:-$(dirname "$0")/shard_server}
name=${POD_NAME:-$(uname -n)}
ordinal=${name##*-}
case $ordinal in
  '' | *[!0-9]*)
    echo "shard_entrypoint: cannot take a shard index from the pod name" \
      "\"$name\": expected <name>-<ordinal>, e.g. recrawl-shard-0" >&2
    exit 2
    ;;
esac
exec "$server" --shard_index="$ordinal" "$@"
