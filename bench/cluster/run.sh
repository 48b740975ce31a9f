#!/usr/bin/env bash
# The cluster benchmark (docs/performance.md, "Cluster benchmark"): the same
# I/O-bound crawl of the synthetic web (every response waits LATENCY before
# its header) run by 1, 2 and 3 crawl nodes sharing one frontier on a local
# 6-process Redis Cluster, and once by `courtesy crawl` with its embedded
# frontier; the table gives pages/s and its ratio to one node, the nodes'
# CPU per page against the embedded frontier's, Redis commands, scripts,
# round trips and bytes per page, and the politeness of every run.
#
#   bench/cluster/run.sh                              # 1,000 sites x 60 pages, 60 s a run
#   SITES=200 PAGES=20 DURATION=20s bench/cluster/run.sh   # a quick run
#   NODES="1 3" EMBEDDED=0 bench/cluster/run.sh       # some runs only
#
# Environment (defaults in brackets):
#   SITES [1000], PAGES [60]  the testweb size (--plain --profile plain)
#   LATENCY [100ms-300ms]     testweb --latency: each response's wait
#   DELAY [200ms]             per-host delay of every crawler
#   WORKERS [64]              --workers of every node and of the embedded run
#   DURATION [60s]            --max-duration of every node (the crawl is
#                             sized not to finish before it)
#   NODES ["1 2 3"]           the cluster runs, by number of crawl nodes;
#                             the first is the baseline of the scaling ratio
#   EMBEDDED [1]              1: also run the embedded frontier (CPU baseline)
#   NODE_ARGS []              extra flags for every cluster node
#   BASE_PORT [random]        first Redis port (6 ports and their +10000 bus
#                             ports must be free)
#   TIMEOUT [5m]              kill a node still running after this long
#   KEEP [0]                  1: keep the work directory
#
# Every run gets a fresh testweb process with a request log, which
# `courtesy testweb report` turns into the page count and the politeness
# checks. Before each cluster run the benchmark empties the cluster
# (FLUSHALL on the masters: the politeness gate and the robots.txt cache
# are shared by all crawls) and resets the servers' counters; each run
# uses a fresh --crawl-id. Nothing leaves 127.0.0.1.
set -euo pipefail

SITES=${SITES:-1000}
PAGES=${PAGES:-60}
LATENCY=${LATENCY:-100ms-300ms}
DELAY=${DELAY:-200ms}
WORKERS=${WORKERS:-64}
DURATION=${DURATION:-60s}
NODES=${NODES:-1 2 3}
EMBEDDED=${EMBEDDED:-1}
NODE_ARGS=${NODE_ARGS:-}
TIMEOUT=${TIMEOUT:-5m}
KEEP=${KEEP:-0}

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/courtesy-clusterbench.XXXXXX")
BIN=$WORK/bin
TW_PID=
NODE_PIDS=()
CLUSTER_UP=0

log() { echo "cluster-bench: $*" >&2; }

cleanup() {
	for p in "${NODE_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	if [[ -n $TW_PID ]]; then
		kill "$TW_PID" 2>/dev/null || true
		wait "$TW_PID" 2>/dev/null || true
	fi
	if [[ $CLUSTER_UP == 1 ]]; then
		"$ROOT/scripts/redis-cluster" stop "$WORK/redis" || true
	fi
	if [[ $KEEP == 1 ]]; then
		echo "work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

command -v redis-server >/dev/null || { log "redis-server not found (scripts/install-test-deps)"; exit 1; }

log "building into $BIN"
mkdir -p "$BIN"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN/courtesy" ./cmd/courtesy &&
	CGO_ENABLED=0 go build -o "$BIN/measure" ./bench/measure &&
	CGO_ENABLED=0 go build -o "$BIN/clustertable" ./bench/cluster/table)

GEN=(--plain --sites "$SITES" --pages-per-site "$PAGES" --profile plain)
"$BIN/courtesy" testweb hosts "${GEN[@]}" |
	awk '!/^#/ { for (i = 2; i <= NF; i++) print "http://" $i "/" }' >"$WORK/seeds.txt"
log "$(wc -l <"$WORK/seeds.txt") seeds, $PAGES pages each, latency $LATENCY, delay $DELAY, $WORKERS workers a node, $DURATION a run"

# port_free PORT: nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_base: a base port whose 6 ports and bus ports (+10000) are free.
pick_base() {
	local b ok i
	for _ in $(seq 1 50); do
		b=$((20000 + RANDOM % 20000))
		ok=1
		for i in 0 1 2 3 4 5; do
			port_free $((b + i)) && port_free $((b + i + 10000)) || ok=0
		done
		[[ $ok == 1 ]] && echo "$b" && return 0
	done
	return 1
}

# The cluster. Ports found free may be taken by another program before
# redis-server binds them: with a chosen BASE_PORT, try another (3 tries).
CLUSTER_UP=1
ADDRS=
if [[ -n ${BASE_PORT:-} ]]; then
	ADDRS=$("$ROOT/scripts/redis-cluster" start "$WORK/redis" "$BASE_PORT")
