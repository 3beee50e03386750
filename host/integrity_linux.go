package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/procstat"
)

// Bounds of one scan of the browser's processes.
const (
	maxScanProcs = 512     // processes of the browser's tree
	maxMapsBytes = 8 << 20 // bytes of one /proc/PID/maps
)

// browserCheck is what one look at the browser's processes found.
type browserCheck struct {
	// Exposed is the first process of the browser whose memory this host could open
	// (/proc/PID/mem), and so could every process of the user's: a password typed into a
	// page is in the renderer's and the browser's memory (red-team round 7 read it out of
	// both after a sign-in). 0: none.
	Exposed int
	// Foreign describes the first executable mapping that is not a root-owned system file
	// ("": none).
	Foreign string
	// Strays are processes of the user with the host's group outside the browser's tree
	// (groupStrays), and what they are.
	Strays    []int
	StrayWhat []string
}

// checkBrowser looks at every process of the browser's tree (the browser, its zygotes,
// renderers and utilities) and stops at the first that is exposed or, with mappings, runs
// foreign code.
//
// Exposed: unless root (whom nothing keeps out of any process, so the question means
// nothing), the host tries to open each process's /proc/PID/mem with the user's own gid as its
// filesystem gid (hardening.MemoryOpenAs): what it may open so, any process of the user's
// without the headless group may. Chromium's processes are closed when they run with the
// headless group (the host, installed set-gid, runs Chromium so: the kernel refuses ptrace and
// /proc/PID/mem to a caller whose gid differs), in the system's user namespace (the setuid
// sandbox; a renderer in a namespace the user owns would be open to the user).
//
// Foreign: code that something of the user's made Chromium load. Red-team round 6d listed a
// PKCS#11 module in the user's NSS database, and round 6e a Widevine CDM in the profile's
// WidevineCdm/ (both fixed at their source); both were libraries of the agent's, mapped from
// its own files, and so is anything like them. A mapping is accepted when it is anonymous or
// a kernel one ([vdso]), or a file under /usr or /lib* (or the Chromium binary's own
// directory) that is owned by root, writable by nobody else, and still the file that was
// mapped (same device and inode). A deleted file, a memfd or anything else is foreign. The
// mappings of a closed process that the host may not read either (undumpable) are not
// looked at: no process of the user's can have put code into it since its exec, and what it
// exec'd is the binary brokerd checked (root-owned, nobody else may write it); everything
// else the scan cannot read fails it.
func checkBrowser(browserPID int, chromium string, root, mappings bool) (browserCheck, error) {
	var c browserCheck
	if root && !mappings {
		return c, nil // nothing to look at: root is kept out of nothing
	}
	procs, err := procTable()
	if err != nil {
		return c, err
	}
	pids, err := treeOf(procs, browserPID)
	if err != nil {
		return c, err
	}
	if g, ok := hostGroup(); ok && !root {
		inTree := make(map[int]bool, len(pids))
		for _, pid := range pids {
			inTree[pid] = true
		}
		if c.Strays, c.StrayWhat, err = groupStrays(procs, g, os.Getuid(), inTree); err != nil {
			return c, fmt.Errorf("look for processes of the headless group: %w", err)
		}
		if len(c.Strays) > 0 {
			return c, nil
		}
	}
	trusted := []string{"/usr/", "/lib/", "/lib64/", "/lib32/"}
	if chromium != "" {
		trusted = append(trusted, filepath.Dir(chromium)+"/")
	}
	var maps []mapsScan // the processes whose mappings are read, after every other check
	for _, pid := range pids {
		closed := false
		if !root {
			// Asked with the user's own gid: the host itself shares Chromium's group.
			open, err := hardening.MemoryOpenAs(pid, hardening.UserGID())
			if errors.Is(err, os.ErrNotExist) {
				continue // exited meanwhile
			}
			if err != nil {
				return c, err
			}
			if open {
				c.Exposed = pid
				return c, nil
			}
			closed = true
			// Every process of the tree runs Chromium's own files: anything else it started
			// (a helper run by name, say) has the group too and may read the browser's memory
			// (red-team round 11: an xdg-settings of the user's, which Chromium ran for an
			// unknown URL scheme, stayed in the tree and read a typed password). An
			// executable the host may not read is Chromium's undumpable sandboxed processes.
			if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && chromium != "" &&
				!strings.HasPrefix(exe, filepath.Dir(chromium)+"/") {
				c.Foreign = fmt.Sprintf("process %d of the browser runs %s, not Chromium", pid, procstat.Clean(exe, procstat.MaxExe))
				return c, nil
			}
		}
		if mappings {
			maps = append(maps, mapsScan{pid: pid, closed: closed})
		}
	}
	// Reading the mappings is most of a check's time (the kernel writes out each process's
	// whole list): the processes are read at once, and judged in the tree's order.
	scanAllMaps(maps, trusted)
	for _, m := range maps {
		switch {
		case m.skip:
		case m.err != nil:
			return c, fmt.Errorf("read the mappings of browser process %d: %w", m.pid, m.err)
		case m.desc != "":
			c.Foreign = fmt.Sprintf("process %d maps %s", m.pid, m.desc)
			return c, nil
		}
	}
	return c, nil
}

