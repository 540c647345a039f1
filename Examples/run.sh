#!/usr/bin/env bash
# Runs the example movie server under load: two server instances on one database, wrk driving
# the first, a live query (server-sent events) open on the second.
#
#   Examples/run.sh                  release build, PostgreSQL, wrk for 30 s (2 threads, 16 connections)
#   Examples/run.sh --smoke          debug build, wrk for 3 s with 2 connections: what CI runs
#   Examples/run.sh --sqlite         one SQLite file instead of PostgreSQL (combines with --smoke)
#
# Prints requests/s, latency percentiles and error counts, and fails (non-zero exit) when wrk saw
# a socket error or a response that is not 2xx/3xx, when the second instance's live query did
# not show the first one's writes, or when a server does not stop gracefully on SIGTERM.
set -euo pipefail
examples="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$examples")"
cd "$repo"

smoke=false
store_kind=postgres
for argument in "$@"; do
    case $argument in
    --smoke) smoke=true ;;
    --sqlite) store_kind=sqlite ;;
    -h | --help)
        sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "run.sh: unknown option $argument (try --help)" >&2
        exit 2
        ;;
    esac
done

if $smoke; then
    configuration=debug duration=3 threads=1 connections=2
else
    configuration=release duration=30 threads=2 connections=16
fi

