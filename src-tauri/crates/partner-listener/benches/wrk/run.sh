#!/usr/bin/env bash
# One latency round under wrk (BENCHMARKS.md, listener): a server started fresh, wrk with 64
# connections on the same machine for DURATION, then the server's CPU by thread over the run,
# and again once the server is idle (what it did after the load included).
#
# Usage: run.sh SERVER [DURATION] [STORE]
#   SERVER: a `partner` binary (then `partner listen` serves, on a fresh store or on a copy of
#           STORE), or `append:ACK_BIN` / `verify:ACK_BIN` (the ack bench binary's floors:
#           ACK_SERVE=append|verify, see benches/ack.rs).
#   DURATION: wrk's -d (default 60s).
# Env: WRK_CONNECTIONS (64), POST_LUA (made once by make_post_lua.py if missing), LISTEN_ARGS
# (more `partner listen` options, e.g. "--max-captures 200000", the app's default retention),
# WRK_SUBSCRIPTIONS (1: the same 20,000 notifications sent round and round, so nearly all are
# redeliveries; N > 1: each pass under another of N subscriptions with the same key, so none is
# sent twice until N passes: 128 covers a minute here; see make_post_lua.py), SETTLE_MAX (300:
# the most seconds the CPU is watched after the load, until the server is idle), WRK_KEEP_STORE
# (a folder: the store and its key file are moved there once the server has stopped, so the
# query bench's QUERY_STORE can time searches on the index a flood left).
# The key and subscription are the ack bench's, so its floors verify these notifications too.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="${1:?usage: run.sh SERVER [DURATION] [STORE]}"
duration="${2:-60s}"
store="${3:-}"
connections="${WRK_CONNECTIONS:-64}"
key="Abcdefghijklmnopqrstuvwxyz0123!@"
subscriptions="${WRK_SUBSCRIPTIONS:-1}"
if [ "$subscriptions" -gt 1 ]; then
  post="${POST_LUA:-${TMPDIR:-/tmp}/partner-wrk-post-$subscriptions.lua}"
  keys=()
  for i in $(seq 0 $((subscriptions - 1))); do keys+=(--key "sub-bench-$i=$key"); done
else
  post="${POST_LUA:-${TMPDIR:-/tmp}/partner-wrk-post.lua}"
  keys=(--key "sub-bench=$key")
fi
port=7171
command -v wrk >/dev/null || { echo "run.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
[ -s "$post" ] || KEY="$key" SUB=sub-bench SUBS="$subscriptions" python3 "$here/make_post_lua.py" "$post" 20000
work="$(mktemp -d)"
pid=
# With WRK_KEEP_STORE, what of the store there is: a floor server keeps none, and a listener
# that found a secret store keeps its key there, not in a key file.
keep_store() {
  local file
  for file in "$work"/store.sqlite3* "$work"/data.key; do
    if [ -e "$file" ]; then mv "$file" "$WRK_KEEP_STORE"/; fi
  done
}
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; if [ -n "${WRK_KEEP_STORE:-}" ]; then keep_store; fi; rm -rf "$work"' EXIT
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
    "$server" listen --addr "127.0.0.1:$port" --db "$db" "${keys[@]}" ${LISTEN_ARGS:-} >"$work/out" 2>&1 &
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
spent() { # BEFORE AFTER LABEL: the CPU between two snapshots, per thread and per request
  join -a2 "$1" "$2" | awk -v n="$requests" -v label="$3" '
    { before = (NF == 3) ? $2 : 0; after = (NF == 3) ? $3 : $2; d = after - before; total += d
      line = line sprintf("%s %.1f s, ", $1, d) }
    END { printf "%s %.1f s = %.1f us per request (%s)\n", label, total, total / n * 1e6, line }'
}
spent "$work/before" "$work/after" "server CPU"
# The listener keeps its tables and its search index behind the acknowledgements, so some of a
# flood's work is done after the load stops: counted until the server is idle (under 20 ms of
# CPU in a second; SETTLE_MAX seconds at most, 300), so a build that defers more is not flattered.
total() { awk '{ s += $2 } END { printf "%.0f", s * 100 }' "$1"; }
settled=0
for _ in $(seq 1 "${SETTLE_MAX:-300}"); do
  cpu >"$work/last"
  sleep 1
  cpu >"$work/settled"
  settled=$((settled + 1))
  [ $(( $(total "$work/settled") - $(total "$work/last") )) -lt 2 ] && break
done
spent "$work/before" "$work/settled" "server CPU until idle (${settled} s after the load)"
