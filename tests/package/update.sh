#!/usr/bin/env bash
# The app updating itself, on a fresh Debian 12 (the minimal bookworm of fresh-debian.sh):
#   1. a signing key made for this run (`tauri signer generate`; the private key and its password
#      only in a temporary folder outside the repository and in this script's environment);
#   2. version N (the workspace's) and N+1 packaged from the same debug build with the test hooks
#      (scripts/package.sh --debug --features test-hooks [--version N+1]: only the app crate is
#      compiled again), N+1 signed with that key (`tauri signer sign`: its .deb.sig);
#   3. a local update server (python's http.server on 127.0.0.1) offering N+1 with three
#      manifests: one whose signature is another key's, one whose package bytes were altered
#      after signing, and the genuine one;
#   4. inside the fresh system: N installed from its .deb with apt, then started three times
#      under Xvfb with PARTNER_UPDATE_URL at each manifest (PARTNER_TEST_ACCEPT_UPDATE=1 says the
#      user's yes, PARTNER_TEST_UPDATE_PUBKEY the run's public key: both test hooks, absent from
#      the packages users get): the first two are refused with their message and N stays
#      installed; the third installs N+1 (dpkg through sudo, as root here), the app restarts
#      itself, and the running app says N+1, as `dpkg -s` does. A screenshot of the offer and
#      of the updated app go to $PACKAGE_DIR/update-*.png.
#
#   Before it, the same update as a user without admin rights (no sudo, no pkexec): refused with
#   the app's sentence about the administrator's password, N stays.
#
# Needs root (debootstrap, chroot). Usage: tests/package/update.sh [--packages-only | --packaged] [PACKAGE_DIR]
#   (default target/package; its packages for this test go to PACKAGE_DIR/update/)
#   --packages-only makes the two packages (step 2, unsigned) and stops: no root needed. The test
#   command runs it in the background while the fresh-Debian test waits on apt and the disk (the
#   two builds are most of this test's time: 151 s of 308 in a warm run, 212 of 391 on a bare
#   machine, BENCHMARKS.md), then runs this test with --packaged, which takes those packages
#   (and fails without them) instead of making them again.
#   PARTNER_UPDATE_TEST_REUSE=1 reuses the packages of an earlier run when they are there: a
#   quicker loop while working on the test itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
mode=test
case "${1:-}" in
  --packages-only) mode=packages; shift ;;
  --packaged) mode=packaged; shift ;;
esac
out=$(realpath -m "${1:-target/package}")
fail() { echo "update test: FAILED: $*" >&2; exit 1; }

version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')
next=$(python3 -c 'import sys; a,b,c=sys.argv[1].split("-")[0].split("."); print(f"{a}.{b}.{int(c)+1}")' "$version")
tauri=$root/ui/node_modules/.bin/tauri
deb_n=$out/update/$version/partner-console_${version}_amd64.deb
deb_next=$out/update/$next/partner-console_${next}_amd64.deb

# N and N+1 with the test hooks, unsigned (the run's key signs N+1 after).
package_both() {
  local log
  log=$(mktemp)
  echo "update test: packaging $version and $next with the test hooks (debug build)"
  scripts/package.sh --debug --features test-hooks --bundles deb --out "$out/update/$version" >"$log" 2>&1 \
    || { tail -30 "$log"; rm -f "$log"; fail "packaging $version"; }
  scripts/package.sh --debug --features test-hooks --bundles deb --version "$next" --out "$out/update/$next" >"$log" 2>&1 \
    || { tail -30 "$log"; rm -f "$log"; fail "packaging $next"; }
  rm -f "$log"
}
if [ "$mode" = packages ]; then
  started=$SECONDS
  rm -rf "$out/update"
  package_both
  echo "update test: made in $((SECONDS - started)) s: $(basename "$deb_n"), $(basename "$deb_next")"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap and chroot)"

tests/package/fresh-debian.sh --prepare "$out"
base=$out/bookworm-base
[ -f "$base/.complete" ] || fail "no minimal bookworm in $base"

work=$(mktemp -d /tmp/partner-update-test.XXXXXX)
server_pid=""
system=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$system" ] && rm -rf "$system"
  rm -rf "$work"
}
trap cleanup EXIT
chmod 700 "$work"

