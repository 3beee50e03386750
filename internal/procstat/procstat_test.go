package procstat

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Stat
		ok   bool
	}{
		{"42 (chromium) S 1 42 42 34816 42 4194560", Stat{"S", 1, 34816}, true},
		{"7 (a) b) (c) Z 3 7 7 0 -1", Stat{"Z", 3, 0}, true},
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
	if !ok || st.PPID != os.Getppid() || !Alive(os.Getpid()) {
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
}
