#!/usr/bin/env bash
# Checks the packages that scripts/package.sh built, as a user's machine would meet them:
#   - the .deb's control file: name, the workspace's version, the dependencies;
#   - every shared library the two programs load is provided by a declared dependency (or by
#     one of theirs), and apt can resolve those dependencies from the archive;
#   - its file list: app, `partner`, desktop entry, icons, man pages, completions;
#   - desktop-file-validate on the desktop entry;
#   - unpacked: no end-to-end test hooks in the programs, `partner --version`, the man pages,
#     `bash -n` on the bash completions;
#   - the app started from the unpacked package under Xvfb: its window appears, its listener
#     answers, and a screenshot of it is written to $out/installed-app.png;
#   - the .rpm: name, version, requirements and the same files.
#
# Usage: tests/package/check.sh [PACKAGE_DIR]     (default: target/package)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
out=$(realpath "${1:-target/package}")

fail() { echo "package check: FAILED: $*" >&2; exit 1; }
ok() { echo "  ok  $*"; }

version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')
deb=$(ls "$out"/partner-console_"$version"_*.deb 2>/dev/null | head -1)
rpm=$(ls "$out"/partner-console-"$version"-*.rpm 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no partner-console_${version}_*.deb in $out (run scripts/package.sh)"
echo "package check: $deb"

work=$(mktemp -d)
app_pid=""
cleanup() {
  if [ -n "$app_pid" ]; then kill "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; fi
  # The session bus may have started the document portal, which mounts a FUSE folder there.
  fusermount -uz "$work/run/doc" 2>/dev/null || umount -l "$work/run/doc" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# --- control file -------------------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = partner-console ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', the workspace says $version"
[ "$(field Architecture)" = amd64 ] || fail "Architecture is '$(field Architecture)'"
depends=$(field Depends)
# libssl3: SQLCipher (the support desk's encrypted index) links the system libcrypto.
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 libdbus-1-3 libssl3; do
  grep -qE "(^|, )$dep( |,|$)" <<<"$depends" || fail "Depends ($depends) lacks $dep"
done
grep -q gnome-keyring <<<"$(field Recommends)" || fail "Recommends lacks a Secret Service (gnome-keyring)"
[ -n "$(field Description)" ] || fail "no Description"
ok "control: partner-console $version amd64; Depends: $depends; Recommends: $(field Recommends)"

# --- file list ----------------------------------------------------------------------------
dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./||' -e 's|^|/|' -e 's|/$||' >"$work/files"
expect_file() { grep -qxF "$1" "$work/files" || fail "the package lacks $1"; }
expect_file /usr/bin/partner-console
expect_file /usr/bin/partner
desktop_entry=$(grep -E '^/usr/share/applications/.*\.desktop$' "$work/files" | head -1)
[ -n "$desktop_entry" ] || fail "the package has no desktop entry"
for size in 16 24 32 48 64 128 256 512; do
  expect_file "/usr/share/icons/hicolor/${size}x${size}/apps/partner-console.png"
done
expect_file /usr/share/man/man1/partner.1.gz
man_pages=$(grep -cE '^/usr/share/man/man1/partner.*\.1\.gz$' "$work/files")
[ "$man_pages" -ge 10 ] || fail "only $man_pages man pages"
expect_file /usr/share/bash-completion/completions/partner
expect_file /usr/share/zsh/vendor-completions/_partner
expect_file /usr/share/fish/vendor_completions.d/partner.fish
ok "files: app, partner, $desktop_entry, icons 16-512, $man_pages man pages, bash/zsh/fish completions"

# --- unpacked -----------------------------------------------------------------------------
unpacked=$work/root
dpkg-deb -x "$deb" "$unpacked"

desktop-file-validate "$unpacked$desktop_entry" || fail "desktop-file-validate refused $desktop_entry"
grep -qx 'Name=Partner Console' "$unpacked$desktop_entry" || fail "desktop entry's Name"
grep -qE '^Categories=.*Development' "$unpacked$desktop_entry" || fail "desktop entry's Categories"
grep -qx 'Icon=partner-console' "$unpacked$desktop_entry" || fail "desktop entry's Icon"
grep -qE '^Comment=.+' "$unpacked$desktop_entry" || fail "desktop entry has no Comment"
# The link a `partner-console://` click gives is the app's argument (%u), and the entry says it
# handles that scheme (the desktop registers it from the installed entry).
grep -qx 'Exec=partner-console %u' "$unpacked$desktop_entry" || fail "desktop entry's Exec (with %u for links)"
grep -qx 'MimeType=x-scheme-handler/partner-console;' "$unpacked$desktop_entry" || fail "desktop entry does not register partner-console:// links"
ok "desktop entry valid: $(grep -E '^(Name|Categories|Comment)=' "$unpacked$desktop_entry" | tr '\n' ' ')"

for size in 16 256; do
  identify -format '%wx%h' "$unpacked/usr/share/icons/hicolor/${size}x${size}/apps/partner-console.png" \
    | grep -qx "${size}x${size}" || fail "the ${size}x${size} icon is not ${size}x${size}"
done

# The end-to-end tests' hooks (the app's `test-hooks` feature) are not in what users run: no
# dialog answered from a folder, no update accepted without the user's yes.
for program in partner-console partner; do
  hook=$(grep -aoE 'PARTNER_TEST_(DIALOG_DIR|ACCEPT_UPDATE|UPDATE_PUBKEY)' "$unpacked/usr/bin/$program" | head -1 || true)
  if [ -n "$hook" ]; then
    fail "$program carries the end-to-end tests' hooks ($hook)"
  fi
done
ok "no test hooks in the programs"

partner_version=$("$unpacked/usr/bin/partner" --version)
grep -q " $version" <<<"$partner_version" || fail "partner --version says '$partner_version'"
ok "partner --version: $partner_version"

zcat "$unpacked/usr/share/man/man1/partner.1.gz" | grep -q '^\.TH partner 1' || fail "partner.1 has no .TH header"
zcat "$unpacked/usr/share/man/man1/partner-listen.1.gz" | grep -q 'listen' || fail "partner-listen.1"
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$unpacked/usr/share/man/man1/partner.1.gz" 2>/dev/null | grep -q 'SUBCOMMANDS\|partner-listen' \
    || fail "man could not render partner.1"
fi
bash -n "$unpacked/usr/share/bash-completion/completions/partner" || fail "bash -n on the completions"
# The completions complete: sourcing the script and asking for `partner li<TAB>`.
completed=$(bash -c "source '$unpacked/usr/share/bash-completion/completions/partner'
  COMP_WORDS=(partner li); COMP_CWORD=1; COMP_LINE='partner li'; COMP_POINT=10
  _partner partner li partner; printf '%s\n' \"\${COMPREPLY[@]}\"")
grep -qx listen <<<"$completed" || fail "bash completion of 'partner li' gave '$completed'"
ok "man pages render; bash completion of 'partner li' gives: $(tr '\n' ' ' <<<"$completed")"

# --- shared libraries: each provided by a declared dependency or one of theirs -------------
python3 - "$unpacked" "$depends" <<'PY' || fail "a shared library is not covered by the declared dependencies"
import re, subprocess, sys
unpacked, depends = sys.argv[1], sys.argv[2]
declared = {re.split(r"[ (]", d.strip())[0] for alt in depends.split(",") for d in alt.split("|")}
# An alternative another release names (libssl3t64 on Ubuntu 24.04) is not in this one's lists.
declared = {d for d in declared if subprocess.run(["apt-cache", "show", d], capture_output=True).returncode == 0}
closure = subprocess.run(
    ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
     "--no-breaks", "--no-replaces", "--no-enhances", *sorted(declared)],
    capture_output=True, text=True, check=True).stdout
covered = {line.strip().split(":")[-1].strip().strip("<>") for line in closure.splitlines()}
covered |= declared
# Essential packages are on every system apt installs onto.
essential = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Essential}\n"],
                           capture_output=True, text=True).stdout
