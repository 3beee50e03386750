package hostproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/wire"
)

// The test binary doubles as a stand-in host (Options.Env carries the mode): it reports on
// fd 3 as the host does and exits at EOF on fd 4, like the real one.
const modeEnv = "HOSTPROC_TEST_HOST"

func TestMain(m *testing.M) {
	switch os.Getenv(modeEnv) {
	case "":
		os.Exit(m.Run())
	case "ready":
		notify := os.NewFile(3, "notify")
		fmt.Fprintf(notify, `{"ready":{"pid":%d,"args":%q}}`+"\n", os.Getpid(), strings.Join(os.Args, " "))
		notify.Close()
		io.Copy(io.Discard, os.NewFile(4, "lifeline")) // until brokerd goes
		os.Exit(0)
	case "error":
		fmt.Fprintln(os.NewFile(3, "notify"), `{"error":{"code":"PROFILE_LOCKED","message":"another host","hint":"h"}}`)
		os.Exit(1)
	case "silent":
		os.Exit(1)
	}
	os.Exit(2)
}

func stub(t *testing.T, mode string) *Supervisor {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Program: self, Group: -1, Env: []string{modeEnv + "=" + mode}, StartTimeout: 20 * time.Second, StopTimeout: 10 * time.Second})
	t.Cleanup(s.Stop)
	return s
}

func TestStartOwnsAndForgetsTheHost(t *testing.T) {
	s := stub(t, "ready")
	before := time.Now()
	r, err := s.Start(context.Background(), nil, nil)
	if err != nil || r.Status != "started" {
		t.Fatalf("Start = %+v, %v", r, err)
	}
	var ready struct {
		PID  int
		Args string
	}
	if err := json.Unmarshal(r.Ready, &ready); err != nil || ready.PID != r.PID || ready.Args != "headless host --notify-fd 3 --lifeline-fd 4" {
		t.Fatalf("ready %s", r.Ready)
	}
	// The host's exe is the checked file itself, not /proc/self/fd/N.
	self, _ := os.Executable()
	if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", r.PID)); exe != self {
		t.Fatalf("the host runs %q, want %q", exe, self)
	}
	if !s.Genuine(r.PID, 0, time.Now()) || s.Genuine(r.PID, 0, before.Add(-time.Second)) || s.Genuine(os.Getpid(), 0, time.Now()) || s.Genuine(0, 0, time.Now()) {
		t.Fatal("Genuine is wrong about the host, an earlier connection, another pid or pid 0")
	}
	if again, err := s.Start(context.Background(), nil, nil); err != nil || again.Status != "running" || again.PID != r.PID || string(again.Ready) != string(r.Ready) {
		t.Fatalf("second Start = %+v, %v", again, err)
	}
	// SIGKILL: the exit is seen, the host forgotten, and a new start makes a new one.
	syscall.Kill(r.PID, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for s.Genuine(r.PID, 0, time.Now()) {
		if time.Now().After(deadline) {
			t.Fatal("a killed host still counts as genuine")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if pid, _ := s.Running(); pid != 0 {
		t.Fatalf("Running = %d after the host died", pid)
	}
	r2, err := s.Start(context.Background(), nil, nil)
	if err != nil || r2.Status != "started" || r2.PID == r.PID {
		t.Fatalf("Start after the kill = %+v, %v", r2, err)
	}
	// Stop: EOF on the lifeline; the host exits by itself.
	s.Stop()
	if s.Genuine(r2.PID, 0, time.Now()) {
		t.Fatal("a stopped host still counts as genuine")
	}
}

func TestStartReportsTheHostsFailure(t *testing.T) {
	_, err := stub(t, "error").Start(context.Background(), nil, nil)
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.CodeProfileLocked {
		t.Fatalf("Start = %v, want the host's PROFILE_LOCKED", err)
	}
	_, err = stub(t, "silent").Start(context.Background(), nil, nil)
	if wire.CodeOf(err) != wire.CodeHostUnavail || !strings.Contains(err.Error(), "exited during start-up") {
		t.Fatalf("Start of a host that says nothing = %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "headless")
	os.WriteFile(script, []byte("#!/bin/sh\nexec /bin/true\n"), 0o755)
	loose := filepath.Join(dir, "loose")
	b, _ := os.ReadFile("/bin/true")
	os.WriteFile(loose, b, 0o755)
	os.Chmod(loose, 0o775)
	self, _ := os.Executable()
	for _, tc := range []struct{ path, version, want string }{
		{"headless", "", "not an absolute path"},
		{filepath.Join(dir, "missing"), "", "no such file"},
		{dir, "", "not a regular file"},
		{script, "", "not an ELF executable"},
		{loose, "", "writable by group or others"},
		{"/bin/true", "v1", "is not a Go program of headless"},
		{self, "v1", `not ` + HostPackage},
	} {
		if f, err := Open(tc.path, tc.version); err == nil || !strings.Contains(err.Error(), tc.want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
	if err := CheckChromium(script); err == nil || !strings.Contains(err.Error(), "not an ELF executable") {
		t.Errorf("CheckChromium(script) = %v", err)
	}
	if err := CheckChromium(loose); err == nil {
		t.Error("CheckChromium accepts a group-writable file")
	}
	if err := CheckChromium("/bin/true"); err != nil {
		t.Errorf("CheckChromium(/bin/true) = %v", err)
	}
}
