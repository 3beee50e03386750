//go:build linux

package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// helperEnv makes this test binary act as a second owner of a profile:
//
//	hold DATADIR  Open, print "HELD <pid>", keep the profile open until stdin closes
//	try DATADIR   Open, print "LOCKED <pid>" for a *LockedError, "OPENED" or "ERROR <msg>"
const helperEnv = "HEADLESS_PROFILE_TEST_HELPER"

// TestMain runs the helper modes, and fails the run when a test left a process running. The
// test process is a child subreaper, so descendants of a killed Chromium or keyring become its
// children instead of init's: they must all be dead by now, and are reaped here.
func TestMain(m *testing.M) {
	if mode, dir, ok := strings.Cut(os.Getenv(helperEnv), " "); ok {
		os.Exit(helper(mode, dir))
	}
	os.Exit(realtest.RunReaping(m, "profile"))
}

func helper(mode, dir string) int {
	p, err := Open(Options{Dir: profDir(dir), Lock: lockPath(dir)})
	var locked *LockedError
	switch {
	case errors.As(err, &locked):
		fmt.Printf("LOCKED %d\n", locked.PID)
		return 0
	case err != nil:
		fmt.Printf("ERROR %v\n", err)
		return 1
	}
	defer p.Close()
	switch mode {
	case "hold":
		fmt.Printf("HELD %d\n", os.Getpid())
		io.Copy(io.Discard, os.Stdin)
	default:
		fmt.Println("OPENED")
	}
	return 0
}

// startHelper runs this test binary in a helper mode on dataDir and returns its first line
// and pid. The helper exits when stop is called (closing its stdin), at the latest when the
// test ends.
func startHelper(t *testing.T, mode, dataDir string) (line string, pid int, stop func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode+" "+dataDir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		r := bufio.NewReader(stdout)
		l, _ := r.ReadString('\n')
		lines <- strings.TrimSpace(l)
		io.Copy(io.Discard, r)
		cmd.Wait()
		close(done)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			stdin.Close()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(stop)
	select {
	case line = <-lines:
	case <-time.After(20 * time.Second):
		t.Fatal("helper did not answer within 20s")
	}
	return line, cmd.Process.Pid, stop
}