else
	for try in 1 2 3; do
		BASE_PORT=$(pick_base) || { log "no 6 free ports found"; exit 1; }
		if ADDRS=$("$ROOT/scripts/redis-cluster" start "$WORK/redis" "$BASE_PORT"); then
			break
		fi
		log "Redis Cluster on $BASE_PORT did not start (try $try of 3)"
		"$ROOT/scripts/redis-cluster" stop "$WORK/redis" 2>/dev/null || true
		rm -rf "$WORK/redis"
		ADDRS=
	done
	[[ -n $ADDRS ]] || { log "no Redis Cluster could be started"; exit 1; }
fi
PORTS=()
for i in 0 1 2 3 4 5; do PORTS+=($((BASE_PORT + i))); done
log "Redis Cluster on $ADDRS"

rcli() { redis-cli -h 127.0.0.1 -p "$@"; }

masters() {
	for p in "${PORTS[@]}"; do
		if [[ $(rcli "$p" role | head -n 1) == master ]]; then
			echo "$p"
		fi
	done
}

# snapshot NAME WHEN: every server's INFO into NAME.redis/WHEN/PORT.info.
snapshot() {
	mkdir -p "$WORK/$1.redis/$2"
	for p in "${PORTS[@]}"; do
		rcli "$p" info everything >"$WORK/$1.redis/$2/$p.info"
	done
}

# start_testweb NAME: serve the web with a request log NAME.log; sets ADDR.
start_testweb() {
	local out=$WORK/$1.testweb.out
	# Under measure too: its CPU is part of what the machine must give
	# (measure passes SIGTERM on to it).
	"$BIN/measure" -o "$WORK/$1.testweb.measure.json" -label "$1-testweb" -- \
		"$BIN/courtesy" testweb "${GEN[@]}" --latency "$LATENCY" --listen 127.0.0.1:0 --log "$WORK/$1.log" >"$out" 2>&1 &
	TW_PID=$!
	ADDR=
	for _ in $(seq 1 300); do
		ADDR=$(sed -n 's#^testweb: serving .* on http://\([0-9.:]*\).*#\1#p' "$out")
		[[ -n $ADDR ]] && return 0
		kill -0 "$TW_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$out" >&2
	log "testweb did not start"
	exit 1
}

# stop_testweb NAME: stop the server (flushing its log) and judge the crawl.
stop_testweb() {
	kill "$TW_PID"
	wait "$TW_PID" 2>/dev/null || true
	TW_PID=
	"$BIN/courtesy" testweb report "${GEN[@]}" --min-delay "$DELAY" --json "$WORK/$1.log" >"$WORK/$1.report.json"
	[[ $KEEP == 1 ]] || rm -f "$WORK/$1.log"
}

# crawl NAME I [FLAGS]: node I of run NAME under measure, in the background.
crawl() {
	local name=$1 i=$2
	shift 2
	"$BIN/measure" -o "$WORK/$name.node$i.measure.json" -label "$name-node$i" -timeout "$TIMEOUT" -- \
		"$BIN/courtesy" crawl --seeds "$WORK/seeds.txt" --resolve "*.test=$ADDR" \
		--delay "$DELAY" --workers "$WORKERS" --max-duration "$DURATION" \
		--data "$WORK/$name-node$i" "$@" >"$WORK/$name.node$i.out" 2>&1 &
	NODE_PIDS+=($!)
}

wait_nodes() {
	local name=$1
	for p in "${NODE_PIDS[@]}"; do
		wait "$p" || log "$name: a node exited with $? (see $WORK/$name.node*.out)"
	done
	NODE_PIDS=()
	rm -rf "$WORK/$name"-node*/
}

names=()
for n in $NODES; do
	name=cluster-$n
	names+=("$name")
	for p in $(masters); do rcli "$p" flushall >/dev/null; done
	for p in "${PORTS[@]}"; do rcli "$p" config resetstat >/dev/null; done
	masters >"$WORK/$name.redis.masters"
	snapshot "$name" before
	mv "$WORK/$name.redis.masters" "$WORK/$name.redis/masters"
	start_testweb "$name"
	id=bench-$n-$(date +%s)
	log "$name: $n node(s) on crawl $id, load $(cut -d' ' -f1-3 /proc/loadavg)"
	for i in $(seq 1 "$n"); do
		# shellcheck disable=SC2086 # NODE_ARGS is a list of flags
		crawl "$name" "$i" --redis-cluster "$ADDRS" --crawl-id "$id" $NODE_ARGS
	done
	wait_nodes "$name"
	snapshot "$name" after
	stop_testweb "$name"
done

embedded=()
if [[ $EMBEDDED == 1 ]]; then
	start_testweb embedded
	log "embedded: 1 process, load $(cut -d' ' -f1-3 /proc/loadavg)"
	crawl embedded 1
	wait_nodes embedded
	stop_testweb embedded
	embedded=(-embedded embedded)
fi

echo
echo "Cluster benchmark $(date -u +%Y-%m-%dT%H:%MZ): $SITES sites x $PAGES pages, latency $LATENCY, delay $DELAY," \
	"$WORKERS workers a node, $DURATION a run, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$BIN/clustertable" -dir "$WORK" -cores "$(nproc)" "${embedded[@]}" "${names[@]}"
