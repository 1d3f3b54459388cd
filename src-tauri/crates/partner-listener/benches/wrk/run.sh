#!/usr/bin/env bash
# One latency round under wrk (BENCHMARKS.md, listener): a server started fresh, wrk with 64
# connections on the same machine for DURATION, then the server's CPU by thread over the run.
#
# Usage: run.sh SERVER [DURATION] [STORE]
#   SERVER: a `partner` binary (then `partner listen` serves, on a fresh store or on a copy of
#           STORE), or `append:ACK_BIN` / `verify:ACK_BIN` (the ack bench binary's floors:
#           ACK_SERVE=append|verify, see benches/ack.rs).
#   DURATION: wrk's -d (default 60s).
# Env: WRK_CONNECTIONS (64), POST_LUA (made once by make_post_lua.py if missing), LISTEN_ARGS
# (more `partner listen` options, e.g. "--max-captures 200000", the app's default retention).
# The key and subscription are the ack bench's, so its floors verify these notifications too.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="${1:?usage: run.sh SERVER [DURATION] [STORE]}"
duration="${2:-60s}"
store="${3:-}"
connections="${WRK_CONNECTIONS:-64}"
post="${POST_LUA:-${TMPDIR:-/tmp}/partner-wrk-post.lua}"
key="Abcdefghijklmnopqrstuvwxyz0123!@"
port=7171
command -v wrk >/dev/null || { echo "run.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
[ -s "$post" ] || KEY="$key" SUB=sub-bench python3 "$here/make_post_lua.py" "$post" 20000
work="$(mktemp -d)"
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
case "$server" in
  append:*|verify:*)
    ACK_SERVE="${server%%:*}" ACK_ADDR="127.0.0.1:$port" "${server#*:}" --bench >"$work/out" 2>&1 &
    pid=$! ;;
  *)
    db="$work/store.sqlite3"
    # Synced before the server starts: a copy of gigabytes left in the page cache is written
    # back during the run, and every acknowledgement's sync waits behind it.
    if [ -n "$store" ]; then cp "$store" "$db" && sync "$db"; fi
    # shellcheck disable=SC2086 # LISTEN_ARGS is split into options on purpose
    "$server" listen --addr "127.0.0.1:$port" --db "$db" --key "sub-bench=$key" ${LISTEN_ARGS:-} >"$work/out" 2>&1 &
    pid=$! ;;
esac
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
ticks=$(getconf CLK_TCK)
cpu() { # name seconds, per thread of $pid
  for t in /proc/"$pid"/task/*; do
    read -r stat <"$t/stat" || continue
    name="${stat#*(}"; name="${name%%)*}"; rest="${stat##*) }"
    set -- $rest
    echo "$name ${12} ${13}"
  done | awk -v hz="$ticks" '{ s[$1] += ($2 + $3) / hz } END { for (n in s) printf "%s %.2f\n", n, s[n] }' | sort
}
cpu >"$work/before"
wrk -c"$connections" -t2 -d"$duration" -s "$post" "http://127.0.0.1:$port" | tee "$work/wrk"
cpu >"$work/after"
requests=$(awk '/^requests /{ gsub(",", "", $2); print $2 }' "$work/wrk")
join -a2 "$work/before" "$work/after" | awk -v n="$requests" '
  { before = (NF == 3) ? $2 : 0; after = (NF == 3) ? $3 : $2; d = after - before; total += d
    line = line sprintf("%s %.1f s, ", $1, d) }
  END { printf "server CPU %.1f s = %.1f us per request (%s)\n", total, total / n * 1e6, line }'
