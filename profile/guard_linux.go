package profile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/hardening"
)

// Guard watches, for the life of one browser, the entries of the profile that Chromium must
// find blocked — WidevineCdm (its hint names a library every zygote loads) and Default's
// Sessions and Sessions_Encrypted (session data holds POST bodies) — and every directory on
// the way to them that the user can rename. The blockers are put in place before the launch,
// but the profile is the user's: red-team round 9 swapped WidevineCdm for a directory of its
// own (renameat2 RENAME_EXCHANGE) in the moment after Chromium's exec, before its zygotes
// read the hint, and back again 2.5 s later, so that a library of its own ran in every
// renderer unseen (their mappings cannot be read: the processes are undumpable). With the
// watches in place before the launch, no such swap goes unrecorded: [Guard.Tampered] then
// names it, and the host refuses to release anything into that browser.
//
// The watches are inotify's. A queue overflow counts as tampering: what it dropped cannot be
// told apart from a swap.
type Guard struct {
	f       *os.File
	mu      sync.Mutex
	watched map[int32]guardDir
	found   string // the first tampering seen ("": none)
	done    chan struct{}
}

// guardDir is one watched directory: the names in it that matter, and whether the
// directory itself must stay where it is.
type guardDir struct {
	path  string
	names map[string]bool
}

// protected lists the blocked entries of profile dir.
func protected(dir string) []string {
	out := []string{}
	for _, n := range blockedRootNames {
		out = append(out, filepath.Join(dir, n))
	}
	for _, n := range sessionsNames {
		out = append(out, filepath.Join(dir, "Default", n))
	}
	return out
}

// Guard starts watching p's blocked entries (see [Guard]), then checks that each is still
// the blocker (a regular empty file): call it after [Profile.Reassert] and before launching
// Chromium, and [Guard.Close] when that browser is gone.
func (p *Profile) Guard() (*Guard, error) {
	dir, err := filepath.EvalSymlinks(p.dir)
	if err != nil {
		return nil, fmt.Errorf("guard the profile: %w", err)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("guard the profile: inotify: %w", err)
	}
	g := &Guard{f: os.NewFile(uintptr(fd), "inotify"), watched: map[int32]guardDir{}, done: make(chan struct{})}
	dirs := map[string]map[string]bool{} // directory -> names in it that matter
	add := func(path string) {
		parent, name := filepath.Dir(path), filepath.Base(path)
		if dirs[parent] == nil {
			dirs[parent] = map[string]bool{}
		}
		dirs[parent][name] = true
	}
	for _, path := range protected(dir) {
		add(path)
	}
	add(filepath.Join(dir, "Default"))
	// Every directory on the way to the profile that the user can rename an entry of.
	uid := uint32(os.Getuid())
	for d := dir; d != "/" && hardening.DirReplaceable(filepath.Dir(d), uid); d = filepath.Dir(d) {
		add(d)
	}
	const changes = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	for d, names := range dirs {
		wd, err := unix.InotifyAddWatch(fd, d, changes|unix.IN_ONLYDIR|unix.IN_DONT_FOLLOW)
		if err != nil {
			g.f.Close()
			return nil, fmt.Errorf("guard the profile: watch %s: %w", d, err)
		}
		g.watched[int32(wd)] = guardDir{path: d, names: names}
	}
	for _, path := range protected(dir) {
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			g.f.Close()
			return nil, fmt.Errorf("guard the profile: %s is not the blocker it was made a moment ago", path)
		}
	}
	go g.read()
	return g, nil
}

func (g *Guard) read() {
	defer close(g.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := g.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				g.note("the watch of the profile failed: " + err.Error())
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			name := string(trimNUL(nameBytes))
			g.mu.Lock()
			d, ok := g.watched[ev.Wd]
			g.mu.Unlock()
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				g.note("too many changes in the profile's directories to follow (the watch's queue overflowed)")
			case ev.Mask&unix.IN_IGNORED != 0:
				if ok {
					g.note(d.path + " is no longer watched")
				}
			case !ok:
			case ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
				g.note(d.path + " was moved or removed")
			case d.names[name]:
				g.note(filepath.Join(d.path, name) + " was changed")
			}
		}
	}
}

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

func (g *Guard) note(what string) {
	g.mu.Lock()
	if g.found == "" {
		g.found = what
	}
	g.mu.Unlock()
}

// Tampered names the first change seen to a blocked entry of the profile, or to a directory
// on the way to it, since [Profile.Guard] ("" when there was none).
func (g *Guard) Tampered() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.found
}

// Close stops watching. It is safe to call more than once, and on nil.
func (g *Guard) Close() {
	if g == nil {
		return
	}
	if g.f.Close() == nil {
		<-g.done
	}
}
