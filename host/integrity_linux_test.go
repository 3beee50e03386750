package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/internal/test/realtest"
)

func TestParseMapsLine(t *testing.T) {
	for _, c := range []struct {
		line, path, dev, inode string
		exec, ok               bool
	}{
		{"7f00-7f10 r-xp 00000000 fd:01 1234   /usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "fd:01", "1234", true, true},
		{"7f00-7f10 rw-p 00000000 00:00 0 ", "", "00:00", "0", false, true},
		{"7f00-7f10 r-xp 00000000 00:00 0   [vdso]", "[vdso]", "00:00", "0", true, true},
		{"7f00-7f10 r-xp 00000000 08:02 77   /home/a b/lib.so (deleted)", "/home/a b/lib.so (deleted)", "08:02", "77", true, true},
		{"garbage", "", "", "", false, false},
		{"7f00-7f10 rx 0 0 0", "", "", "", false, false},
	} {
		path, dev, inode, exec, ok := parseMapsLine([]byte(c.line))
		if path != c.path || dev != c.dev || inode != c.inode || exec != c.exec || ok != c.ok {
			t.Errorf("%q: %q %q %q %v %v", c.line, path, dev, inode, exec, ok)
		}
	}
}

// TestScanMapsOfThisProcess: this test binary maps nothing but system files and itself; with
// its own directory trusted nothing is foreign, without it the binary is.
func TestScanMapsOfThisProcess(t *testing.T) {
	self, _ := os.Executable()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	sys := []string{"/usr/", "/lib/", "/lib64/", "/lib32/"}
	desc, err := scanMaps(strings.NewReader(string(maps)), sys, &sync.Map{})
	if err != nil || !strings.Contains(desc, self) {
		t.Fatalf("scan without the binary's directory trusted: %q, %v; want the test binary named", desc, err)
	}
	if os.Getuid() == 0 {
		// Root owns the test binary: trusting its directory accepts it.
		desc, err = scanMaps(strings.NewReader(string(maps)), append(sys, self[:strings.LastIndexByte(self, '/')+1]), &sync.Map{})
		if err != nil || desc != "" {
			t.Fatalf("scan with the binary's directory trusted: %q, %v", desc, err)
		}
	}
	if _, err := scanMaps(strings.NewReader("not a maps line\n"), sys, &sync.Map{}); err == nil {
		t.Fatal("a malformed line was accepted")
	}
}

// TestScanMapsBounded: a list cut at the bound is refused, never taken as clean — the foreign
// library after the cut (red-team review: on systems that allow many mappings, a page could
// push an early library past 8 MiB) would otherwise go unseen.
func TestScanMapsBounded(t *testing.T) {
	benign := strings.Repeat("7f00-7f10 rw-p 00000000 00:00 0 \n", 100)
	list := benign + "7f00-7f10 r-xp 00000000 08:02 77   /home/x/evil.so\n"
	sys := []string{"/usr/"}
	if desc, err := scanMapsBounded(strings.NewReader(list), int64(len(benign)), sys, &sync.Map{}); err == nil || desc != "" {
		t.Fatalf("a list cut before its foreign line: %q, %v; want an error", desc, err)
	}
	if desc, err := scanMapsBounded(strings.NewReader(list), int64(len(list)), sys, &sync.Map{}); err != nil || !strings.Contains(desc, "/home/x/evil.so") {
		t.Fatalf("a whole list exactly at the bound: %q, %v; want evil.so named", desc, err)
	}
	if desc, err := scanMapsBounded(strings.NewReader(benign), int64(len(benign)), sys, &sync.Map{}); err != nil || desc != "" {
		t.Fatalf("a clean list exactly at the bound: %q, %v", desc, err)
	}
}

// TestForeignFile: the rules a mapped file must pass, one broken at a time.
func TestForeignFile(t *testing.T) {
	realtest.NeedRoot(t, "make root-owned files, to test one rule at a time")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	mk := func(name string, mode os.FileMode) (string, string, string) {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return p, fmt.Sprintf("%02x:%02x", unix.Major(st.Dev), unix.Minor(st.Dev)), strconv.FormatUint(st.Ino, 10)
	}
	trusted := []string{dir + "/"}
	good, dev, ino := mk("good.so", 0o755)
	gw, gwDev, gwIno := mk("gw.so", 0o775)
	theirs, thDev, thIno := mk("theirs.so", 0o755)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, dev, inode, want string
	}{
		{"a root-owned file under a trusted dir", good, dev, ino, ""},
		{"deleted", good + " (deleted)", dev, ino, "deleted since it was mapped"},
		{"outside every trusted dir", "/home/x/evil.so", dev, ino, "not a system file"},
		{"climbs out of a trusted dir", dir + "/../" + filepath.Base(dir) + "/good.so", dev, ino, "not a system file"},
		{"another inode", good, dev, ino + "1", "not the file that was mapped"},
		{"another device", good, "ff:ff", ino, "not the file that was mapped"},
		{"group-writable", gw, gwDev, gwIno, "not owned by root, or writable by others"},
		{"not root's", theirs, thDev, thIno, "not owned by root, or writable by others"},
		{"gone", dir + "/gone.so", dev, ino, "cannot be looked at"},
	} {
		if got := foreignFile(c.path, c.dev, c.inode, trusted); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCheckBrowser: over a real process (sleep, a system binary), the root look finds nothing
// foreign, and the look of a host that is not root finds the process's memory open — as any
// process of this uid's would (it is dumpable). The other side, memory closed to the user,
// is TestAsUser65534/UndumpableAgainstSameUID's (tests/, as an unprivileged uid).
func TestCheckBrowser(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	if os.Getuid() == 0 {
		c, err := checkBrowser(pid, "", true, true)
		if err != nil || c.found() {
			t.Fatalf("root's look at sleep: %+v, %v; want nothing found", c, err)
		}
	}
	c, err := checkBrowser(pid, "", false, true)
	if err != nil || c.Exposed != pid || c.Foreign != "" {
		t.Fatalf("a look at a dumpable process: %+v, %v; want Exposed %d", c, err, pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	// A process gone meanwhile is skipped: nothing of it can be read, nor typed into.
	if c, err := checkBrowser(pid, "", false, true); err != nil || c.found() {
		t.Fatalf("a look at a process that is gone: %+v, %v; want nothing found", c, err)
	}
}

// TestGroupStrays: a process of the user whose real gid is the group is found, unless it is in
// the browser's tree or of another user. As any user, the control: the test's own group finds
// a child of the test's, and not the test itself.
func TestGroupStrays(t *testing.T) {
	own := exec.Command("sleep", "30")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()
	procs, err := procTable()
	if err != nil {
		t.Fatal(err)
	}
	if pids, _, err := groupStrays(procs, os.Getgid(), os.Getuid(), nil); err != nil || !slices.Contains(pids, own.Process.Pid) || slices.Contains(pids, os.Getpid()) {
		t.Fatalf("the test's own group: %v %v; want its sleep %d, not the test", pids, err, own.Process.Pid)
	}
	if os.Getuid() != 0 {
		return // only root starts a process of another uid and gid; tests/ runs the stray as uid 65534
	}
	const uid, gid = 65534, 4242
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	for {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); strings.Contains(string(b), "\nGid:\t4242") {
			break
		}
		time.Sleep(5 * time.Millisecond) // until the child has its credentials
	}
	if procs, err = procTable(); err != nil {
		t.Fatal(err)
	}
	pids, what, err := groupStrays(procs, gid, uid, nil)
	if err != nil || len(pids) != 1 || pids[0] != pid || !strings.Contains(what[0], `"sleep"`) {
		t.Fatalf("groupStrays: %v %v %v; want the sleep %d", pids, what, err, pid)
	}
	if pids, _, err := groupStrays(procs, gid, uid, map[int]bool{pid: true}); err != nil || len(pids) != 0 {
		t.Fatalf("in the tree: %v %v; want none", pids, err)
	}
	if pids, _, err := groupStrays(procs, gid, uid+1, nil); err != nil || len(pids) != 0 {
		t.Fatalf("another user: %v %v; want none", pids, err)
	}
}

// BenchmarkGroupStrays: one walk of /proc and a look for strays of the group in it (before
// every launch, release and typing as a user; the walk also gives the browser's tree).
func BenchmarkGroupStrays(b *testing.B) {
	for i := 0; i < b.N; i++ {
		procs, err := procTable()
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := groupStrays(procs, 4242, 65534, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMapsOfAProcessThatExits: mappings opened while the process ran and read after it
// exited fail with ESRCH (the soak's renderer the host stopped: "read /proc/N/maps: no such
// process" failed a sign-in elsewhere with BROWSER_FAILED); that is an exit, not a failure to
// check. Any other error of a live process still is one.
func TestMapsOfAProcessThatExits(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Process.Kill()
	cmd.Wait()
	_, err = scanMapsBounded(f, maxMapsBytes, []string{"/usr/"}, &sync.Map{})
	if !errors.Is(err, unix.ESRCH) {
		t.Fatalf("reading the maps of a process that exited: %v, want ESRCH", err)
	}
	if !exited(pid, err) {
		t.Errorf("exited(%d, %v) = false", pid, err)
	}
	if exited(os.Getpid(), errors.New("malformed line")) {
		t.Errorf("a live process's read error counts as an exit")
	}
}
