#!/usr/bin/env bash
# install-deps.sh — install what headless needs on Debian 12, as root, beside what is there.
# It says what it will install, and from where, before it installs anything. Idempotent: apt
# runs only when a package is missing; a Go 1.26+ already there is used as it is. Never installs dbus-x11 (it makes D-Bus clients autolaunch a
# stray session bus).
set -euo pipefail
# --test: also what the test suite needs (lintian, zsh and fish for the package's checks,
# iproute2 for the network-namespace test, stress-ng for test.sh --load, xvfb, xdotool and
# weston for the browser with windows on X11 and Wayland, Node.js 18+ and npm for the
# independent MCP client and the npm applications, and the real applications from Debian's
# archive that the alias sign-in is tried on: python3-django for Django's admin,
# python3-jupyter-server for a sign-in by password alone, apache2-utils for the htpasswd
# Verdaccio's users are made with; none of them ships a service). --plan: say what would be
# installed and where, and change nothing.
for_tests=no plan=no
for a in "$@"; do
  case $a in
    --test) for_tests=yes ;;
    --plan) plan=yes ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "install-deps: unknown argument $a (usage: scripts/install-deps.sh [--test] [--plan])" >&2; exit 2 ;;
  esac
done

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

# Go 1.26 or newer: one that is there already (scripts/goenv.sh's order: $HEADLESS_GOROOT,
# /usr/local/go, the go on PATH), else Go 1.26.8 installed beside it in headless's own
# directory /usr/local/lib/headless/go (an administrator's /usr/local/go is never touched).
# Debian 12 ships only Go 1.19: its golang-1.19-go fetches the official toolchain module from
# the Go module proxy, checked against the Go checksum database.
. "$(dirname "$0")/goenv.sh"
ours=${HEADLESS_DEPS_ROOT:-}/usr/local/lib/headless/go
goversion=go1.26.8
goarch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
case $goarch in amd64|arm64) ;; *) goarch=unsupported ;; esac
need_go=no
gonote=
if groot=$(headless_goroot); then
  gonote="Go: $(cd / && GOTOOLCHAIN=local GOROOT= "$groot/bin/go" env GOVERSION) in $groot (kept as it is)"
else
  need_go=yes
  gonote="Go: will install $goversion into $ours (from the Go module proxy, with Debian's golang-1.19-go if it is missing; any other Go is left as it is)"
fi

# Node.js 18 or newer and npm, for the test suite only (--test): the independent TypeScript MCP
# client runs on them. Debian 12's own nodejs (18) and npm when none is there.
node_ok() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || return 1
  local v; v=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || return 1
  [ "$v" -ge 18 ] 2>/dev/null
}
if [ "$for_tests" = yes ]; then
  for p in lintian zsh fish iproute2 stress-ng python3-django python3-jupyter-server apache2-utils xvfb xdotool weston; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if node_ok; then
    nodenote="Node.js: $(node --version) and npm $(npm --version 2>/dev/null) on PATH (kept as they are)"
  else
    dpkg-query -W -f='${Status}' nodejs 2>/dev/null | grep -q 'install ok installed' || missing+=(nodejs)
    dpkg-query -W -f='${Status}' npm 2>/dev/null | grep -q 'install ok installed' || missing+=(npm)
    nodenote="Node.js: no Node.js 18+ with npm on PATH: Debian's nodejs and npm (apt)"
  fi
fi

# What will change, before anything does.
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt will install (from Debian's archive): ${missing[*]}" >&2
else
  echo "install-deps: apt: nothing to install" >&2
fi
echo "install-deps: $gonote" >&2
[ -z "${nodenote:-}" ] || echo "install-deps: $nodenote" >&2
if [ "$plan" = yes ]; then
  exit 0
fi
if [ ${#missing[@]} -gt 0 ] || [ "$need_go" = yes ]; then
  [ "$(id -u)" = 0 ] || { echo "install-deps: run as root to install what is missing" >&2; exit 1; }
fi
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ "$need_go" = yes ]; then
  [ "$goarch" != unsupported ] || { echo "install-deps: no Go toolchain for this architecture ($(dpkg --print-architecture)); install Go 1.26 yourself" >&2; exit 1; }
  if [ ! -x /usr/lib/go-1.19/bin/go ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-1.19-go ca-certificates >/dev/null
  fi
  tmp=$(mktemp -d)
  trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  dir=$(cd "$tmp" && GOPATH="$tmp/gopath" GOFLAGS=-modcacherw GO111MODULE=on \
        /usr/lib/go-1.19/bin/go mod download -json "golang.org/toolchain@v0.0.1-$goversion.linux-$goarch" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -f "$dir/bin/go" ] || { echo "install-deps: could not fetch $goversion" >&2; exit 1; }
  mkdir -p "$(dirname "$ours")"
  rm -rf "$ours.new"
  cp -a "$dir" "$ours.new"
  chmod -R u+w,a+rX "$ours.new"
  chmod a+x "$ours.new"/bin/* "$ours.new"/pkg/tool/*/*
  rm -rf "$ours" # headless's own directory only
  mv "$ours.new" "$ours"
  headless_go_ok "$ours" || { echo "install-deps: $ours/bin/go does not run" >&2; exit 1; }
fi
