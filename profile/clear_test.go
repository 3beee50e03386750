//go:build linux

package profile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestClearReplacesProfile(t *testing.T) {
	for _, c := range []struct {
		name     string
		exchange func(a, b string) error
	}{
		{"atomic exchange", nil},
		{"three renames", exchangeByRenames},
	} {
		t.Run(c.name, func(t *testing.T) {
			dataDir := newDataDir(t)
			p, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock, exchange: c.exchange})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			populate(t, p.Dir())
			writeFile(t, filepath.Join(p.Dir(), "Default", "History"), sqliteImage(4096, 2))
			writeFile(t, filepath.Join(p.Dir(), "Default", "Cache", "Cache_Data", "data_0"), []byte("cached"))
			if err := p.Clear(); err != nil {
				t.Fatal(err)
			}
			checkFresh(t, p.Dir())
			if got := entries(t, p.Dir()); !reflect.DeepEqual(got, []string{"Default", markerName}) {
				t.Fatalf("cleared profile holds %v", got)
			}
			if got := entries(t, filepath.Join(p.Dir(), "Default")); !reflect.DeepEqual(got, []string{"Preferences"}) {
				t.Fatalf("cleared Default holds %v", got)
			}
			if got := entries(t, dataDir); !reflect.DeepEqual(got, []string{"profile", "profile.lock"}) {
				t.Fatalf("data dir holds %v after a clear", got)
			}
			// Still locked by p.
			_, err = Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir)})
			checkLocked(t, err, os.Getpid())
		})
	}
}

// TestClearHoldsLockThroughout: at the moment of the swap the lock is held.
func TestClearHoldsLockThroughout(t *testing.T) {
	dataDir := newDataDir(t)
	var during error
	p, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock, exchange: func(a, b string) error {
		_, during = Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir)})
		return exchange(a, b)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Clear(); err != nil {
		t.Fatal(err)
	}
	checkLocked(t, during, os.Getpid())
}

func TestClearFailureLeavesProfileUsable(t *testing.T) {
	dataDir := newDataDir(t)
	p, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock, exchange: func(a, b string) error {
		return &os.LinkError{Op: "rename", Old: a, New: b, Err: syscall.EIO}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	populate(t, p.Dir())
	before := snapshot(t, p.Dir())
	err = p.Clear()
	var ce *ClearError
	if !errors.As(err, &ce) || !errors.Is(err, ErrClear) || !errors.Is(err, syscall.EIO) || ce.Cleared {
		t.Fatalf("Clear = %v, want a *ClearError (not cleared) wrapping EIO", err)
	}
	if !strings.Contains(err.Error(), "unchanged") {
		t.Errorf("message %q does not say the profile is unchanged", err)
	}
	if after := snapshot(t, p.Dir()); !reflect.DeepEqual(before, after) {
		t.Fatal("a failed clear changed the profile")
	}
	if got := entries(t, dataDir); !reflect.DeepEqual(got, []string{"profile", "profile.lock"}) {
		t.Fatalf("a failed clear left %v", got)
	}
}

// TestClearInterruptedAfterSwap: a crash right after the swap leaves the old profile under a
// temporary name; the profile path holds the fresh one, and the next Open removes the old.
func TestClearInterruptedAfterSwap(t *testing.T) {
	dataDir := newDataDir(t)
	p, err := Open(Options{Dir: profDir(dataDir), Lock: lockPath(dataDir), Now: clock, exchange: func(a, b string) error {
		if err := exchange(a, b); err != nil {
			return err
		}
		return errors.New("crash after the swap")
	}})
	if err != nil {
		t.Fatal(err)
	}
	populate(t, p.Dir())
	err = p.Clear()
	var ce *ClearError
	if !errors.As(err, &ce) || !ce.Cleared {
		t.Fatalf("Clear = %v, want a *ClearError with Cleared", err)
	}
	checkFresh(t, p.Dir())
	names := entries(t, dataDir)
	if len(names) != 3 || !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, tempPrefix) }) {
		t.Fatalf("data dir holds %v, want the old profile under a temporary name", names)
	}
	p.Close()
	p = openT(t, dataDir)
	if got := entries(t, dataDir); !reflect.DeepEqual(got, []string{"profile", "profile.lock"}) {
		t.Fatalf("the next Open left %v", got)
	}
	checkFresh(t, p.Dir())
}

func TestClearWithoutProfileDir(t *testing.T) {
	dataDir := newDataDir(t)
	p := openT(t, dataDir)
	if err := os.RemoveAll(p.Dir()); err != nil {
		t.Fatal(err)
	}
	if err := p.Clear(); err != nil {
		t.Fatal(err)
	}
	checkFresh(t, p.Dir())
}