# What the run needs from Debian: the load generator and the SSE client, the SQLite headers
# GRDB builds against, libxml2 (Foundation's XML parser, loaded with Strata), python3 (free ports).
need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v python3 >/dev/null 2>&1 || need+=(python3)
[[ -f /usr/include/sqlite3.h ]] || need+=(libsqlite3-dev)
ldconfig -p 2>/dev/null | grep -q 'libxml2\.so\.2' || need+=(libxml2)
if ((${#need[@]})); then
    if command -v apt-get >/dev/null 2>&1; then
        sudo_cmd=""
        [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq
        $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    else
        echo "run.sh: missing ${need[*]}; install them with your package manager" >&2
        exit 1
    fi
fi

# The smoke test's debug build shares its scratch folder with the benchmarks' quick run (both in
# CI): Strata and the dependencies both have are compiled once (see Packages/README.md).
scratch="$repo/.build-examples"
if $smoke; then scratch="$repo/.build-packages"; fi
echo "==> building movie-server ($configuration)"
swift build -c "$configuration" --package-path Examples --scratch-path "$scratch" --product movie-server
server="$(swift build -c "$configuration" --package-path Examples --scratch-path "$scratch" --show-bin-path)/movie-server"

work="$(mktemp -d "${TMPDIR:-/tmp}/movie-server-run.XXXXXX")"
postgres_dir=""
server_pids=()
curl_pid=""

cleanup() {
    local status=$?
    [[ -n $curl_pid ]] && kill "$curl_pid" 2>/dev/null || true
    for pid in "${server_pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${server_pids[@]}"; do
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    [[ -n $postgres_dir ]] && scripts/postgres.sh stop "$postgres_dir" || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

fail() {
    echo "run.sh: FAILED: $*" >&2
    for log in "$work"/server-*.log; do
        [[ -f $log ]] || continue
        echo "--- last lines of $(basename "$log")" >&2
        tail -n 20 "$log" >&2
    done
    exit 1
}

if [[ $store_kind == postgres ]]; then
    echo "==> starting PostgreSQL"
    postgres_dir="$work/postgres"
    url="$(scripts/postgres.sh start "$postgres_dir")"
    store="$url?schema=movies&pool_size=16"
    store_shown="PostgreSQL at ${url#*@}, schema movies"
else
    store="$work/movies.sqlite"
    store_shown="SQLite file $store"
fi

# Starts a server on a free port; waits until /health answers. Sets `port`.
start_server() {
    local name=$1 log="$work/server-$1.log" pid
    port="$(free_port)"
    "$server" --hostname 127.0.0.1 --port "$port" --store "$store" --log-level info >"$log" 2>&1 &
    pid=$!
    server_pids+=("$pid")
    for _ in $(seq 600); do
        if curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
            echo "    instance $name: http://127.0.0.1:$port (pid $pid)"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || fail "instance $name exited at start"
        sleep 0.1
    done
    fail "instance $name did not answer /health within 60 s"
}

echo "==> starting two instances on $store_shown"
start_server A
port_a=$port
start_server B
port_b=$port

# The live query on B: the five best-rated movies. Every movie wrk adds on A that enters them,
# and the probe added after the load (rated 10, year 2100: first of all), must reach B.
events="$work/events.txt"
live_query="/movies/live?sort=-rating,-year&limit=5"
curl -sSN --max-time $((duration + 120)) "http://127.0.0.1:$port_b$live_query" >"$events" 2>"$work/curl.log" &
curl_pid=$!
for _ in $(seq 100); do
    grep -q '^data: ' "$events" 2>/dev/null && break
    sleep 0.1
done
grep -q '^data: ' "$events" || fail "instance B's live query sent no first event"

echo "==> wrk: $duration s, $threads thread(s), $connections connections, against instance A"
wrk_output="$work/wrk.txt"
wrk -t"$threads" -c"$connections" -d"${duration}s" --latency --timeout 5s -s "$examples/load.lua" \
    "http://127.0.0.1:$port_a" | tee "$wrk_output"
result="$(grep '^RESULT ' "$wrk_output" || true)"
[[ -n $result ]] || fail "wrk printed no RESULT line"
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$result"; }

# A probe written to A after the load: B's live query must show it.
probe="probe-$RANDOM$RANDOM"
probe_started=$(date +%s%N)
curl -fsS -X POST -H 'Content-Type: application/json' \
    -d "{\"title\":\"$probe\",\"year\":2100,\"rating\":10,\"director\":\"Run Script\"}" \
    "http://127.0.0.1:$port_a/movies" >/dev/null || fail "the probe POST to instance A failed"
probe_ms=""
for _ in $(seq 200); do
    if grep -q "\"title\":\"$probe\"" "$events"; then
        probe_ms=$((($(date +%s%N) - probe_started) / 1000000))
        break
    fi
    sleep 0.05
done

# Graceful shutdown: SIGTERM ends B's open live stream and both servers exit with status 0.
shutdown_ok=true
for pid in "${server_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
for pid in "${server_pids[@]}"; do
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        shutdown_ok=false
    elif ! wait "$pid"; then
        shutdown_ok=false
    fi
done
$shutdown_ok && server_pids=()
wait "$curl_pid" 2>/dev/null || true
curl_pid=""

requests=$(field requests)
duration_us=$(field duration_us)
socket_errors=$(($(field connect) + $(field read) + $(field write) + $(field timeout)))
status_errors=$(field status)
event_count=$(grep -c '^data: ' "$events" || true)
wrk_events=$(grep '^data: ' "$events" | grep -c '"title":"wrk-' || true)
error_events=$(grep -c '^event: error' "$events" || true)
us_to_ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }

echo
echo "==> results ($store_kind, $configuration build, $duration s)"
echo "    requests:            $requests ($(field creates_sent) POSTs sent)"
echo "    requests/s:          $(awk -v r="$requests" -v d="$duration_us" 'BEGIN { printf "%.1f", r / (d / 1000000) }')"
echo "    latency p50/p90/p99: $(us_to_ms "$(field p50_us)") / $(us_to_ms "$(field p90_us)") / $(us_to_ms "$(field p99_us)") ms (max $(us_to_ms "$(field max_us)") ms)"
echo "    socket errors:       $socket_errors (connect $(field connect), read $(field read), write $(field write), timeout $(field timeout))"
echo "    non-2xx/3xx:         $status_errors"
echo "    B's live events:     $event_count ($wrk_events showing A's wrk writes, $error_events errors)"
echo "    probe A -> B:        ${probe_ms:-not seen} ms"
echo "    graceful shutdown:   $($shutdown_ok && echo ok || echo FAILED)"

((socket_errors == 0)) || fail "wrk saw $socket_errors socket errors"
((status_errors == 0)) || fail "wrk saw $status_errors responses that were not 2xx/3xx"
((wrk_events > 0)) || fail "instance B's live query never showed a movie wrk added on instance A"
[[ -n $probe_ms ]] || fail "instance B's live query did not show the probe added on instance A within 10 s"
((error_events == 0)) || fail "instance B's live query sent $error_events error events"
$shutdown_ok || fail "a server did not stop with status 0 within 15 s of SIGTERM"
echo "==> ok"
