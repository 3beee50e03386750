package profile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/lockfile"
)

func TestLockIsExclusiveAndCrashReleased(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	unlock, err := Lock(lockPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode %v", fi.Mode().Perm())
	}
	_, err = Lock(lockPath(dir))
	var held *lockfile.HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	// A holder that is SIGKILLed releases the lock: flock from a child, kill it, relock.
	// -o: only flock(1) itself holds the lock, not its sleeping child.
	cmd := exec.Command("flock", "-o", filepath.Join(dir, "profile.lock"), "sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("flock(1) (util-linux) is needed: %v", err)
	}
	for i := 0; ; i++ {
		u, err := Lock(lockPath(dir))
		if errors.Is(err, lockfile.ErrHeld) {
			break
		}
		if err != nil || i > 500 {
			t.Fatalf("child never took the lock: %v", err)
		}
		u()
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	// kill(2) returns before the killed processes have exited (flock's child may still hold
	// the inherited descriptor until it execs sleep); the kernel releases the lock when they do.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		unlock, err = Lock(lockPath(dir))
		if err == nil {
			break
		}
		if !errors.Is(err, lockfile.ErrHeld) || time.Now().After(deadline) {
			t.Fatalf("lock after the holder was killed: %v", err)
		}
	}
	unlock()
	b, _ := os.ReadFile(filepath.Join(dir, "profile.lock"))
	if strings.TrimSpace(string(b)) != "" && strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file holds %q", b)
	}
}

// profDir and lockPath name the profile and its lock in dataDir as internal/xdg does.
func profDir(dataDir string) string  { return filepath.Join(dataDir, "profile") }
func lockPath(dataDir string) string { return filepath.Join(dataDir, "profile.lock") }
