package host

import (
	"os"
	"strings"
	"testing"
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
	desc, err := scanMaps(strings.NewReader(string(maps)), sys, map[string]bool{})
	if err != nil || !strings.Contains(desc, self) {
		t.Fatalf("scan without the binary's directory trusted: %q, %v; want the test binary named", desc, err)
	}
	if os.Getuid() == 0 {
		// Root owns the test binary: trusting its directory accepts it.
		desc, err = scanMaps(strings.NewReader(string(maps)), append(sys, self[:strings.LastIndexByte(self, '/')+1]), map[string]bool{})
		if err != nil || desc != "" {
			t.Fatalf("scan with the binary's directory trusted: %q, %v", desc, err)
		}
	}
	if _, err := scanMaps(strings.NewReader("not a maps line\n"), sys, map[string]bool{}); err == nil {
		t.Fatal("a malformed line was accepted")
	}
}
