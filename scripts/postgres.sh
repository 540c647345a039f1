#!/usr/bin/env bash
# A private PostgreSQL server for Strata's tests, examples and benchmarks: installed from Debian
# when missing, a fresh cluster in its own folder, owned by an unprivileged user (initdb
# refuses root), listening on loopback only, on a free port.
#
#   scripts/postgres.sh start [DIR]   start a server (DIR defaults to .build-postgres); prints
#                                     its URL, which is also written to DIR/url
#   scripts/postgres.sh stop [DIR]    stop it and remove DIR
#   scripts/postgres.sh url [DIR]     print the URL of a running server
#   scripts/postgres.sh restart [DIR] restart it (same data, port and password), as an
#                                     operator or a crash would
#
# The URL is postgres://strata:PASSWORD@127.0.0.1:PORT/strata; the password is made anew for
# each cluster. Tests read it from STRATA_POSTGRES_URL (scripts/test.sh exports it).
set -euo pipefail
cd "$(dirname "$0")/.."

command=${1:-}
dir=${2:-"$PWD/.build-postgres"}

fail() {
    echo "postgres.sh: $*" >&2
    exit 1
}

# The server's binaries: Debian puts them in /usr/lib/postgresql/VERSION/bin.
find_bin() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [[ -n $found && -x $found/initdb ]]; then
        echo "$found"
    elif command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
    fi
}

install_server() {
    command -v apt-get >/dev/null 2>&1 ||
        fail "PostgreSQL is not installed and there is no apt-get to install it; install PostgreSQL 13 or later."
    local sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    echo "postgres.sh: installing PostgreSQL from Debian" >&2
    $sudo_cmd apt-get update -qq
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-contrib >/dev/null
}

# Runs a command as the cluster's owner: this user, or (as root) the unprivileged `postgres`
# user Debian's package creates (or `strata-pg`, made here, when it does not exist).
owner=""
as_owner() {
    if [[ -z $owner ]]; then
        "$@"
    else
        runuser -u "$owner" -- "$@"
    fi
}

# Runs a command with only stdin, stdout and stderr open: the server it starts must not keep
# descriptors the caller inherited to us (a pipe the caller reads to its end would never end).
without_inherited_fds() {
    (
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            [[ $fd -gt 2 ]] && eval "exec $fd>&-" 2>/dev/null
        done
        "$@"
    )
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
    # A server already running in DIR is reused.
    if [[ -f $dir/url ]] && [[ -f $dir/data/postmaster.pid ]] && running; then
        cat "$dir/url"
        return
    fi
    stop
    local bin
    bin=$(find_bin)
    if [[ -z $bin ]]; then
        install_server
        bin=$(find_bin)
        [[ -n $bin ]] || fail "PostgreSQL was installed but initdb was not found."
    fi
    if [[ $(id -u) -eq 0 ]]; then
        if getent passwd postgres >/dev/null; then
            owner=postgres
        else
            getent passwd strata-pg >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin strata-pg
            owner=strata-pg
        fi
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    local password port
    password=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
    port=$(free_port)
    printf '%s\n' "$password" >"$dir/password"
    chmod 600 "$dir/password"
    [[ -n $owner ]] && chown -R "$owner" "$dir"
    # The owner must reach DIR through every parent folder.
    if [[ -n $owner ]]; then
        local parent
        parent=$(dirname "$dir")
        while [[ $parent != / ]]; do
            chmod o+x "$parent" 2>/dev/null || true
            parent=$(dirname "$parent")
        done
    fi
    as_owner "$bin/initdb" -D "$dir/data" -U strata --pwfile="$dir/password" --auth=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; fail "initdb failed."; }
    # Loopback only, sockets in DIR, enough connections for the concurrency tests and two
    # "servers" per test, fsync off (a test server: speed over durability across power loss).
    without_inherited_fds as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null 2>&1 </dev/null ||
        { cat "$dir/server.log" >&2; fail "the server did not start."; }
    PGPASSWORD=$password "$bin/psql" -h 127.0.0.1 -p "$port" -U strata -d postgres -v ON_ERROR_STOP=1 -q \
        -c "CREATE DATABASE strata" >/dev/null || fail "could not create the database."
    local url="postgres://strata:$password@127.0.0.1:$port/strata"
    printf '%s\n' "$url" >"$dir/url"
    printf '%s\n' "$bin" >"$dir/bin"
    echo "$url"
}

# Whether the server in DIR runs (asked as the cluster's owner: pg_ctl refuses root).
running() {
    local bin data_owner
    bin=$(cat "$dir/bin" 2>/dev/null || find_bin)
    [[ -n $bin && -d $dir/data ]] || return 1
    data_owner=$(stat -c %U "$dir/data")
    if [[ $(id -u) -eq 0 && $data_owner != root ]]; then owner=$data_owner; fi
    as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

stop() {
    [[ -d $dir ]] || return 0
    if [[ -f $dir/data/postmaster.pid ]] && running; then
        as_owner "$(cat "$dir/bin" 2>/dev/null || find_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    owner=""
    rm -rf "$dir"
}

restart() {
    [[ -f $dir/url ]] || fail "no server in $dir; run: scripts/postgres.sh start"
    running || fail "the server in $dir is not running"
    without_inherited_fds as_owner "$(cat "$dir/bin")/pg_ctl" -D "$dir/data" -m fast -w -t 60 restart >/dev/null 2>&1 </dev/null ||
        { cat "$dir/server.log" >&2; fail "the server did not restart."; }
}

case $command in
start) start ;;
restart) restart ;;
stop) stop ;;
url) [[ -f $dir/url ]] && cat "$dir/url" || fail "no server in $dir; run: scripts/postgres.sh start" ;;
*)
    echo "usage: scripts/postgres.sh start|stop|restart|url [DIR]" >&2
    exit 2
    ;;
esac