# --- keys: this run's, and another for the refused signature --------------------------------
password=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
other_password=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
"$tauri" signer generate --ci -p "$password" -w "$work/update.key" >/dev/null 2>&1 || fail "tauri signer generate"
"$tauri" signer generate --ci -p "$other_password" -w "$work/other.key" >/dev/null 2>&1 || fail "tauri signer generate (other)"
pubkey=$(cat "$work/update.key.pub")
echo "update test: signing key made for this run (public key $(base64 -d <<<"$pubkey" | sed -n 's/.*public key: //p' | head -1))"

# --- N and N+1, with the test hooks, N+1 signed with this run's key ------------------------------
started=$SECONDS
if [ "$mode" = packaged ]; then
  [ -f "$deb_n" ] && [ -f "$deb_next" ] || fail "--packaged: no packages in $out/update (tests/package/update.sh --packages-only makes them)"
  echo "update test: taking $(basename "$deb_n") and $(basename "$deb_next") made beforehand"
elif [ "${PARTNER_UPDATE_TEST_REUSE:-}" = 1 ] && [ -f "$deb_n" ] && [ -f "$deb_next" ]; then
  echo "update test: reusing $(basename "$deb_n") and $(basename "$deb_next")"
else
  package_both
fi
rm -f "$deb_next.sig"
TAURI_SIGNING_PRIVATE_KEY=$(cat "$work/update.key") TAURI_SIGNING_PRIVATE_KEY_PASSWORD=$password \
  "$tauri" signer sign --app-version "$next" "$deb_next" >/dev/null 2>&1 || fail "signing $next"
[ -f "$deb_n" ] && [ -f "$deb_next" ] && [ -f "$deb_next.sig" ] || fail "the packages or the signature are missing"
[ "$(dpkg-deb -f "$deb_next" Version)" = "$next" ] || fail "the N+1 package says $(dpkg-deb -f "$deb_next" Version)"
echo "update test: packaged and signed in $((SECONDS - started)) s: $(basename "$deb_n"), $(basename "$deb_next") and its .sig"

# --- the update server: three manifests --------------------------------------------------------
srv=$work/srv
mkdir -p "$srv/files" "$srv/good" "$srv/other-key" "$srv/altered"
cp "$deb_next" "$srv/files/"
# Signed by another key (bound to the same version): refused as not the release key's.
cp "$deb_next" "$srv/files/other-key.deb"
TAURI_SIGNING_PRIVATE_KEY=$(cat "$work/other.key") TAURI_SIGNING_PRIVATE_KEY_PASSWORD=$other_password \
  "$tauri" signer sign --app-version "$next" "$srv/files/other-key.deb" >/dev/null 2>&1 || fail "signing with the other key"
# The genuine signature over bytes altered after signing (one byte of the package's last part).
cp "$deb_next" "$srv/files/altered.deb"
python3 - "$srv/files/altered.deb" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[-100] ^= 0xFF
open(path, "wb").write(bytes(data))
PY
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 - "$srv" "$port" "$next" "$(basename "$deb_next")" "$(cat "$deb_next.sig")" "$(cat "$srv/files/other-key.deb.sig")" <<'PY'
import json, sys
srv, port, version, name, good, other = sys.argv[1:7]
base = f"http://127.0.0.1:{port}/files"
def manifest(folder, file, signature):
    body = {"version": version, "notes": f"Partner Console {version}: the update test's release.\nSigned by the run's own key.",
            "pub_date": "2026-12-06T08:00:00Z",
            "platforms": {"linux-x86_64-deb": {"url": f"{base}/{file}", "signature": signature}}}
    json.dump(body, open(f"{srv}/{folder}/latest.json", "w"), indent=2)
manifest("good", name, good)
manifest("other-key", "other-key.deb", other)
manifest("altered", "altered.deb", good)
PY
python3 -m http.server --bind 127.0.0.1 --directory "$srv" "$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/good/latest.json" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/good/latest.json" >/dev/null || fail "the update server did not start"
echo "update test: update server on 127.0.0.1:$port offers $next"

