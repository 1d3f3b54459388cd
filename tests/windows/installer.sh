#!/usr/bin/env bash
# The Windows installer of the `partner` command (scripts/build-cli-installer.sh), under Wine:
# built from PARTNER_EXE (stored uncompressed, so it takes seconds), then, per user and
# machine-wide (/ALLUSERS), installed silently (/S); a new `wine cmd /c`, whose PATH Wine builds
# from the registry as Windows does for a new session, runs `partner --version` by name; the
# uninstaller (/S) takes the files, the Add/Remove Programs entry and the PATH entry away, and
# the PATH is then exactly what it was (an unexpanded %USERPROFILE% entry in it stays so). Once
# more per user with a user PATH longer than NSIS's 1024-character strings, where a PATH cut
# short would show; there only the registry is checked, because Wine 8 itself passes at most
# 1023 characters of the user's PATH to a new process (real Windows takes far more).
# Called by tests/windows/run.sh with the Wine prefix it makes; alone:
#   tests/windows/installer.sh PARTNER_EXE       (Wine prefix: PARTNER_WINE_PREFIX or run.sh's)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 1 ] || { echo "usage: tests/windows/installer.sh PARTNER_EXE" >&2; exit 2; }
partner_exe=$1

export WINEPREFIX=${WINEPREFIX:-${PARTNER_WINE_PREFIX:-/var/tmp/partner-console-wine}}
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "installer: no Wine prefix at $WINEPREFIX: run tests/windows/run.sh (it makes one)" >&2
  exit 1
fi

fail() { echo "installer: FAILED: $*" >&2; exit 1; }
version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')
user_env='HKCU\Environment'
machine_env='HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
uninstall_key='Software\Microsoft\Windows\CurrentVersion\Uninstall\PartnerConsoleCLI'

# A registry value's data as `reg query` prints it (empty when the value is absent).
reg_value() {
  { wine reg query "$1" /v "$2" 2>/dev/null || true; } | tr -d '\r' |
    sed -n "s/^    $2    REG_[A-Z_]*    //Ip"
}
# A Windows path as Linux sees it inside the prefix.
unix_path() { winepath -u "$1" 2>/dev/null | tr -d '\r'; }
# `partner --version` by name in a new console: what a user types in a new terminal.
partner_by_name() { wine cmd /c "partner --version" 2>&1 | tr -d '\r'; }

scratch=$(mktemp -d)
user_path_before=$(reg_value "$user_env" Path)
machine_path_before=$(reg_value "$machine_env" PATH)
restore() {
  # Whatever a failed run left: the folders, the entries and the PATHs as they were.
  for dir in "$scratch/user-dir" "$scratch/machine-dir"; do
    [ -f "$dir" ] && rm -rf "$(cat "$dir")"
  done
  wine reg delete "HKCU\\$uninstall_key" /f >/dev/null 2>&1 || true
  wine reg delete "HKLM\\$uninstall_key" /f >/dev/null 2>&1 || true
  if [ -n "$user_path_before" ]; then
    wine reg add "$user_env" /v Path /t REG_EXPAND_SZ /d "$user_path_before" /f >/dev/null 2>&1 || true
  else
    wine reg delete "$user_env" /v Path /f >/dev/null 2>&1 || true
  fi
  wine reg add "$machine_env" /v PATH /t REG_EXPAND_SZ /d "$machine_path_before" /f >/dev/null 2>&1 || true
  wineserver -k 2>/dev/null || true
  rm -rf "$scratch"
}
trap restore EXIT

start=$SECONDS
installer=$(scripts/build-cli-installer.sh --exe "$partner_exe" --out "$scratch/out" --fast 2>"$scratch/build.log" | tail -1) ||
  { cat "$scratch/build.log" >&2; fail "building the installer"; }
echo "installer: built in $((SECONDS - start)) s: $(du -h "$installer" | cut -f1) $(basename "$installer")"
[ -f "$scratch/out/partner.exe.debug" ] || fail "no partner.exe.debug beside the installer (the debug build has debug information to split off)"

