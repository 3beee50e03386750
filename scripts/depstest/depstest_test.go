// Package depstest tests scripts/install-deps.sh's decisions, in its --plan mode, against a
// fake root and PATH: which Go it uses or installs and where, whether it installs Debian's
// Node.js, and that it says so before changing anything. Nothing is installed.
package depstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// world is a fake root (HEADLESS_DEPS_ROOT) and a PATH of fake programs.
type world struct {
	t         *testing.T
	root, bin string
	installed map[string]bool // what the fake dpkg-query reports installed
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, root: t.TempDir(), bin: t.TempDir(), installed: map[string]bool{}}
	for _, p := range []string{"gnome-keyring", "libsecret-tools", "dbus", "chromium", "chromium-sandbox", "pinentry-curses", "pinentry-tty", "util-linux", "procps", "systemd", "lintian", "zsh", "fish", "iproute2", "stress-ng", "python3-django", "python3-jupyter-server", "apache2-utils", "xvfb", "xdotool", "weston"} {
		w.installed[p] = true
	}
	return w
}

func (w *world) script(path, body string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		w.t.Fatal(err)
	}
}

// goAt puts a fake go of version v in GOROOT dir.
func (w *world) goAt(dir, v string) {
	w.script(filepath.Join(dir, "bin", "go"), fmt.Sprintf("case \"$1 $2\" in 'env GOVERSION') echo %s ;; 'env GOROOT') echo %s ;; esac\n", v, dir))
}

func (w *world) node(v string) {
	w.script(filepath.Join(w.bin, "node"), fmt.Sprintf("[ \"$1\" = --version ] && { echo %s; exit 0; }; echo %s\n", v, strings.Split(strings.TrimPrefix(v, "v"), ".")[0]))
	w.script(filepath.Join(w.bin, "npm"), "echo 9.2.0\n")
}

// plan runs install-deps.sh --plan with args and returns what it said.
func (w *world) plan(args ...string) string {
	w.t.Helper()
	var inst []string
	for p, ok := range w.installed {
		if ok {
			inst = append(inst, p)
		}
	}
	w.script(filepath.Join(w.bin, "dpkg-query"), "for p in "+strings.Join(inst, " ")+"; do [ \"$p\" = \"$3\" ] && { echo 'install ok installed'; exit 0; }; done; exit 1\n")
	// Anything that would change the machine fails the test.
	for _, p := range []string{"apt-get", "rm", "mv", "cp"} {
		w.script(filepath.Join(w.bin, p), "echo \"CHANGED: "+p+" $*\"; exit 1\n")
	}
	for _, p := range []string{"sed", "dirname", "sh", "bash", "cat", "id", "grep"} {
		if real, err := exec.LookPath(p); err == nil {
			os.Symlink(real, filepath.Join(w.bin, p))
		}
	}
	script, _ := filepath.Abs("../install-deps.sh")
	cmd := exec.Command("/bin/bash", append([]string{script, "--plan"}, args...)...)
	cmd.Env = []string{"PATH=" + w.bin, "HEADLESS_DEPS_ROOT=" + w.root, "HOME=" + w.root}
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("install-deps --plan %v: %v\n%s", args, err, out)
	}
	if strings.Contains(string(out), "CHANGED:") {
		w.t.Fatalf("install-deps --plan changed something:\n%s", out)
	}
	return string(out)
}

func TestGoDecisions(t *testing.T) {
	t.Run("an older Go in /usr/local/go is left, ours is installed beside it", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/go"), "go1.22.5")
		out := w.plan()
		want := "install-deps: Go: will install go1.26.8 into " + w.root + "/usr/local/lib/headless/go (from the Go module proxy, with Debian's golang-1.19-go if it is missing; any other Go is left as it is)"
		if !strings.Contains(out, want) {
			t.Errorf("plan:\n%s\nwant the line %q", out, want)
		}
	})
	t.Run("a Go 1.26 in /usr/local/go is used", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/go"), "go1.26.8")
		if out := w.plan(); !strings.Contains(out, "install-deps: Go: go1.26.8 in "+w.root+"/usr/local/go (kept as it is)") {
			t.Errorf("plan:\n%s", out)
		}
	})
	t.Run("a newer go on PATH is used", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/go"), "go1.21.0")
		other := filepath.Join(w.root, "opt/go")
		w.goAt(other, "go1.27.1")
		os.Symlink(filepath.Join(other, "bin", "go"), filepath.Join(w.bin, "go"))
		if out := w.plan(); !strings.Contains(out, "install-deps: Go: go1.27.1 in "+other+" (kept as it is)") {
			t.Errorf("plan:\n%s", out)
		}
	})
	t.Run("ours, installed before, is used", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/lib/headless/go"), "go1.26.8")
		if out := w.plan(); !strings.Contains(out, "(kept as it is)") {
			t.Errorf("plan:\n%s", out)
		}
	})
}

func TestNodeAndPackageDecisions(t *testing.T) {
	t.Run("no Node.js: Debian's nodejs and npm for the tests, not for the demo", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/go"), "go1.26.8")
		if out := w.plan("--test"); !strings.Contains(out, "install-deps: apt will install (from Debian's archive): nodejs npm") {
			t.Errorf("plan --test:\n%s", out)
		}
		if out := w.plan(); !strings.Contains(out, "install-deps: apt: nothing to install") || strings.Contains(out, "install-deps: Node.js") {
			t.Errorf("plan (the demo's):\n%s", out)
		}
	})
	t.Run("Node.js 18 with npm is used", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/go"), "go1.26.8")
		w.node("v18.20.4")
		if out := w.plan("--test"); !strings.Contains(out, "install-deps: apt: nothing to install") || !strings.Contains(out, "install-deps: Node.js: v18.20.4 and npm 9.2.0 on PATH (kept as they are)") {
			t.Errorf("plan --test:\n%s", out)
		}
	})
	t.Run("Node.js 16 is too old", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/go"), "go1.26.8")
		w.node("v16.20.0")
		if out := w.plan("--test"); !strings.Contains(out, "apt will install (from Debian's archive): nodejs npm") {
			t.Errorf("plan --test:\n%s", out)
		}
	})
	t.Run("a missing package is named before anything changes", func(t *testing.T) {
		w := newWorld(t)
		w.goAt(filepath.Join(w.root, "usr/local/go"), "go1.26.8")
		w.installed["chromium-sandbox"] = false
		if out := w.plan(); !strings.Contains(out, "install-deps: apt will install (from Debian's archive): chromium-sandbox") {
			t.Errorf("plan:\n%s", out)
		}
	})
}
