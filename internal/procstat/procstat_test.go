package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Stat
		ok   bool
	}{
		{"42 (chromium) S 1 42 42 34816 42 4194560", Stat{"S", 1, 42, 34816, "chromium"}, true},
		{"7 (a) b) (c) Z 3 7 7 0 -1", Stat{"Z", 3, 7, 0, "a) b) (c"}, true},
		{"8 (evil\x1b[2J) S 1 8 8 0 -1", Stat{"S", 1, 8, 0, "evil?[2J"}, true},
		{"9 (x) R 1", Stat{}, false},
		{"garbage", Stat{}, false},
	} {
		got, ok := parse([]byte(tt.in))
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("parse(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReadAndAlive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	st, ok := Read(os.Getpid())
	if !ok || st.PPID != os.Getppid() || st.PGRP != syscall.Getpgrp() || !Alive(os.Getpid()) {
		t.Fatalf("Read(self) = %+v, %v", st, ok)
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	cmd.Wait()
	if Alive(pid) {
		t.Fatalf("pid %d alive after it was reaped", pid)
	}
	for _, pid := range []int{0, -1} {
		if _, ok := Read(pid); ok {
			t.Errorf("Read(%d) ok", pid)
		}
	}
}

func TestChain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	// A child sh whose parent is this test: the chain names sh, then this test binary.
	cmd := exec.Command("sh", "-c", "exec sleep 5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	self, _ := os.Executable()
	var c []Proc
	for range 200 { // until sh has exec'd sleep
		if c = Chain(cmd.Process.Pid, 3); len(c) > 0 && c[0].Comm == "sleep" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(c) != 3 || c[0].PID != cmd.Process.Pid || c[0].Comm != "sleep" || !strings.HasSuffix(c[0].Exe, "/sleep") ||
		c[1].PID != os.Getpid() || c[1].Exe != self || c[2].PID != os.Getppid() {
		t.Fatalf("Chain = %+v", c)
	}
	if got := Chain(cmd.Process.Pid, 100); len(got) > MaxChain {
		t.Errorf("Chain(n=100) has %d entries", len(got))
	}
	if got := Chain(1, 4); len(got) != 1 || got[0].PID != 1 {
		t.Errorf("Chain(1) = %+v", got)
	}
	if got := Chain(os.Getpid(), 0); got != nil {
		t.Errorf("Chain(n=0) = %+v", got)
	}
	// A pid that does not exist: that pid alone, nothing known.
	gone := exec.Command("true")
	gone.Run()
	if got := Chain(gone.Process.Pid, 4); len(got) != 1 || got[0] != (Proc{PID: gone.Process.Pid}) {
		t.Errorf("Chain(gone) = %+v", got)
	}
	if s := Describe(c); !strings.Contains(s, " ← ") || !strings.HasPrefix(s, "pid ") {
		t.Errorf("Describe = %q", s)
	}
}

// TestLineage: a child's lineage is the child, this test, its parent … up to pid 1, beyond
// MaxChain when asked; n bounds it; a gone pid is that pid alone.
func TestLineage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	l := Lineage(cmd.Process.Pid, 32)
	if len(l) < 3 || l[0] != cmd.Process.Pid || l[1] != os.Getpid() || l[2] != os.Getppid() {
		t.Fatalf("Lineage = %v", l)
	}
	if last := l[len(l)-1]; len(l) < 32 && last != 1 && Alive(last) {
		if st, _ := Read(last); st.PPID != 0 {
			t.Fatalf("Lineage stopped at %d (parent %d) before pid 1: %v", last, st.PPID, l)
		}
	}
	if got := Lineage(cmd.Process.Pid, 2); len(got) != 2 || got[1] != os.Getpid() {
		t.Errorf("Lineage(n=2) = %v", got)
	}
	if got := Lineage(1, 32); len(got) != 1 || got[0] != 1 {
		t.Errorf("Lineage(1) = %v", got)
	}
	if got := Lineage(os.Getpid(), 0); got != nil {
		t.Errorf("Lineage(n=0) = %v", got)
	}
	gone := exec.Command("true")
	gone.Run()
	if got := Lineage(gone.Process.Pid, 32); len(got) != 1 || got[0] != gone.Process.Pid {
		t.Errorf("Lineage(gone) = %v", got)
	}
}

func TestProcString(t *testing.T) {
	for p, want := range map[Proc]string{
		{PID: 3, Exe: "/usr/bin/bash", Comm: "bash"}: "pid 3 /usr/bin/bash",
		{PID: 4, Comm: "headless"}:                   `pid 4 comm "headless" (executable unreadable)`,
		{PID: 5}:                                     "pid 5 (unknown)",
	} {
		if got := p.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", p, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"a\nb\x00c\u202ed", 20, "a?b?c?d"},
		{"\xff\xfe", 10, "?"},
		{"ÄÄÄ", 3, "Ä"},
		{"abc", 0, ""},
	} {
		got := Clean(tt.in, tt.max)
		if got != tt.want || !Printable(got) {
			t.Errorf("Clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	if Printable("a\tb") || !Printable("a b") {
		t.Error("Printable")
	}
}

func FuzzClean(f *testing.F) {
	f.Add("x\x1b", 5)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := Clean(s, max)
		if len(got) > max || !Printable(got) {
			t.Fatalf("Clean(%q, %d) = %q", s, max, got)
		}
	})
}
