#!/usr/bin/env bash
# install-deps.sh — install what headless needs on Debian 12, as root. Idempotent: apt runs
# only when a package is missing. Never installs dbus-x11 (it makes D-Bus clients autolaunch a
# stray session bus).
set -euo pipefail

# systemd: systemd-analyze (the user units' check) and systemd-socket-activate (brokerd on an
# inherited socket, as systemd passes it), for the tests. chromium-sandbox: Chromium's setuid
# sandbox, which it needs once its binary is unreadable (below).
pkgs=(gnome-keyring libsecret-tools dbus chromium chromium-sandbox pinentry-curses pinentry-tty util-linux procps systemd)
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

# Chromium and the pinentry programs run with memory that no process of the user can read. An
# exec of a binary the user may not read leaves the process undumpable in the system's user
# namespace, so ptrace and /proc/PID/mem are refused to every process but root's. Red-team
# round 7 read a typed password out of Chromium's memory; a passphrase typed into a pinentry
# is as open. The host refuses to release into a browser whose memory is readable
# (BROWSER_EXPOSED), brokerd to ask a readable pinentry for a passphrase. dpkg-statoverride
# keeps the mode across upgrades of those packages; chromium-sandbox (above) is the sandbox
# Chromium then uses, as its user-namespace sandbox cannot be set up by an undumpable process.
for f in /usr/lib/chromium/chromium /usr/bin/pinentry-curses /usr/bin/pinentry-tty /usr/bin/pinentry-gnome3; do
  [ -e "$f" ] || continue
  [ "$(stat -c %a "$f")" = 711 ] && continue
  [ "$(id -u)" = 0 ] || { echo "install-deps: run as root to make $f unreadable (mode 0711)" >&2; exit 1; }
  dpkg-statoverride --list "$f" >/dev/null && dpkg-statoverride --remove "$f"
  dpkg-statoverride --update --add root root 0711 "$f"
done

# Go 1.26 or newer in /usr/local/go. Debian 12 ships only Go 1.19, so when no suitable Go is
# there, Debian's golang-1.19-go fetches the official Go 1.26.8 toolchain module from the Go
# module proxy (checked against the Go checksum database) and it is installed to /usr/local/go.
goroot=${HEADLESS_GOROOT:-/usr/local/go}
goversion=go1.26.8
go_ok() {
  [ -x "$goroot/bin/go" ] || return 1
  local v major rest minor
  v=$("$goroot/bin/go" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}; major=${v%%.*}; rest=${v#*.}; minor=${rest%%.*}
  [ "$major" -gt 1 ] || { [ "$major" = 1 ] && [ "$minor" -ge 26 ]; }
}
if ! go_ok; then
  [ "$(id -u)" = 0 ] || { echo "install-deps: run as root to install Go to $goroot" >&2; exit 1; }
  echo "install-deps: installing $goversion to $goroot (from the Go module proxy)" >&2
  if [ ! -x /usr/lib/go-1.19/bin/go ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-1.19-go ca-certificates >/dev/null
  fi
  tmp=$(mktemp -d)
  trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  dir=$(cd "$tmp" && GOPATH="$tmp/gopath" GOFLAGS=-modcacherw GO111MODULE=on \
        /usr/lib/go-1.19/bin/go mod download -json "golang.org/toolchain@v0.0.1-$goversion.linux-amd64" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -f "$dir/bin/go" ] || { echo "install-deps: could not fetch $goversion" >&2; exit 1; }
  rm -rf "$goroot.new"
  cp -a "$dir" "$goroot.new"
  chmod -R u+w,a+rX "$goroot.new"
  chmod a+x "$goroot.new"/bin/* "$goroot.new"/pkg/tool/*/*
  rm -rf "$goroot"
  mv "$goroot.new" "$goroot"
  go_ok || { echo "install-deps: $goroot/bin/go does not run" >&2; exit 1; }
fi
