#!/usr/bin/env bash
# The package on a fresh Debian 12: debootstraps a minimal bookworm into a folder, installs the
# .deb there with `apt-get install ./partner-console_*.deb` (so apt brings in exactly what the
# package declares, on a system that has nothing else), then starts the installed
# /usr/bin/partner-console inside that system under its own Xvfb, waits for its window and its
# listener, and writes a screenshot to $PACKAGE_DIR/fresh-debian-app.png. It also runs the
# installed `partner` (version, a man page through man-db, the sandbox answering over HTTP).
#
# Needs root (debootstrap, chroot, mounts in a private mount namespace) and Debian's archive.
# The minimal system is kept in target/package/bookworm-base and copied for each run. Its apt
# cache is filled beforehand with the files of what the installs below will ask for (the
# package's dependencies and the check's tools), downloaded, not installed: the systems copied
# from it have nothing installed but the minimal base, and `apt-get install ./the.deb` still
# resolves the package's own Depends there (a dependency missing from the list is downloaded
# then, as on any machine); only the wait for Debian's archive moves to --prepare, which the
# test command runs in the background while it compiles.
#
# Usage: tests/package/fresh-debian.sh [PACKAGE_DIR]            (default: target/package)
#        tests/package/fresh-debian.sh --prepare [PACKAGE_DIR]  only the minimal system: the test
#        command runs this in the background while it builds, so the download is off its path.
set -euo pipefail
cd "$(dirname "$0")/../.."
prepare_only=false
if [ "${1:-}" = --prepare ]; then prepare_only=true; shift; fi
out=$(realpath -m "${1:-target/package}")
mkdir -p "$out"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

fail() { echo "fresh debian: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap and chroot)"
command -v debootstrap >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }

base=$out/bookworm-base
if [ ! -f "$base/.complete" ]; then
  echo "fresh debian: debootstrap of a minimal bookworm (once; kept in $base)"
  rm -rf "$base"
  debootstrap --variant=minbase bookworm "$base" "$mirror" >"$out/debootstrap.log" 2>&1 \
    || { tail -20 "$out/debootstrap.log" >&2; fail "debootstrap"; }
  touch "$base/.complete"
fi
# What the package depends on (tauri.conf.json's `depends`, and the two Tauri's bundler adds),
# their dependencies, and the tools the checks here and in update.sh install: into the apt cache.
if [ ! -f "$base/.cached" ]; then
  echo "fresh debian: the packages' files fetched into the minimal system's apt cache (once)"
  prefetch="libdbus-1-3 libssl3 libwebkit2gtk-4.1-0 libgtk-3-0 xvfb xauth x11-utils imagemagick
    dbus dbus-x11 gnome-keyring man-db curl ca-certificates sudo procps"
  cp /etc/resolv.conf "$base/etc/resolv.conf"
  # shellcheck disable=SC2086 # the list is words
  unshare --mount --fork bash -c "
    set -e
    mount -t proc proc '$base/proc'
    chroot '$base' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
      bash -c 'apt-get update -qq && apt-get install -y -q --download-only --no-install-recommends $(echo $prefetch)'
  " >"$out/prefetch.log" 2>&1 || { tail -20 "$out/prefetch.log" >&2; fail "fetching the packages' files"; }
  echo "fresh debian: $(find "$base/var/cache/apt/archives" -name '*.deb' | wc -l) files in the apt cache"
  touch "$base/.cached"
fi
$prepare_only && exit 0