// mapsScan is one process's mappings looked at: the first foreign one (desc), the error that
// kept them from being read, or skip (the process exited, or is closed to the host).
type mapsScan struct {
	pid    int
	closed bool // undumpable to the user: unreadable mappings are skipped (see checkBrowser)
	desc   string
	err    error
	skip   bool
}

// mapsWorkers bounds the processes whose mappings are read at once.
const mapsWorkers = 4

// scanAllMaps fills in each of scans, reading at most mapsWorkers processes' mappings at once;
// the files already accepted are shared.
func scanAllMaps(scans []mapsScan, trusted []string) {
	var (
		seen sync.Map // "dev inode path" already checked and accepted
		wg   sync.WaitGroup
		next atomic.Int64
	)
	for range min(mapsWorkers, len(scans)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(scans); i = int(next.Add(1)) - 1 {
				scans[i].scan(trusted, &seen)
			}
		}()
	}
	wg.Wait()
}

// scan reads the mappings of m.pid.
func (m *mapsScan) scan(trusted []string, seen *sync.Map) {
	f, err := os.Open("/proc/" + strconv.Itoa(m.pid) + "/maps")
	if err != nil {
		// Exited meanwhile, or undumpable (see checkBrowser).
		m.skip = !procstat.Alive(m.pid) || m.closed && errors.Is(err, fs.ErrPermission)
		m.err = err
		return
	}
	defer f.Close()
	m.desc, err = scanMapsBounded(f, maxMapsBytes, trusted, seen)
	if err != nil && exited(m.pid, err) {
		m.skip = true // it exited while it was read (a renderer the host stopped, say)
		return
	}
	m.err = err
}

// exited tells a process that exited while its mappings were read (the kernel answers ESRCH
// once its memory is gone, and the pid is then dead or a zombie) from a failure to read them.
// A process without memory runs nothing, so there is nothing left of it to check.
func exited(pid int, err error) bool {
	return errors.Is(err, unix.ESRCH) || !procstat.Alive(pid)
}

// scanMapsBounded is scanMaps over at most limit bytes of r. One byte over the bound tells a
// cut list from a whole one: a cut list is refused, not taken as having nothing after the cut.
func scanMapsBounded(r io.Reader, limit int64, trusted []string, seen *sync.Map) (string, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	desc, err := scanMaps(lr, trusted, seen)
	if err == nil && desc == "" && lr.N == 0 {
		err = fmt.Errorf("more than %d bytes of mappings", limit)
	}
	return desc, err
}

