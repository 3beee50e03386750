#!/usr/bin/env bash
# install-deps.sh — install what headless needs on Debian 12, as root. Idempotent: apt runs
# only when a package is missing. Never installs dbus-x11 (it makes D-Bus clients autolaunch a
# stray session bus).
set -euo pipefail

# systemd: systemd-analyze (the user units' check) and systemd-socket-activate (brokerd on an
# inherited socket, as systemd passes it), for the tests. chromium-sandbox: Chromium's setuid
# sandbox, which Chromium needs as a non-root user: the host starts it without the
# user-namespace sandbox (--disable-namespace-sandbox: a renderer in a namespace the user owns
# is open to every process of the user). Nothing of these packages is changed afterwards; the
# groups, the seal key and the set-gid binaries are scripts/install.sh's (or the .deb's).
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
