package lockfile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestLockExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile.lock")
	if _, err := LockExisting(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LockExisting of a missing file = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("LockExisting created the file")
	}
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file description: a second open in this process conflicts too.
	var held *HeldError
	if _, err := LockExisting(path); !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("LockExisting while held = %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	unlock()
	if err := os.WriteFile(path, []byte("12345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	release, err := LockExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("Lock while LockExisting holds it = %v", err)
	}
	release()
	if b, _ := os.ReadFile(path); string(b) != "12345\n" {
		t.Fatalf("LockExisting wrote to the file: %q", b)
	}
	if unlock, err := Lock(path); err != nil {
		t.Fatalf("Lock after release = %v", err)
	} else {
		unlock()
	}
}

func TestLockPIDModeAndSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "broker.lock")
	old := syscall.Umask(0)
	unlock, err := Lock(path)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file mode %v, want 0600", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Fatalf("lock file holds %q, want our pid", b)
	}
	unlock()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Fatalf("lock file still holds %q after unlock", b)
	}
	// A symlink at the path is refused, never followed: its target is not created or written.
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "profile.lock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for name, lock := range map[string]func(string) (func(), error){"Lock": Lock, "LockExisting": LockExisting,
		"Wait": func(p string) (func(), error) { return Wait(p, time.Second) }} {
		if u, err := lock(link); err == nil {
			u()
			t.Errorf("%s followed a symlink", name)
		}
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the symlink's target was created: %v", err)
	}
}

// TestWaitBlocksUntilReleased: Wait queues behind a holder of the same lock.
func TestWaitBlocksUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		u, err := Wait(path, time.Minute)
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	select {
	case <-got:
		t.Fatal("Wait returned while the lock was held")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	select {
	case u := <-got:
		u()
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return after the lock was released")
	}
}

const holdEnv = "LOCKFILE_TEST_HOLD"

// TestMain doubles as the lock holder of TestHeldByAnotherProcessAndCrashReleased: re-executed
// with holdEnv set, the test binary takes that lock, says so on stdout and sleeps until killed.
func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		if _, err := Lock(path); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHeldByAnotherProcessAndCrashReleased: a lock held by another process is a HeldError
// naming that process's pid; SIGKILLing it releases the lock at once.
func TestHeldByAnotherProcessAndCrashReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile.lock")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("helper: %q", line)
	}
	var held *HeldError
	if _, err := Lock(path); !errors.As(err, &held) || held.PID != cmd.Process.Pid {
		t.Fatalf("Lock held by pid %d = %v", cmd.Process.Pid, err)
	}
	if _, err := LockExisting(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("LockExisting held by another process = %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	unlock, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock after the holder was SIGKILLed = %v", err)
	}
	unlock()
}

// TestWaitGivesUp: a lock held longer than Wait's bound is a *HeldError, not a wait without end.
func TestWaitGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var held *HeldError
	if u, err := Wait(path, 50*time.Millisecond); !errors.As(err, &held) || held.PID != os.Getpid() || !errors.Is(err, ErrHeld) {
		if u != nil {
			u()
		}
		t.Fatalf("Wait on a held lock = %v; want a *HeldError naming pid %d", err, os.Getpid())
	}
}