// scanMaps reads /proc/PID/maps lines and returns the first executable mapping that is not
// accepted (see checkBrowser).
func scanMaps(r io.Reader, trusted []string, seen *sync.Map) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 8192)
	for sc.Scan() {
		path, dev, inode, exec, ok := parseMapsLine(sc.Bytes())
		if !ok {
			return "", fmt.Errorf("malformed line %q", procstat.Clean(sc.Text(), 120))
		}
		if !exec || path == "" || strings.HasPrefix(path, "[") {
			continue
		}
		key := dev + " " + inode + " " + path
		if _, ok := seen.Load(key); ok {
			continue
		}
		if reason := foreignFile(path, dev, inode, trusted); reason != "" {
			return fmt.Sprintf("%s (%s)", procstat.Clean(path, 200), reason), nil
		}
		seen.Store(key, true)
	}
	return "", sc.Err()
}

// parseMapsLine reads "start-end perms offset dev inode [path]".
func parseMapsLine(b []byte) (path, dev, inode string, exec, ok bool) {
	var f [5][]byte
	rest := b
	for i := range f {
		rest = bytes.TrimLeft(rest, " \t")
		end := bytes.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		f[i], rest = rest[:end], rest[end:]
		if len(f[i]) == 0 {
			return "", "", "", false, false
		}
	}
	if len(f[1]) != 4 {
		return "", "", "", false, false
	}
	// The path is everything after the inode (it may hold spaces).
	return string(bytes.TrimSpace(rest)), string(f[3]), string(f[4]), f[1][2] == 'x', true
}

// foreignFile says why the mapped file path (device dev "major:minor" in hex, inode) is not a
// trusted system file, or "" when it is.
func foreignFile(path, dev, inode string, trusted []string) string {
	if strings.HasSuffix(path, " (deleted)") {
		return "deleted since it was mapped"
	}
	ok := false
	for _, t := range trusted {
		ok = ok || strings.HasPrefix(path, t)
	}
	if !ok || !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return "not a system file"
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "cannot be looked at"
	}
	maj, mnr, found := strings.Cut(dev, ":")
	M, err1 := strconv.ParseUint(maj, 16, 32)
	m, err2 := strconv.ParseUint(mnr, 16, 32)
	ino, err3 := strconv.ParseUint(inode, 10, 64)
	if !found || err1 != nil || err2 != nil || err3 != nil || unix.Major(st.Dev) != uint32(M) || unix.Minor(st.Dev) != uint32(m) || st.Ino != ino {
		return "not the file that was mapped"
	}
	if st.Uid != 0 || st.Mode&0o022 != 0 {
		return "not owned by root, or writable by others"
	}
	return ""
}

// procTable is one walk of /proc: the status of every process (at most maxStrayScan), what
// both the browser's tree and the look for strays are computed from.
func procTable() ([]procStatus, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var procs []procStatus
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStatus("/proc/" + e.Name() + "/status")
		if err != nil {
			continue // gone meanwhile (status is readable by everyone)
		}
		if len(procs) == maxStrayScan {
			return nil, fmt.Errorf("more than %d processes to look at", maxStrayScan)
		}
		st.pid = pid
		procs = append(procs, st)
	}
	return procs, nil
}