# --- inside the fresh system -------------------------------------------------------------------
system=$(mktemp -d "$out/update-debian.XXXXXX")
cp -a "$base/." "$system/"
rm -f "$system/.complete" "$system/.cached"
# dpkg without its fsyncs in this throwaway system (`force-unsafe-io`): the test checks what is
# installed, not that it survives a power cut. With a writer filling the disk beside it (as the
# test command's background builds do) the fresh-Debian test took 102-112 s with it, 107-116 s
# without (BENCHMARKS.md, issue 47): a small part of what the builds beside it cost.
echo force-unsafe-io >"$system/etc/dpkg/dpkg.cfg.d/partner-test-unsafe-io"
cp "$deb_n" "$system/tmp/"
cp /etc/resolv.conf "$system/etc/resolv.conf"
cat >"$system/tmp/inside.sh" <<INSIDE
#!/bin/bash
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
apt-get update -qq
apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb_n")" >/tmp/apt-install.log 2>&1 \
  || { tail -30 /tmp/apt-install.log; exit 1; }
# The test's tools: a display, a session bus with a keychain, window tools; and sudo, through
# which the updater runs dpkg (no pkexec or polkit agent on this system).
apt-get install -y -q --no-install-recommends xvfb xauth x11-utils imagemagick dbus dbus-x11 gnome-keyring \
  sudo procps curl ca-certificates >/tmp/apt-tools.log 2>&1 || { tail -30 /tmp/apt-tools.log; exit 1; }
installed() { dpkg-query -W -f '\${Version}' partner-console; }
[ "\$(installed)" = "$version" ] || { echo "installed \$(installed), not $version"; exit 1; }
echo "update test: partner-console $version installed with apt"

export HOME=/tmp/home XDG_RUNTIME_DIR=/tmp/run
mkdir -p \$HOME \$XDG_RUNTIME_DIR; chmod 700 \$XDG_RUNTIME_DIR
Xvfb :8 -screen 0 1280x800x24 -nolisten tcp >/tmp/xvfb.log 2>&1 &
xvfb=\$!
for _ in \$(seq 50); do xdpyinfo -display :8 >/dev/null 2>&1 && break; sleep 0.1; done
export DISPLAY=:8 PARTNER_LISTENER_ADDR=127.0.0.1:17071 NO_COLOR=1
export PARTNER_TEST_ACCEPT_UPDATE=1 PARTNER_TEST_UPDATE_PUBKEY='$pubkey'
# A session bus of its own, outside the app's process: the app restarted by the update keeps it.
eval "\$(dbus-launch --sh-syntax)"
echo -n update | gnome-keyring-daemon --unlock --components=secrets >/dev/null
app=""
trap 'if [ -n "\$app" ]; then kill -- -\$app 2>/dev/null || true; fi; kill \$xvfb \$DBUS_SESSION_BUS_PID 2>/dev/null || true' EXIT

# Starts the installed app on MANIFEST (a session of its own, so the end stops it and whatever
# it started again) with its log in LOG.
start() {
  PARTNER_UPDATE_URL=http://127.0.0.1:$port/\$1/latest.json setsid partner-console >"\$2" 2>&1 &
  app=\$!
}
stop() {
  kill -- -\$app 2>/dev/null || true
  for _ in \$(seq 50); do pgrep -x partner-console >/dev/null || break; sleep 0.1; done
  pkill -9 -x partner-console 2>/dev/null || true
  app=""
}
# Waits at most SECONDS for PATTERN in LOG.
wait_for() {
  for _ in \$(seq \$((\$3 * 5))); do grep -qs "\$2" "\$1" && return 0; sleep 0.2; done
  echo "no '\$2' in \$1 within \$3 s:"; tail -40 "\$1"; return 1
}

# A manifest whose signature is another key's, then a package altered after signing: each
# refused with its message, and N stays.
for case in other-key altered; do
  start \$case /tmp/app-\$case.log
  wait_for /tmp/app-\$case.log "updates: a newer version is available" 60
  wait_for /tmp/app-\$case.log "was refused" 60
  said=\$(sed -n "s/.*\\(The update to $next was refused: [^.]*\\.\\).*/\\1/p" /tmp/app-\$case.log | head -1)
  case \$case in
    other-key) grep -q "not signed with Partner Console's release key" <<<"\$said" || { echo "other key: \$said"; exit 1; } ;;
    altered) grep -q "does not match its signature" <<<"\$said" || { echo "altered: \$said"; exit 1; } ;;
  esac
  if [ \$case = other-key ]; then
    sleep 2
    import -window root /tmp/update-refused.png
  fi
  stop
  [ "\$(installed)" = "$version" ] || { echo "after \$case: \$(installed) installed"; exit 1; }
  echo "update test: \$case: refused (\$said), $version stays installed"
done