covered |= {l.split()[0] for l in essential.splitlines() if l.endswith(" yes")}
ldconfig = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
paths = {}
for line in ldconfig.splitlines()[1:]:
    m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
    if m and "x86-64" in m.group(2):
        paths.setdefault(m.group(1), m.group(3))
missing = []
for program in ("usr/bin/partner-console", "usr/bin/partner"):
    dynamic = subprocess.run(["readelf", "-d", f"{unpacked}/{program}"], capture_output=True, text=True, check=True).stdout
    for soname in re.findall(r"Shared library: \[([^\]]+)\]", dynamic):
        path = paths.get(soname)
        if path is None:
            missing.append(f"{program}: {soname} is not on this machine"); continue
        owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if owner.returncode != 0:
            real = subprocess.run(["realpath", path], capture_output=True, text=True).stdout.strip()
            owner = subprocess.run(["dpkg", "-S", real], capture_output=True, text=True)
        package = owner.stdout.split(":")[0].strip()
        if package not in covered:
            missing.append(f"{program}: {soname} comes from {package}, which no dependency brings")
        else:
            print(f"      {program}: {soname} <- {package}")
for m in missing: print("      " + m, file=sys.stderr)
sys.exit(1 if missing else 0)
PY
ok "every shared library comes from a declared dependency or one of theirs"

