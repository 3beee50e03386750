# goenv.sh — sourced by the scripts: puts a Go 1.26 or newer first on PATH, the first of
#   $HEADLESS_GOROOT, /usr/local/go, the go already on PATH, /usr/local/lib/headless/go
# (the one scripts/install-deps.sh installs, beside any other Go, when none of the others is
# new enough). Sourcing it changes nothing on disk.
headless_go_ok() { # GOROOT: a go there that runs and is 1.26 or newer
  [ -x "$1/bin/go" ] || return 1
  local v major rest minor
  # GOTOOLCHAIN=local, from /: an older go must answer for itself, never download the
  # toolchain a go.mod names (that would change the machine, and report that one instead).
  v=$(cd / && GOTOOLCHAIN=local GOROOT= "$1/bin/go" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}; major=${v%%.*}; rest=${v#*.}; minor=${rest%%.*}
  [ "$major" -gt 1 ] 2>/dev/null || { [ "$major" = 1 ] && [ "$minor" -ge 26 ] 2>/dev/null; }
}
headless_goroot() { # prints the GOROOT to use, or nothing
  local r path_go=""
  command -v go >/dev/null 2>&1 && path_go=$(cd / && GOTOOLCHAIN=local GOROOT= go env GOROOT 2>/dev/null)
  # HEADLESS_DEPS_ROOT: a fake root for scripts/depstest (where /usr/local lives), "" here.
  for r in ${HEADLESS_GOROOT:+"$HEADLESS_GOROOT"} "${HEADLESS_DEPS_ROOT:-}/usr/local/go" ${path_go:+"$path_go"} "${HEADLESS_DEPS_ROOT:-}/usr/local/lib/headless/go"; do
    if headless_go_ok "$r"; then echo "$r"; return 0; fi
  done
  return 1
}
if headless_gr=$(headless_goroot); then
  export PATH="$headless_gr/bin:$PATH"
  unset GOROOT # the chosen go finds its own; a stale one would mix toolchains
fi
unset headless_gr