# The genuine update, for a user without admin rights (not in sudoers, no pkexec): downloaded
# and verified, then refused by the system's package manager; the app says an administrator's
# password is needed, and N stays.
useradd -m alice
mkdir -p /tmp/run-alice; chown alice /tmp/run-alice; chmod 700 /tmp/run-alice
runuser -u alice -- env HOME=/home/alice XDG_RUNTIME_DIR=/tmp/run-alice DISPLAY=:8 NO_COLOR=1 \
  PARTNER_LISTENER_ADDR=127.0.0.1:17072 PARTNER_TEST_ACCEPT_UPDATE=1 PARTNER_TEST_UPDATE_PUBKEY='$pubkey' \
  PARTNER_UPDATE_URL=http://127.0.0.1:$port/good/latest.json \
  setsid bash -c 'eval "\$(dbus-launch --sh-syntax)"
    echo -n alice | gnome-keyring-daemon --unlock --components=secrets >/dev/null; exec partner-console' >/tmp/app-alice.log 2>&1 &
wait_for /tmp/app-alice.log "updates: a newer version is available" 60
wait_for /tmp/app-alice.log "was not installed" 120
said=\$(sed -n "s/.*\\(The update to $next was not installed: [^.]*\\.\\).*/\\1/p" /tmp/app-alice.log | head -1)
grep -q "needs an administrator's password" <<<"\$said" || { echo "alice: \$said"; tail -20 /tmp/app-alice.log; exit 1; }
sleep 2
import -window root /tmp/update-no-admin.png
pkill -u alice 2>/dev/null || true
for _ in \$(seq 50); do pgrep -u alice >/dev/null || break; sleep 0.1; done
pkill -9 -u alice 2>/dev/null || true
[ "\$(installed)" = "$version" ] || { echo "after alice: \$(installed) installed"; exit 1; }
echo "update test: a user without admin rights: \$said $version stays installed"

# The genuine update: downloaded, verified, installed by dpkg, and the app restarts at N+1.
start good /tmp/app-good.log
wait_for /tmp/app-good.log "Partner Console $version starting" 60
wait_for /tmp/app-good.log "updates: installed; restarting" 120
wait_for /tmp/app-good.log "Partner Console $next starting" 60
[ "\$(installed)" = "$next" ] || { echo "dpkg says \$(installed)"; exit 1; }
for _ in \$(seq 120); do
  xwininfo -root -tree | grep -q '"Partner Console"' && break
  sleep 0.5
done
xwininfo -root -tree | grep -q '"Partner Console"' || { tail -40 /tmp/app-good.log; echo "no window after the restart"; exit 1; }
running=\$(pgrep -x partner-console | head -1)
[ -n "\$running" ] || { echo "no partner-console running after the update"; exit 1; }
# The new process is the package's new binary (not the deleted old one), and is up to date.
readlink /proc/\$running/exe | grep -qx /usr/bin/partner-console || { echo "running: \$(readlink /proc/\$running/exe)"; exit 1; }
wait_for /tmp/app-good.log "updates: up to date" 60
code=000
for _ in \$(seq 60); do
  code=\$(curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:17071/webhooks -d '{}' || true)
  [ "\$code" != 000 ] && break; sleep 0.5
done
[ "\$code" != 000 ] || { tail -40 /tmp/app-good.log; echo "the updated app's listener did not answer"; exit 1; }
sleep 4
import -window root /tmp/update-done.png
grep -q panicked /tmp/app-good.log && { cat /tmp/app-good.log; exit 1; }
echo "update test: updated itself to $next: dpkg says \$(installed), the running app (pid \$running) started at $next, its listener answered \$code"
stop
INSIDE
chmod +x "$system/tmp/inside.sh"
started=$SECONDS
# A clean environment, as a fresh system's session has: none of the test command's own (its
# XDG_DATA_HOME under root's scratch folder made a second user's app fail to start).
unshare --mount --fork bash -c "
  set -e
  mount -t proc proc '$system/proc'
  mount --rbind /dev '$system/dev'
  mount -t sysfs sys '$system/sys'
  chroot '$system' /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb /tmp/inside.sh
" || fail "inside the fresh system (above)"
for shot in update-refused update-no-admin update-done; do
  cp "$system/tmp/$shot.png" "$out/$shot.png" 2>/dev/null || true
done
echo "update test: passed in $((SECONDS - started)) s inside the fresh system; screenshots $out/update-{refused,no-admin,done}.png"
