//go:build linux

package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestForeignCodeInTheBrowserRefused: before every release the host checks that no process of
// the browser runs code from a file that is not a root-owned system file, and kills a browser
// that does (red-team rounds 6d and 6e made Chromium load libraries of theirs, through the
// user's NSS database and the profile's WidevineCdm hint, and read the password). Here the
// configured Chromium is an ELF program of the user's that preloads a library of its own into
// the real Chromium: the sign-in is BROWSER_TAMPERED, nobody is asked, nothing is typed.
func TestForeignCodeInTheBrowserRefused(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	gcc := realtest.Binary(t, "gcc")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	libDir := filepath.Join(dir, "lib")
	binDir := filepath.Join(dir, "bin")
	os.Mkdir(libDir, 0o755)
	os.Mkdir(binDir, 0o755)
	lib := filepath.Join(libDir, "agent.so")
	wrapper := filepath.Join(binDir, "chromium")
	for _, c := range []struct{ src, out string }{
		{"void agent_was_here(void) {}\n", lib},
		{fmt.Sprintf(`#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) { setenv("LD_PRELOAD", %q, 1); argv[0] = "/usr/lib/chromium/chromium"; execv(argv[0], argv); return 127; }
`, lib), wrapper},
	} {
		src := c.out + ".c"
		os.WriteFile(src, []byte(c.src), 0o644)
		args := []string{"-o", c.out, src}
		if strings.HasSuffix(c.out, ".so") {
			args = append([]string{"-shared", "-fPIC"}, args...)
		}
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v %s", c.out, err, out)
		}
		os.Chmod(c.out, 0o755)
	}
	ls := newLoginSite(t)
	canary := newCanary()
	ls.SetAccount("alice@example.test", canary)
	program, plog := presencetest.FakePinentry(t, "approve")
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5},"chromium":%q}`, program, wrapper))
	lsEnroll(t, e, ls.Origin(), "main", "alice@example.test", canary)
	e.start(t)
	st := e.hostStatus(t)
	maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", st.BrowserPID))
	if !strings.Contains(string(maps), lib) {
		t.Fatalf("the browser does not map the preloaded library: the test would prove nothing")
	}
	refusedAsTampered(t, e, ls, plog, st.BrowserPID)
	e.run("", "headless", "stop")
}

// TestProfileSwapUnderTheBrowserRefused: the profile's blockers (WidevineCdm, whose hint
// names a library every zygote loads; Default/Sessions) are watched for the browser's whole
// life. Red-team round 9 swapped WidevineCdm for a directory of its own right after Chromium's
// exec and back 2.5 s later: its library ran in every renderer, unseen by the mappings scan
// (the processes are undumpable). Here the swap comes after the start, and back: the sign-in
// is BROWSER_TAMPERED, nobody is asked, nothing is typed, the browser is killed, and the next
// start works.
func TestProfileSwapUnderTheBrowserRefused(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	ls := newLoginSite(t)
	canary := newCanary()
	ls.SetAccount("alice@example.test", canary)
	program, plog := presencetest.FakePinentry(t, "approve")
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5}}`, program))
	lsEnroll(t, e, ls.Origin(), "main", "alice@example.test", canary)
	e.start(t)
	st := e.hostStatus(t)
	wv := filepath.Join(e.profileDir(), "WidevineCdm")
	prep := filepath.Join(e.root, "data", "headless", "prep")
	os.MkdirAll(prep, 0o700)
	for i := 0; i < 2; i++ { // there and back: the blocker is in place again
		if err := unix.Renameat2(unix.AT_FDCWD, wv, unix.AT_FDCWD, prep, unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Lstat(wv); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("WidevineCdm is not the blocker again: %v %v", fi, err)
	}
	refusedAsTampered(t, e, ls, plog, st.BrowserPID)
	// The next command relaunches it (answering BROWSER_CRASHED), and the new browser is
	// watched anew: a sign-in works.
	if r := e.run("", "headless", "visit", ls.URL("/login"), "--json"); r.code != 0 && !strings.Contains(r.stdout, "BROWSER_CRASHED") {
		t.Fatalf("the visit after the kill: %s %s", r.stdout, r.stderr)
	}
	lsVisit(t, e, ls.URL("/login"))
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	e.run("", "headless", "stop")
}

// refusedAsTampered visits the login page and signs in as "main": BROWSER_TAMPERED, nobody
// asked (plog), nothing typed or posted, and the browser (browserPID) killed.
func refusedAsTampered(t *testing.T, e *env, ls *loginSite, plog string, browserPID int) {
	t.Helper()
	lsVisit(t, e, ls.URL("/login"))
	posts, typed := len(ls.Posts()), len(ls.Typed())
	code := lsLoginFails(t, e, []string{"BROWSER_TAMPERED"}, "--alias", "main")
	if n := len(presencetest.Prompts(t, plog)); n != 0 {
		t.Fatalf("the person was asked %d times; want nobody asked (%s)", n, code)
	}
	lsNothingTyped(t, ls, posts, typed)
	if !pollUntil(10*time.Second, func() bool { return !procAlive(browserPID) }) {
		t.Fatal("the tampered browser still runs")
	}
}