apt-get install --simulate -qq "$deb" >"$work/apt-sim" 2>&1 || { cat "$work/apt-sim" >&2; fail "apt cannot resolve the package's dependencies"; }
ok "apt-get install --simulate resolves the dependencies"

# --- the installed app, started under Xvfb --------------------------------------------------
export XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config XDG_CACHE_HOME=$work/cache XDG_RUNTIME_DIR=$work/run
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
listener_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.1; done
export DISPLAY=$display PARTNER_LISTENER_ADDR=127.0.0.1:$listener_port PARTNER_LOG=info
dbus-run-session -- bash -c "
  echo -n package-check | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  exec '$unpacked/usr/bin/partner-console'" >"$work/app.log" 2>&1 &
app_pid=$!
window=""
for _ in $(seq 120); do
  window=$(xwininfo -root -tree 2>/dev/null | grep -m1 '"Partner Console"' || true)
  [ -n "$window" ] && break
  kill -0 "$app_pid" 2>/dev/null || { cat "$work/app.log" >&2; fail "the installed app exited"; }
  sleep 0.5
done
[ -n "$window" ] || { cat "$work/app.log" >&2; fail "no 'Partner Console' window within 60 s"; }
answered=""
for _ in $(seq 60); do
  answered=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$listener_port/webhooks" \
    -H 'content-type: application/json' -d '{}' || true)
  [ -n "$answered" ] && [ "$answered" != 000 ] && break
  sleep 0.5
done
[ -n "$answered" ] && [ "$answered" != 000 ] || { cat "$work/app.log" >&2; fail "the app's listener did not answer"; }
# Let the embedded sandbox sign in and the first screen fill before the screenshot.
sleep 8
import -display "$display" -window root "$out/installed-app.png"
ok "installed app: window $(awk '{print $1}' <<<"$window"), listener answered $answered on 127.0.0.1:$listener_port, screenshot $out/installed-app.png"
kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
if grep -q 'panicked' "$work/app.log"; then cat "$work/app.log" >&2; fail "the installed app panicked"; fi

# --- the rpm ------------------------------------------------------------------------------
if [ -n "$rpm" ] && command -v rpm >/dev/null; then
  [ "$(rpm -qp --qf '%{NAME} %{VERSION}' "$rpm" 2>/dev/null)" = "partner-console $version" ] || fail "rpm name/version"
  rpm -qpR "$rpm" 2>/dev/null | grep -q dbus-libs || fail "rpm requirements lack dbus-libs"
  rpm -qpR "$rpm" 2>/dev/null | grep -q openssl-libs || fail "rpm requirements lack openssl-libs"
  rpm -qpl "$rpm" 2>/dev/null >"$work/rpm-files"
  for f in /usr/bin/partner-console /usr/bin/partner /usr/share/man/man1/partner.1.gz \
    /usr/share/bash-completion/completions/partner /usr/share/icons/hicolor/256x256/apps/partner-console.png; do
    grep -qxF "$f" "$work/rpm-files" || fail "the rpm lacks $f"
  done
  ok "rpm: $(basename "$rpm"), requires $(rpm -qpR "$rpm" 2>/dev/null | grep -v '^rpmlib' | tr '\n' ' ')"
elif [ -n "$rpm" ]; then
  echo "  --  rpm not checked: the rpm tool is not installed"
fi
echo "package check: passed"