# check_mode MODE USER_PATH: install, run by name, uninstall; MODE is user or machine. The user's
# PATH is set to USER_PATH first; "long" checks only the registry (see the top).
check_mode() {
  local mode=$1 user_path=$2 by_name=true args=(/S) env_key=$user_env value=Path path_before dir listing
  [ "$user_path" = long ] && { user_path=$long_path; by_name=false; }
  wine reg add "$user_env" /v Path /t REG_EXPAND_SZ /d "$user_path" /f >/dev/null
  path_before=$user_path
  if [ "$mode" = machine ]; then
    args+=(/ALLUSERS)
    env_key=$machine_env
    value=PATH
    path_before=$machine_path_before
  fi
  local t=$SECONDS
  wine "$installer" "${args[@]}" || fail "$mode: the installer exited with $?"
  if [ "$mode" = machine ]; then
    dir=$(reg_value "HKLM\\$uninstall_key" InstallLocation)
    [ "$dir" = 'C:\Program Files\Partner Console CLI' ] || fail "machine: installed in '$dir', not Program Files"
  else
    dir=$(reg_value "HKCU\\$uninstall_key" InstallLocation)
    [ "$(reg_value "HKLM\\$uninstall_key" InstallLocation)" = "" ] || fail "user: a machine-wide entry was written"
    case $dir in *'\AppData\Local\Programs\Partner Console CLI') ;; *) fail "user: installed in '$dir'" ;; esac
  fi
  unix_path "$dir" >"$scratch/$mode-dir"
  listing=$(cd "$(cat "$scratch/$mode-dir")" && find . -type f | sort)
  [ "$listing" = "$(printf './bin/partner.exe\n./uninstall.exe')" ] || fail "$mode: the folder holds: $listing"

  local path_after
  path_after=$(reg_value "$env_key" "$value")
  [ "$path_after" = "$path_before;$dir\bin" ] ||
    fail "$mode: PATH after the install is not the one before plus '$dir\bin': $path_after"
  [ "$(reg_value "$user_env" Path)" = "$user_path" ] || [ "$mode" = user ] ||
    fail "machine: the user's PATH changed: $(reg_value "$user_env" Path)"
  local answer=""
  if $by_name; then
    answer=$(partner_by_name) || true
    [[ $answer == "partner $version "* ]] || fail "$mode: 'partner --version' in a new console answered: $answer"
    answer="; 'partner --version' by name in a new console: $answer"
  fi
  echo "installer: $mode: installed in $dir, bin on the ${#path_after}-character PATH$answer"

  wine "$dir\\uninstall.exe" /S || fail "$mode: the uninstaller exited with $?"
  # The uninstaller copies itself to a temporary folder and goes on from there: wait (at most
  # 60 s) for its last step, the Add/Remove Programs entry deleted after the folder.
  local i entry_key="HKCU\\$uninstall_key"
  [ "$mode" = machine ] && entry_key="HKLM\\$uninstall_key"
  for i in $(seq 300); do
    if [ ! -e "$(cat "$scratch/$mode-dir")" ] && [ -z "$(reg_value "$entry_key" InstallLocation)" ]; then
      break
    fi
    sleep 0.2
  done
  [ ! -e "$(cat "$scratch/$mode-dir")" ] || fail "$mode: the folder is still there after the uninstall"
  # Read until it is as before (at most 5 s): a `wine reg query` made while the uninstaller's
  # processes are still ending can fail and read as empty (seen once in CI with the long PATH,
  # then not in three runs of this script); a PATH the uninstaller really changed stays changed.
  for i in $(seq 25); do
    path_after=$(reg_value "$env_key" "$value")
    [ "$path_after" = "$path_before" ] && break
    sleep 0.2
  done
  [ "$path_after" = "$path_before" ] || fail "$mode: PATH after the uninstall is not the one before: $path_after"
  [ "$(reg_value "HKCU\\$uninstall_key" InstallLocation)$(reg_value "HKLM\\$uninstall_key" InstallLocation)" = "" ] ||
    fail "$mode: the Add/Remove Programs entry is still there"
  if $by_name && answer=$(partner_by_name); then
    fail "$mode: 'partner' still runs by name after the uninstall: $answer"
  fi
  echo "installer: $mode: uninstalled: folder, entry and PATH entry gone, the PATH as before ($((SECONDS - t)) s)"
}

# A user PATH with an entry that must stay unexpanded; and one longer than NSIS's strings.
short_path='%USERPROFILE%\bin;C:\Tools\bin'
long_path='%USERPROFILE%\bin'
for i in $(seq 1 60); do long_path+=";C:\\Tools\\some-tool-number-$i\\bin"; done
[ ${#long_path} -gt 1024 ] || fail "the test's long PATH is not longer than 1024 characters"

check_mode user "$short_path"
check_mode machine "$short_path"
check_mode user long
echo "installer: passed in $((SECONDS - start)) s"
