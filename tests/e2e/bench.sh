#!/usr/bin/env bash
# Benchmark (not a test) of the real app under Xvfb: start to the first interactive products
# table beside a blank window, then, over a capture store seeded with N spec-shaped captures,
# the first rows after opening the Webhooks screen, scroll, filter and search latency, and the
# RSS of the app and its WebKit processes beside the blank window's.
# Usage: tests/e2e/bench.sh [captures=100000]. Prints JSON lines; see BENCHMARKS.md.
# PARTNER_BENCH_STARTS=N start pairs (7); PARTNER_BENCH_PARTS=start stops after start-up.
# Both the app and the blank window are release builds (what users run), built the same way
# (same crate, features and profile); PARTNER_BENCH_PROFILE=debug compares debug builds instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export PATH="$HOME/.cargo/bin:$PATH"
(cd ui && npm run --silent build:dist >/dev/null)
profile=${PARTNER_BENCH_PROFILE:-release}
case "$profile" in
  release) profile_flag=--release ;;
  debug) profile_flag= ;;
  *) echo "bench: PARTNER_BENCH_PROFILE is release or debug" >&2; exit 2 ;;
esac
cargo build $profile_flag -p partner-console --bins --example blank --locked --quiet
cargo build --release -p partner-listener --example seed_captures --locked --quiet
export PARTNER_APP_BINARY="${CARGO_TARGET_DIR:-$root/target}/$profile/partner-console"
export PARTNER_BENCH_CAPTURES=${1:-100000}
export PARTNER_BLANK_BINARY="${CARGO_TARGET_DIR:-$root/target}/$profile/examples/blank"
echo "{\"profile\":\"$profile\",\"nproc\":$(nproc),\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_DATA_HOME=$scratch/data XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config XDG_RUNTIME_DIR=$scratch/run
mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
export PARTNER_DATA_DIR=$scratch/app-data
mkdir -p "$PARTNER_DATA_DIR"
# The store the app opens, filled before it starts (the app's own import is the e2e's).
seeded=$(date +%s%N)
if [ -n "${PARTNER_BENCH_STORE:-}" ]; then
  # A store seeded before (seed_captures, closed cleanly), linked rather than seeded again: a
  # million captures take over two minutes to seed. The app opens it as its own.
  ln "$PARTNER_BENCH_STORE" "$PARTNER_DATA_DIR/captures.sqlite3"
else
  "${CARGO_TARGET_DIR:-$root/target}/release/examples/seed_captures" --count "$PARTNER_BENCH_CAPTURES" --db "$PARTNER_DATA_DIR/captures.sqlite3" >&2
fi
echo "{\"metric\":\"store_seeded_ms\",\"captures\":$PARTNER_BENCH_CAPTURES,\"value\":$(( ($(date +%s%N) - seeded) / 1000000 ))}"
# What the app logs (through tauri-driver): its slow store reads and waits are printed after the run.
export PARTNER_BENCH_APP_LOG=$scratch/app.log
dbus-run-session -- xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  echo -n "bench" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  tauri-driver --port 4444 >"$PARTNER_BENCH_APP_LOG" 2>&1 &
  driver=$!; trap "kill $driver 2>/dev/null || true" EXIT
  for _ in $(seq 1 50); do (echo >/dev/tcp/127.0.0.1/4444) 2>/dev/null && break; sleep 0.2; done
  node tests/e2e/bench.mjs
'
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
  console.log(JSON.stringify({ metric: "app_log_lines", value: lines.length }));
  for (const line of lines) if (/store read was slow|lock on the capture store|waited for a read connection/.test(line)) console.log(JSON.stringify({ app_log: line.replace(/\x1b\[[0-9;]*m/g, "") }));
' "$PARTNER_BENCH_APP_LOG"