version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')
deb=$(ls "$out"/partner-console_"$version"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no partner-console_${version}_*.deb in $out (run scripts/package.sh)"
system=$(mktemp -d "$out/fresh-debian.XXXXXX")
trap 'rm -rf "$system"' EXIT
cp -a "$base/." "$system/"
rm -f "$system/.complete" "$system/.cached"
# dpkg without its fsyncs in this throwaway system (`force-unsafe-io`): the test checks what is
# installed, not that it survives a power cut. With a writer filling the disk beside it (as the
# test command's background builds do) the fresh-Debian test took 102-112 s with it, 107-116 s
# without (BENCHMARKS.md, issue 47): a small part of what the builds beside it cost.
echo force-unsafe-io >"$system/etc/dpkg/dpkg.cfg.d/partner-test-unsafe-io"
cp "$deb" "$system/tmp/"
cp /etc/resolv.conf "$system/etc/resolv.conf"
cat >"$system/tmp/inside.sh" <<INSIDE
#!/bin/bash
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
apt-get update -qq
echo "fresh debian: apt-get install ./$(basename "$deb")"
apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" >/tmp/apt-install.log 2>&1 \
  || { tail -30 /tmp/apt-install.log; exit 1; }
grep -E '^(Setting up|The following NEW)' /tmp/apt-install.log | wc -l | xargs echo "fresh debian: packages set up:"
# What the check itself needs to look at the app: a display, a session bus with a keychain, and
# tools to find the window and take the picture. These are the test's, not the package's.
apt-get install -y -q --no-install-recommends xvfb xauth x11-utils imagemagick dbus gnome-keyring \
  man-db curl ca-certificates >/tmp/apt-tools.log 2>&1 || { tail -30 /tmp/apt-tools.log; exit 1; }

partner --version
MANWIDTH=80 man partner-sandbox 2>/dev/null | grep -q 'partner-sandbox' || { echo "man partner-sandbox did not render"; exit 1; }
echo "fresh debian: man partner-sandbox renders"

partner sandbox --addr 127.0.0.1:18080 >/tmp/sandbox.log 2>&1 &
for _ in \$(seq 50); do curl -sf http://127.0.0.1:18080/openapi.json >/dev/null && break; sleep 0.2; done
curl -sf http://127.0.0.1:18080/openapi.json >/dev/null || { cat /tmp/sandbox.log; exit 1; }
echo "fresh debian: partner sandbox answers /openapi.json"
kill %1

export HOME=/tmp/home XDG_RUNTIME_DIR=/tmp/run
mkdir -p \$HOME \$XDG_RUNTIME_DIR; chmod 700 \$XDG_RUNTIME_DIR
Xvfb :7 -screen 0 1280x800x24 -nolisten tcp >/tmp/xvfb.log 2>&1 &
xvfb=\$!
for _ in \$(seq 50); do xdpyinfo -display :7 >/dev/null 2>&1 && break; sleep 0.1; done
export DISPLAY=:7 PARTNER_LISTENER_ADDR=127.0.0.1:17070
# A session of its own, so the end can stop all of it: the app, its WebKit processes and the
# session bus (a kill of dbus-run-session alone left the app running after the check).
setsid dbus-run-session -- bash -c 'echo -n fresh | gnome-keyring-daemon --unlock --components=secrets >/dev/null; exec partner-console' >/tmp/app.log 2>&1 &
app=\$!
# Whatever way this script ends (set -e applies inside the trap too: each kill may fail).
trap 'kill -- -\$app 2>/dev/null || true; kill \$xvfb 2>/dev/null || true' EXIT
for _ in \$(seq 120); do
  xwininfo -root -tree | grep -q '"Partner Console"' && break
  kill -0 \$app 2>/dev/null || { cat /tmp/app.log; exit 1; }
  sleep 0.5
done
xwininfo -root -tree | grep -q '"Partner Console"' || { cat /tmp/app.log; echo "no window"; exit 1; }
code=000
for _ in \$(seq 60); do
  code=\$(curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:17070/webhooks -d '{}' || true)
  [ "\$code" != 000 ] && break; sleep 0.5
done
[ "\$code" != 000 ] || { cat /tmp/app.log; echo "listener did not answer"; exit 1; }
sleep 8
import -window root /tmp/fresh-debian-app.png
echo "fresh debian: the installed app's window is up, its listener answered \$code"
kill -- -\$app 2>/dev/null || kill \$app
wait \$app 2>/dev/null || true
kill \$xvfb 2>/dev/null || true
wait \$xvfb 2>/dev/null || true
INSIDE
chmod +x "$system/tmp/inside.sh"

# A private mount namespace: the mounts vanish with it, whatever happens. A clean environment,
# as a fresh system has: none of the test command's own (its XDG folders are root's scratch).
unshare --mount --fork bash -c "
  set -e
  mount -t proc proc '$system/proc'
  mount --rbind /dev '$system/dev'
  mount -t sysfs sys '$system/sys'
  chroot '$system' /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb /tmp/inside.sh
" || fail "inside the fresh system (above)"
cp "$system/tmp/fresh-debian-app.png" "$out/fresh-debian-app.png"
echo "fresh debian: passed; screenshot $out/fresh-debian-app.png"
