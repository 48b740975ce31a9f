#!/usr/bin/env bash
# The proxy benchmark (docs/performance.md): the same load, in one
# run, straight to the origin ("direct"), through a minimal net/http/httputil
# forward proxy ("httputil"), through Squid (a caching forward proxy with a
# memory cache) and through `courtesy proxy` with its politeness gate open.
#
#   bench/proxy/run.sh
#   DURATION=4s PEERS="direct httputil squid" bench/proxy/run.sh
#
# Scenarios (each peer in turn, scenario by scenario, so that changes in the
# machine's load touch every peer alike):
#   miss-1c          cache misses, 1 client, 1 host: added latency p50/p99
#   miss-64c-1host   cache misses, 64 clients, one host: throughput
#   miss-64c-1000h   cache misses, 64 clients, 1,000 hosts: throughput
#   hit-64c          cache hits (1,000 URLs on 10 hosts, warmed), 64 clients:
#                    throughput and proxy CPU per 10,000 hits
#
# Environment (defaults in brackets):
#   DURATION [8s]       timed phase of each scenario
#   PEERS ["direct httputil squid courtesy"]
#   COURTESY_PROXY_ARGS []  extra flags for `courtesy proxy`
#   SQUID_CACHE_MEM [1024]  Squid's cache_mem in MB. The miss scenarios store
#                       ~100,000 1 KiB objects (each takes at least a 4 KB
#                       page in Squid's memory cache); with 256 MB the cache
#                       overflows and Squid's hits cost 3-4x the CPU.
#   KEEP [0]            1: keep the work directory (configs, logs, JSON)
#
# The origin is bench/proxy/origin (1 KiB cacheable pages, any path, any
# host, counts the requests it serves), so a miss is a cacheable response the
# proxies store. Squid is Debian's `squid`, installed here if missing.
# Neither Squid nor courtesy writes a per-request log line here (Squid:
# access_log none; courtesy: --log-level warn). Everything listens on
# 127.0.0.1. bench/proxy/run-driver.sh is an earlier, shorter variant.
set -euo pipefail

DURATION=${DURATION:-8s}
PEERS=${PEERS:-direct httputil squid courtesy}
COURTESY_PROXY_ARGS=${COURTESY_PROXY_ARGS:-}
KEEP=${KEEP:-0}

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/courtesy-proxybench.XXXXXX")
BIN=$WORK/bin
PIDS=()

log() { echo "proxy-bench: $*" >&2; }

cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	if [[ $KEEP == 1 ]]; then
		echo "work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

# free_port: a loopback TCP port nobody listens on now.
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	log "no free port found"
	exit 1
}

# wait_port PORT PID NAME: until something accepts on PORT (30 s at most).
wait_port() {
	for _ in $(seq 1 300); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$2" 2>/dev/null; then
			log "$3 exited before listening"
			return 1
		fi
		sleep 0.1
	done
	log "$3 did not listen on $1 within 30 s"
	return 1
}

if [[ " $PEERS " == *" squid "* ]] && ! command -v squid >/dev/null; then
	log "installing squid (Debian package)"
	if ! apt-get install -y squid >"$WORK/apt.log" 2>&1; then
		apt-get update >>"$WORK/apt.log" 2>&1
		apt-get install -y squid >>"$WORK/apt.log" 2>&1 || {
			cat "$WORK/apt.log" >&2
			exit 1
		}
	fi
fi

log "building into $BIN"
mkdir -p "$BIN"
(cd "$ROOT" && for p in origin httputilproxy load; do
	go build -o "$BIN/$p" "./bench/proxy/$p"
done && go build -o "$BIN/courtesy" ./cmd/courtesy)

# The origin.
OPORT=$(free_port)
ORIGIN=127.0.0.1:$OPORT
"$BIN/origin" -listen "$ORIGIN" -bytes 1024 >"$WORK/origin.out" 2>&1 &
PIDS+=($!)
wait_port "$OPORT" $! origin

declare -A PROXY PID

start_httputil() {
	local port
	port=$(free_port)
	"$BIN/httputilproxy" -listen "127.0.0.1:$port" -resolve "*.test=$ORIGIN" >"$WORK/httputil.out" 2>&1 &
	PIDS+=($!)
	wait_port "$port" $! httputil || return 1
	PROXY[httputil]=http://127.0.0.1:$port
	PID[httputil]=$!
}

