# Sourced by the shell tests that start servers with --port=0 --port_file=F.
#
# server_ports F: waits up to 30 s for a server's port file and prints its
# line, "<grpc port> <metrics port>"; returns 1 if it does not appear.
server_ports() {
  for _ in $(seq 300); do
    [[ -s $1 ]] && { cat "$1"; return 0; }
    sleep 0.1
  done
  return 1
}
