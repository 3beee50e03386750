#!/usr/bin/env bash
# install-deps.sh — install what headless needs on Debian 12, as root. Idempotent: apt runs
# only when a package is missing. Never installs dbus-x11 (it makes D-Bus clients autolaunch a
# stray session bus).
set -euo pipefail

pkgs=(gnome-keyring libsecret-tools dbus chromium pinentry-curses pinentry-tty util-linux procps)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "install-deps: run as root to install: ${missing[*]}" >&2; exit 1; }
  echo "install-deps: installing ${missing[*]} (about a minute)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Go 1.26 or newer (Debian 12's golang package is too old; the toolchain lives in /usr/local/go).
export PATH=/usr/local/go/bin:$PATH
if ! command -v go >/dev/null; then
  echo "install-deps: Go 1.26+ is required (expected in /usr/local/go/bin)" >&2; exit 1
fi
v=$(go env GOVERSION); v=${v#go}; major=${v%%.*}; rest=${v#*.}; minor=${rest%%.*}
if [ "$major" -lt 1 ] || { [ "$major" = 1 ] && [ "$minor" -lt 26 ]; }; then
  echo "install-deps: Go 1.26+ is required, found $v" >&2; exit 1
fi
