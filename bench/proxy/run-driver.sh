#!/usr/bin/env bash
# Proxy benchmark (docs/performance.md): one run on loopback
# comparing a direct request, a minimal net/http/httputil forward proxy,
# Squid (Debian package, configured here as a caching forward proxy with a
# memory cache) and courtesy proxy (gate open: no delay, 1024 in flight per
# host). Prints a Markdown table and the raw JSON lines.
#
#   bench/proxy/run-driver.sh          # defaults (the full benchmark is bench/proxy/run.sh)
#   LAT_N=5000 DURATION=5s bench/proxy/run-driver.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

LAT_N=${LAT_N:-5000}       # timed requests of the 1-client latency runs
DURATION=${DURATION:-5s}   # length of each throughput run
CLIENTS=${CLIENTS:-64}
HOSTS=${HOSTS:-1000}

if ! command -v squid >/dev/null; then
  echo "installing squid (Debian package)" >&2
  if [ "$(id -u)" = 0 ]; then apt-get install -y --no-install-recommends squid >&2
  else sudo apt-get install -y --no-install-recommends squid >&2; fi
fi

work=$(mktemp -d /tmp/courtesy-bench.XXXXXX)
chmod 777 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/courtesy" ./cmd/courtesy
go build -o "$work/driver" ./bench/proxy/driver

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; return 1; }

ORIGIN_PORT=$(free_port); "$work/driver" origin -listen "127.0.0.1:$ORIGIN_PORT" >/dev/null & pids+=($!); wait_port "$ORIGIN_PORT"
HU_PORT=$(free_port); "$work/driver" httputil -listen "127.0.0.1:$HU_PORT" -origin "127.0.0.1:$ORIGIN_PORT" >/dev/null & pids+=($!); wait_port "$HU_PORT"

# courtesy: the gate open (no delay, many in flight per host), logs at warn
# (Squid's access log is off too), the cache on.
CT_PORT=$(free_port)
cat > "$work/courtesy.yaml" <<EOF
politeness:
  max-in-flight: 1024
proxy:
  allow-private: true
  max-queue-per-host: 100000
  max-queue: 100000
EOF
"$work/courtesy" proxy --listen "127.0.0.1:$CT_PORT" --data "$work/ct-data" --config "$work/courtesy.yaml" \
  --default-delay 0 --resolve "*.bench=127.0.0.1:$ORIGIN_PORT" --log-level warn >/dev/null 2>"$work/courtesy.log" &
CT_PID=$!; pids+=($CT_PID); wait_port "$CT_PORT"

# Squid: memory cache only, no access log, names from a hosts file.
SQ_PORT=$(free_port)
for i in $(seq 0 $((HOSTS - 1))); do echo "127.0.0.1 h$i.bench"; done > "$work/hosts"
cat > "$work/squid.conf" <<EOF
http_port 127.0.0.1:$SQ_PORT
acl localnet src 127.0.0.0/8
acl bench_ports port $ORIGIN_PORT
acl Safe_ports port 80 443 $ORIGIN_PORT
http_access deny !Safe_ports
http_access allow localnet
http_access deny all
cache_mem 256 MB
maximum_object_size_in_memory 64 KB
memory_replacement_policy lru
access_log none
cache_store_log none
cache_log $work/squid-cache.log
pid_filename $work/squid.pid
coredump_dir $work
hosts_file $work/hosts
visible_hostname courtesy-bench
shutdown_lifetime 1 seconds
workers 1
EOF
squid -N -f "$work/squid.conf" & SQ_PID=$!; pids+=($SQ_PID); wait_port "$SQ_PORT"

run() { "$work/driver" load -origin "127.0.0.1:$ORIGIN_PORT" -port "$ORIGIN_PORT" "$@"; }
declare -A PROXY=([direct]="" [httputil]="http://127.0.0.1:$HU_PORT" [squid]="http://127.0.0.1:$SQ_PORT" [courtesy]="http://127.0.0.1:$CT_PORT")
declare -A PID=([direct]=0 [httputil]=0 [squid]=$SQ_PID [courtesy]=$CT_PID)
names=(direct httputil squid courtesy)
out="$work/results.jsonl"
for n in "${names[@]}"; do
  px=${PROXY[$n]}
  run -name "$n/latency-miss-1" -proxy "$px" -clients 1 -requests "$LAT_N" -path miss >> "$out"
  run -name "$n/miss-64-1host" -proxy "$px" -clients "$CLIENTS" -duration "$DURATION" -path miss -pid "${PID[$n]}" >> "$out"
  run -name "$n/miss-64-${HOSTS}hosts" -proxy "$px" -clients "$CLIENTS" -duration "$DURATION" -hosts "$HOSTS" -path miss -pid "${PID[$n]}" >> "$out"
  run -name "$n/hit-64" -proxy "$px" -clients "$CLIENTS" -duration "$DURATION" -path hit -pid "${PID[$n]}" >> "$out"
done

python3 - "$out" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {r["name"]: r for r in rows}
names = ["direct", "httputil", "squid", "courtesy"]
base = by["direct/latency-miss-1"]
print("| | direct | httputil | squid | courtesy |")
print("| --- | --- | --- | --- | --- |")
def row(label, f):
    print("| " + label + " | " + " | ".join(f(n) for n in names) + " |")
row("miss p50, 1 client (µs)", lambda n: "%.0f" % by[n + "/latency-miss-1"]["p50_us"])
row("miss p99, 1 client (µs)", lambda n: "%.0f" % by[n + "/latency-miss-1"]["p99_us"])
row("added p50 / p99 (µs)", lambda n: "%+.0f / %+.0f" % (by[n + "/latency-miss-1"]["p50_us"] - base["p50_us"], by[n + "/latency-miss-1"]["p99_us"] - base["p99_us"]))
for k, label in [("miss-64-1host", "miss req/s, 64 clients, 1 host"), ("miss-64-", "miss req/s, 64 clients, many hosts"), ("hit-64", "hit req/s, 64 clients")]:
    def f(n, k=k):
        r = [v for name, v in by.items() if name.startswith(n + "/" + k) and (k != "miss-64-" or "hosts" in name)][0]
        return "%.0f%s" % (r["rps"], " (%d err)" % r["errors"] if r["errors"] else "")
    row(label, f)
row("proxy CPU s per 10k hits", lambda n: ("%.2f" % by[n + "/hit-64"]["cpu_per_10k_s"]) if by[n + "/hit-64"].get("cpu_per_10k_s") else "—")
row("proxy CPU s per 10k misses (1 host)", lambda n: ("%.2f" % by[n + "/miss-64-1host"]["cpu_per_10k_s"]) if by[n + "/miss-64-1host"].get("cpu_per_10k_s") else "—")
print()
for r in rows:
    print(json.dumps(r))
EOF
