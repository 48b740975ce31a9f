#!/usr/bin/env bash
# The crawl benchmark (docs/performance.md): gocolly/colly and
# `courtesy crawl`, equally polite (robots.txt obeyed, one request in flight
# per host, the same per-host delay), crawl the same synthetic web one after
# the other in one run; the table compares pages/s, CPU per page and peak RSS.
#
#   bench/crawl/run.sh                       # 2,000 sites x 50 pages, delay 200ms
#   SITES=200 PAGES=20 bench/crawl/run.sh    # a quick run
#   PROFILES=realistic bench/crawl/run.sh    # one testweb profile only
#
# Environment (defaults in brackets):
#   SITES [2000], PAGES [50]   the testweb size (--plain: generic sites only)
#   PROFILES ["plain realistic"] the testweb profiles (docs/testweb.md), each
#                              crawled by every crawler; one table each.
#                              plain: 2 KB pages, 8 links, all 200;
#                              realistic: 30 KB median pages, 20-60 links,
#                              404/500/503, redirects, duplicates, slow pages
#   DELAY [200ms]              per-host delay given to both crawlers
#   MAX_DURATION [150s]        time cap of each crawler (0: none); the table
#                              counts the pages each fetched within it
#   CRAWLERS ["colly-stock colly courtesy"] which to run, in order; the
#                              ratios compare the last with each other one.
#                              colly-stock is colly as shipped (Go's default
#                              Transport, its own visited check), colly the
#                              tuned set-up (bench/crawl/colly/main.go)
#   COURTESY_ARGS []           extra flags for `courtesy crawl` (its defaults
#                              otherwise, 256 workers among them)
#   TIMEOUT [10m]              kill a crawler still running after this long
#   KEEP [0]                   1: keep the work directory (logs, WARC, JSON)
#
# Each crawler gets a fresh testweb process on a free loopback port with a
# request log; `courtesy testweb report` counts the distinct pages and checks
# the politeness from that log, so both crawlers are judged by the same
# server-side count. Crawler costs come from bench/measure (wall time,
# user+sys CPU of the crawler process, peak RSS). Nothing leaves 127.0.0.1.
set -euo pipefail

SITES=${SITES:-2000}
PAGES=${PAGES:-50}
DELAY=${DELAY:-200ms}
MAX_DURATION=${MAX_DURATION:-150s}
CRAWLERS=${CRAWLERS:-colly-stock colly courtesy}
PROFILES=${PROFILES:-plain realistic}
COURTESY_ARGS=${COURTESY_ARGS:-}
TIMEOUT=${TIMEOUT:-10m}
KEEP=${KEEP:-0}

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/courtesy-crawlbench.XXXXXX")
BIN=$WORK/bin
TW_PID=

cleanup() {
	if [[ -n $TW_PID ]]; then
		kill "$TW_PID" 2>/dev/null || true
		wait "$TW_PID" 2>/dev/null || true
	fi
	if [[ $KEEP == 1 ]]; then
		echo "work directory kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

log() { echo "crawl-bench: $*" >&2; }

log "building into $BIN"
mkdir -p "$BIN"
(cd "$ROOT" && go build -o "$BIN/courtesy" ./cmd/courtesy &&
	go build -o "$BIN/measure" ./bench/measure &&
	go build -o "$BIN/crawltable" ./bench/crawl/table)
(cd "$ROOT/bench/crawl/colly" && go build -o "$BIN/colly-bench" .)

GEN=(--plain --sites "$SITES" --pages-per-site "$PAGES" --profile plain)

# Seeds: every site's home page, from the web's own host list.
"$BIN/courtesy" testweb hosts "${GEN[@]}" |
	awk '!/^#/ { for (i = 2; i <= NF; i++) print "http://" $i "/" }' >"$WORK/seeds.txt"
log "$(wc -l <"$WORK/seeds.txt") seeds, $PAGES pages each, delay $DELAY, time cap $MAX_DURATION"

# start_testweb NAME: serve the web with a request log NAME.log; sets ADDR.
start_testweb() {
	local out=$WORK/$1.testweb.out
	"$BIN/courtesy" testweb "${GEN[@]}" --listen 127.0.0.1:0 --log "$WORK/$1.log" >"$out" 2>&1 &
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
	"$BIN/courtesy" testweb report "${GEN[@]}" --min-delay "$DELAY" --coverage --json "$WORK/$1.log" >"$WORK/$1.report.json"
	[[ $KEEP == 1 ]] || rm -f "$WORK/$1.log"
}

# run_colly NAME [FLAGS]: colly-bench as NAME.
run_colly() {
	local name=$1
	shift
	"$BIN/measure" -o "$WORK/$name.measure.json" -label "$name" -timeout "$TIMEOUT" -- \
		"$BIN/colly-bench" -seeds "$WORK/seeds.txt" -addr "$ADDR" -delay "$DELAY" \
		-max-duration "$MAX_DURATION" -o "$WORK/$name.summary.json" "$@" || log "$name exited with $?"
}

run_courtesy() {
	local name=$1
	if "$BIN/courtesy" crawl -h 2>&1 | grep -q 'Not built yet'; then
		log "courtesy crawl is not built yet: skipped"
		return 1
	fi
	local cap=()
	[[ $MAX_DURATION != 0 ]] && cap=(--max-duration "$MAX_DURATION")
	# shellcheck disable=SC2086 # COURTESY_ARGS is a list of flags
	"$BIN/measure" -o "$WORK/$name.measure.json" -label "$name" -timeout "$TIMEOUT" -- \
		"$BIN/courtesy" crawl --seeds "$WORK/seeds.txt" --resolve "*.test=$ADDR" \
		--delay "$DELAY" --data "$WORK/courtesy-data" --warc-dir "$WORK/warc" \
		"${cap[@]}" $COURTESY_ARGS >"$WORK/$name.out" 2>&1 || log "courtesy exited with $? (see $WORK/$name.out)"
	grep -E '^Crawl (finished|stopped)|pages fetched' "$WORK/$name.out" >&2 || true
	tail -n 5 "$WORK/$name.out" >&2 || true
	if [[ -d $WORK/warc ]]; then
		log "WARC written: $(du -sh "$WORK/warc" | cut -f1)"
	fi
}

for p in $PROFILES; do
	GEN=(--plain --sites "$SITES" --pages-per-site "$PAGES" --profile "$p")
	names=()
	for c in $CRAWLERS; do
		n=$p-$c
		names+=("$n")
		log "load: $(cut -d' ' -f1-3 /proc/loadavg)"
		start_testweb "$n"
		log "profile $p: running $c against testweb at $ADDR"
		ok=1
		case $c in
		colly) run_colly "$n" ;;
		colly-stock) run_colly "$n" -stock ;;
		courtesy) run_courtesy "$n" || ok=0 ;;
		*)
			log "unknown crawler $c"
			ok=0
			;;
		esac
		# When the crawler had exited: the table's last-request-to-exit
		# column (the web's last request is in the testweb report).
		date -u +%Y-%m-%dT%H:%M:%S.%NZ >"$WORK/$n.exit"
		stop_testweb "$n"
		if [[ $ok == 0 ]]; then
			rm -f "$WORK/$n.report.json"
		fi
		rm -rf "$WORK/warc" "$WORK/courtesy-data"
	done

	echo
	echo "Crawl benchmark $(date -u +%Y-%m-%dT%H:%MZ), profile $p: $SITES sites x $PAGES pages, delay $DELAY, time cap $MAX_DURATION," \
		"$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	"$BIN/crawltable" -dir "$WORK" "${names[@]}"
done