start_squid() {
	local port dir=$WORK/squid
	port=$(free_port)
	mkdir -p "$dir"
	chmod 0755 "$WORK" # squid runs as user proxy and must reach its files
	# Squid resolves the benchmark's names through its own hosts file.
	for i in $(seq 0 999); do printf '127.0.0.1 site-%04d.test\n' "$i"; done >"$dir/hosts"
	cat >"$dir/squid.conf" <<CONF
# Caching forward proxy, memory cache only (no cache_dir), loopback only.
http_port 127.0.0.1:$port
acl bench src 127.0.0.0/8
http_access allow bench
http_access deny all
cache_mem ${SQUID_CACHE_MEM:-1024} MB
maximum_object_size_in_memory 1 MB
memory_cache_mode always
store_avg_object_size 1 KB
refresh_pattern . 0 20% 4320
hosts_file $dir/hosts
dns_nameservers 127.0.0.1
max_filedescriptors 16384
workers 1
pid_filename $dir/squid.pid
cache_log $dir/cache.log
access_log none
cache_store_log none
netdb_filename none
pinger_enable off
coredump_dir $dir
shutdown_lifetime 1 seconds
cache_effective_user proxy
CONF
	chown -R proxy "$dir" 2>/dev/null || chmod -R a+rwX "$dir"
	squid -N -f "$dir/squid.conf" >"$WORK/squid.out" 2>&1 &
	PIDS+=($!)
	wait_port "$port" $! squid || {
		tail -n 20 "$dir/cache.log" "$WORK/squid.out" >&2 || true
		return 1
	}
	PROXY[squid]=http://127.0.0.1:$port
	PID[squid]=$!
}

start_courtesy() {
	if "$BIN/courtesy" proxy -h 2>&1 | grep -q 'Not built yet'; then
		log "courtesy proxy is not built yet: skipped"
		return 1
	fi
	local port
	port=$(free_port)
	# The gate open: no delay (--default-delay 0), up to 1024 requests in
	# flight per host (the most politeness.max-in-flight allows), queues
	# large enough for 64 clients.
	cat >"$WORK/courtesy.yaml" <<CONF
politeness:
  max-in-flight: 1024
proxy:
  max-queue-per-host: 100000
  max-queue: 100000
CONF
	# shellcheck disable=SC2086 # COURTESY_PROXY_ARGS is a list of flags
	"$BIN/courtesy" proxy --listen "127.0.0.1:$port" --data "$WORK/courtesy-data" \
		--config "$WORK/courtesy.yaml" --allow-private --resolve "*.test=$ORIGIN" \
		--default-delay 0 --log-level warn $COURTESY_PROXY_ARGS >"$WORK/courtesy.out" 2>&1 &
	PIDS+=($!)
	wait_port "$port" $! courtesy || {
		tail -n 20 "$WORK/courtesy.out" >&2
		return 1
	}
	PROXY[courtesy]=http://127.0.0.1:$port
	PID[courtesy]=$!
}

RUN=()
for p in $PEERS; do
	case $p in
	direct) RUN+=(direct) ;;
	httputil | squid | courtesy)
		if "start_$p"; then RUN+=("$p"); else log "$p not run"; fi
		;;
	*) log "unknown peer $p" ;;
	esac
done
log "origin $ORIGIN; peers: ${RUN[*]}; load $(cut -d' ' -f1-3 /proc/loadavg)"

SCENARIOS=(
	"miss-1c -mode miss -clients 1 -hosts 1"
	"miss-64c-1host -mode miss -clients 64 -hosts 1"
	"miss-64c-1000h -mode miss -clients 64 -hosts 1000"
	"hit-64c -mode hit -clients 64 -hosts 10 -hit-urls 1000"
)
OUT=$WORK/results.jsonl
for s in "${SCENARIOS[@]}"; do
	read -r name args <<<"$s"
	for p in "${RUN[@]}"; do
		log "$name via $p"
		extra=()
		if [[ $p != direct ]]; then
			extra=(-proxy "${PROXY[$p]}" -pid "${PID[$p]}")
		fi
		# shellcheck disable=SC2086 # args is a list of flags
		"$BIN/load" -peer "$p" -scenario "$name" -origin "$ORIGIN" -duration "$DURATION" \
			"${extra[@]}" $args -o "$OUT" || log "$name via $p failed"
	done
done

echo
echo "Proxy benchmark $(date -u +%Y-%m-%dT%H:%MZ): origin bench/proxy/origin (1 KiB pages), $DURATION per scenario," \
	"$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/load" table "$OUT"