// treeOf lists root and its descendants in procs (at most maxScanProcs).
func treeOf(procs []procStatus, root int) ([]int, error) {
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		if len(out) > maxScanProcs {
			return nil, fmt.Errorf("the browser has more than %d processes", maxScanProcs)
		}
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// tree is treeOf a fresh procTable.
func tree(root int) ([]int, error) {
	procs, err := procTable()
	if err != nil {
		return nil, err
	}
	return treeOf(procs, root)
}

// maxStrayScan bounds the processes, and the threads, one look at /proc reads.
const maxStrayScan = 1 << 16

// groupStrays lists the processes of user uid in procs, outside the browser's tree (inTree)
// and other than this host, of which a thread has gid as its real gid or in its supplementary
// groups: code running with the host's group that no genuine path started. The host,
// installed set-gid, runs Chromium with that group, so such a process may ptrace Chromium and
// read its memory (red-team round 11: a wrapper the config named as Chromium, and a library
// planted in the profile at the start, each forked a daemon that left the browser's tree,
// kept the group across restarts, and read a sign-in's password out of the next browser). A
// genuine set-gid exec (the CLI before it drops the group, the pinentry under brokerd) has
// the user's own real gid, and from a process whose gids are all the group's no unprivileged
// call gives the user's back, so the real gid tells them apart. Each thread is looked at:
// credentials are per thread.
func groupStrays(procs []procStatus, gid, uid int, inTree map[int]bool) ([]int, []string, error) {
	self := os.Getpid()
	var pids []int
	var what []string
	threads := 0
	for _, st := range procs {
		if st.pid == self || inTree[st.pid] || !st.hasUID(uid) || st.zombie {
			continue // a zombie runs nothing and holds no memory
		}
		stray := st.hasGroup(gid)
		if !stray && st.threads > 1 {
			dir := "/proc/" + strconv.Itoa(st.pid) + "/task/"
			tasks, _ := os.ReadDir(dir)
			for _, t := range tasks {
				if threads++; threads > maxStrayScan {
					return nil, nil, fmt.Errorf("more than %d threads to look at", maxStrayScan)
				}
				if ts, err := readStatus(dir + t.Name() + "/status"); err == nil && ts.hasGroup(gid) {
					stray = true
					break
				}
			}
		}
		if stray {
			pids = append(pids, st.pid)
			what = append(what, fmt.Sprintf("pid %d (%q)", st.pid, st.name))
		}
	}
	return pids, what, nil
}

// strays is groupStrays of a fresh procTable for this host's group, outside any browser
// (nothing when the host has no group of its own).
func strays() ([]int, []string, error) {
	g, ok := hostGroup()
	if !ok {
		return nil, nil, nil
	}
	procs, err := procTable()
	if err != nil {
		return nil, nil, err
	}
	return groupStrays(procs, g, os.Getuid(), nil)
}

// hostGroup is the group this host runs Chromium with, when it has one of its own (installed
// set-gid, not root): the group whose strays are looked for.
func hostGroup() (int, bool) {
	g := os.Getegid()
	return g, os.Geteuid() != 0 && g != hardening.UserGID()
}

// found says whether the look found anything.
func (c browserCheck) found() bool { return c.Exposed != 0 || c.Foreign != "" || len(c.Strays) > 0 }

// procStatus is what procTable reads of /proc/PID/status.
type procStatus struct {
	pid     int
	ppid    int
	name    string
	uids    []int // real, effective, saved, filesystem
	realGID int
	groups  []int
	threads int
	zombie  bool
}

func (s procStatus) hasUID(uid int) bool {
	for _, u := range s.uids {
		if u == uid {
			return true
		}
	}
	return false
}

// hasGroup: gid is the real gid or a supplementary one.
func (s procStatus) hasGroup(gid int) bool {
	if s.realGID == gid {
		return true
	}
	for _, g := range s.groups {
		if g == gid {
			return true
		}
	}
	return false
}

func readStatus(path string) (procStatus, error) {
	s := procStatus{realGID: -1}
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	ints := func(v string) []int {
		var out []int
		for _, f := range strings.Fields(v) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "Name":
			s.name = procstat.Clean(strings.TrimSpace(v), procstat.MaxComm)
		case "Uid":
			s.uids = ints(v)
		case "Gid":
			if g := ints(v); len(g) > 0 {
				s.realGID = g[0]
			}
		case "Groups":
			s.groups = ints(v)
		case "PPid":
			if n := ints(v); len(n) > 0 {
				s.ppid = n[0]
			}
		case "State":
			s.zombie = strings.HasPrefix(strings.TrimSpace(v), "Z")
		case "Threads":
			if n := ints(v); len(n) > 0 {
				s.threads = n[0]
			}
		}
	}
	if len(s.uids) == 0 || s.realGID < 0 {
		return s, fmt.Errorf("%s: no Uid or Gid line", path)
	}
	return s, nil
}
