# Sourced by the scripts that run trine as deployed (four-process.sh,
# deployed.sh) after lib/runs.sh: `four_start LOGS SERVER_ARGS...` starts
# `trine serve --role gateway|lexical|semantic|fusion` as four OS processes on
# free loopback ports (each role's output in LOGS-ROLE.log, its pid in
# LOGS-ROLE.pid), waits until each role's own gRPC health service says SERVING
# (lexical-svc: once its document frequencies are built; the seconds each
# took from the start in LOGS-serving.txt) and sets `gateway`
# (host:port); `four_peaks` prints each role's peak resident memory (VmHWM, KiB)
# a line; `four_stop` stops them. A role that never serves stops the script.
four_pids=()
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

four_start() { # LOGS SERVER_ARGS...
  local logs=$1 server=("${@:2}")
  local lexical semantic fusion
  lexical="127.0.0.1:$(port)" semantic="127.0.0.1:$(port)" fusion="127.0.0.1:$(port)"
  gateway="127.0.0.1:$(port)"
  four_roles=()
  serve() { # ROLE ADDR [args...]
    "$trine" "${server[@]}" --log error serve --role "$1" --listen "$2" --metrics off "${@:3}" \
      >"$logs-$1.log" 2>&1 &
    four_pids+=($!)
    four_roles+=("$1 $!")
    echo $! >"$logs-$1.pid"
  }
  local began
  began="$(date +%s.%N)"
  serve lexical "$lexical"
  serve semantic "$semantic"
  serve fusion "$fusion"
  serve gateway "$gateway" --lexical-addr "http://$lexical" --semantic-addr "http://$semantic" \
    --fusion-addr "http://$fusion"
  local pair addr service
  for pair in "$lexical trine.v1.Lexical" "$semantic trine.v1.Semantic" \
    "$fusion trine.v1.Fusion" "$gateway trine.v1.Memory"; do
    read -r addr service <<<"$pair"
    for _ in $(seq 1 1500); do
      "$trine" health "$addr" --service "$service" >/dev/null 2>&1 && break
      sleep 0.2
    done
    "$trine" health "$addr" --service "$service" >/dev/null ||
      { echo "$service at $addr never served (logs: $logs-*.log)" >&2; exit 1; }
    # Seconds from the start to SERVING (the lexical role's: its postings built).
    echo "$service $(python3 -c "import sys; print(round($(date +%s.%N) - $began, 1))")" >>"$logs-serving.txt"
  done
}

four_peaks() {
  local entry role pid
  for entry in "${four_roles[@]}"; do
    read -r role pid <<<"$entry"
    awk -v role="$role" '/^VmHWM:/ {print role, $2}' "/proc/$pid/status"
  done
}

four_stop() {
  local pid
  for pid in "${four_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${four_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  four_pids=()
}
