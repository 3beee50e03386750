package loopback

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const (
	tcpHeader  = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	tcp6Header = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
)

// sock is one line of a fake socket table: local address in the kernel's (little-endian)
// spelling, state, uid, inode.
type sock struct {
	local string
	st    string
	uid   int
	inode uint64
}

func (s sock) line(i int) string {
	remote := "00000000:0000"
	if len(s.local) > 13 {
		remote = "00000000000000000000000000000000:0000"
	}
	return fmt.Sprintf("%4d: %s %s %s 00000000:00000000 00:00000000 00000000 %5d        0 %d 1 0000000000000000 100 0 0 10 0\n",
		i, s.local, remote, s.st, s.uid, s.inode)
}

// proc is a fake process: its exe link ("" for none) and descriptor links.
type proc struct {
	exe string
	fds []string
}

// fakeProc writes a procfs tree: net/tcp (always), net/tcp6 (unless tcp6 is nil) and the
// processes, plus entries a real /proc has that are not processes.
func fakeProc(t *testing.T, tcp, tcp6 []sock, procs map[int]proc) string {
	t.Helper()
	root := t.TempDir()
	write := func(name, header string, socks []sock) {
		var b strings.Builder
		b.WriteString(header)
		for i, s := range socks {
			b.WriteString(s.line(i))
		}
		if err := os.WriteFile(filepath.Join(root, "net", name), []byte(b.String()), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.MkdirAll(filepath.Join(root, "net"), 0o755))
	write("tcp", tcpHeader, tcp)
	if tcp6 != nil {
		write("tcp6", tcp6Header, tcp6)
	}
	must(t, os.MkdirAll(filepath.Join(root, "sys", "kernel"), 0o755))
	must(t, os.Symlink("1", filepath.Join(root, "self")))
	must(t, os.MkdirAll(filepath.Join(root, "0123", "fd"), 0o755)) // not a pid
	must(t, os.Symlink("socket:[100]", filepath.Join(root, "0123", "fd", "3")))
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		must(t, os.MkdirAll(filepath.Join(dir, "fd"), 0o755))
		if p.exe != "" {
			must(t, os.Symlink(p.exe, filepath.Join(dir, "exe")))
		}
		for i, l := range p.fds {
			must(t, os.Symlink(l, filepath.Join(dir, "fd", strconv.Itoa(i))))
		}
	}
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Addresses as the kernel prints them, port 8080 (1F90).
const (
	k4Loop   = "0100007F:1F90"
	k4Loop2  = "0200007F:1F90" // 127.0.0.2
	k4Any    = "00000000:1F90"
	k4Other  = "0100007F:1F91" // 127.0.0.1:8081
	k6Loop   = "00000000000000000000000001000000:1F90"
	k6Any    = "00000000000000000000000000000000:1F90"
	k6Mapped = "0000000000000000FFFF00000100007F:1F90" // ::ffff:127.0.0.1
	k6Map0   = "0000000000000000FFFF000000000000:1F90" // ::ffff:0.0.0.0
	k6Other  = "00000000000000000000000002000000:1F90" // ::2
)

func TestFindFake(t *testing.T) {
	noise := []string{"/dev/null", "pipe:[5]", "anon_inode:[eventfd]", "socket:[999]"}
	fds := func(links ...string) []string { return append(append([]string{}, noise...), links...) }
	for _, tt := range []struct {
		name       string
		tcp, tcp6  []sock
		procs      map[int]proc
		origin     string
		wantSocks  []Socket
		wantProcs  []Process
		wantString string
		wantErr    error
	}{
		{
			name:       "one v4 listener",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[11]")}, 7: {"/usr/bin/bash", fds()}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/python3", []uint64{11}}},
			wantString: "pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080",
		},
		{
			name:       "only LISTEN counts",
			tcp:        []sock{{k4Loop, "01", 1000, 12}, {k4Loop, "06", 0, 0}, {k4Loop, "08", 1000, 13}},
			tcp6:       []sock{{k6Loop, "01", 1000, 14}},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[12]", "socket:[13]", "socket:[14]")}},
			origin:     "http://localhost:8080",
			wantString: "nothing listens on 127.0.0.1:8080 or [::1]:8080",
		},
		{
			name:       "other address and other port do not count",
			tcp:        []sock{{k4Loop2, "0A", 1000, 11}, {k4Other, "0A", 1000, 12}},
			tcp6:       []sock{{k6Other, "0A", 1000, 13}},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[11]", "socket:[12]", "socket:[13]")}},
			origin:     "http://localhost:8080",
			wantString: "nothing listens on 127.0.0.1:8080 or [::1]:8080",
		},
		{
			name:       "127.0.0.2 is its own address",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}, {k4Loop2, "0A", 1000, 12}},
			tcp6:       []sock{},
			procs:      map[int]proc{10: {"/usr/bin/a", fds("socket:[11]")}, 20: {"/usr/bin/b", fds("socket:[12]")}},
			origin:     "http://127.0.0.2:8080",
			wantSocks:  []Socket{{ap("127.0.0.2:8080"), 12, 1000}},
			wantProcs:  []Process{{20, "/usr/bin/b", []uint64{12}}},
			wantString: "pid 20 (/usr/bin/b, uid 1000) listens on 127.0.0.2:8080",
		},
		{
			name:       "v4 wildcard serves 127.0.0.1",
			tcp:        []sock{{k4Any, "0A", 33, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{1: {"/usr/sbin/nginx", fds("socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("0.0.0.0:8080"), 11, 33}},
			wantProcs:  []Process{{1, "/usr/sbin/nginx", []uint64{11}}},
			wantString: "pid 1 (/usr/sbin/nginx, uid 33) listens on 0.0.0.0:8080",
		},
		{
			name:       "v4 wildcard does not serve ::1",
			tcp:        []sock{{k4Any, "0A", 33, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{1: {"/usr/sbin/nginx", fds("socket:[11]")}},
			origin:     "http://[::1]:8080",
			wantString: "nothing listens on [::1]:8080",
		},
		{
			name:       "v6 wildcard serves both families",
			tcp6:       []sock{{k6Any, "0A", 1000, 11}},
			tcp:        []sock{},
			procs:      map[int]proc{5: {"/usr/bin/node", fds("socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("[::]:8080"), 11, 1000}},
			wantProcs:  []Process{{5, "/usr/bin/node", []uint64{11}}},
			wantString: "pid 5 (/usr/bin/node, uid 1000) listens on [::]:8080",
		},
		{
			name:       "v4-mapped sockets serve 127.0.0.1",
			tcp6:       []sock{{k6Mapped, "0A", 1000, 11}, {k6Map0, "0A", 1000, 12}},
			procs:      map[int]proc{5: {"/usr/bin/node", fds("socket:[12]", "socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("[::ffff:0.0.0.0]:8080"), 12, 1000}, {ap("[::ffff:127.0.0.1]:8080"), 11, 1000}},
			wantProcs:  []Process{{5, "/usr/bin/node", []uint64{11, 12}}},
			wantString: "pid 5 (/usr/bin/node, uid 1000) listens on [::ffff:0.0.0.0]:8080 and [::ffff:127.0.0.1]:8080",
		},
		{
			name:       "v4-mapped sockets do not serve ::1",
			tcp6:       []sock{{k6Mapped, "0A", 1000, 11}},
			procs:      map[int]proc{5: {"/usr/bin/node", fds("socket:[11]")}},
			origin:     "http://[::1]:8080",
			wantString: "nothing listens on [::1]:8080",
		},
		{
			name:       "one process on both families",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{{k6Loop, "0A", 1000, 12}},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[12]", "socket:[11]")}},
			origin:     "http://localhost:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}, {ap("[::1]:8080"), 12, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/python3", []uint64{11, 12}}},
			wantString: "pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080 and [::1]:8080",
		},
		{
			name:       "different processes on the two families",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{{k6Loop, "0A", 1000, 12}},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[11]")}, 6666: {"/tmp/agent", fds("socket:[12]")}},
			origin:     "http://localhost:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}, {ap("[::1]:8080"), 12, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/python3", []uint64{11}}, {6666, "/tmp/agent", []uint64{12}}},
			wantString: "pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080; pid 6666 (/tmp/agent, uid 1000) listens on [::1]:8080",
			wantErr:    ErrAmbiguous,
		},
		{
			name:       "different processes, but 127.0.0.1 alone is clear",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{{k6Loop, "0A", 1000, 12}},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[11]")}, 6666: {"/tmp/agent", fds("socket:[12]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/python3", []uint64{11}}},
			wantString: "pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080",
		},
		{
			name:       "v4 wildcard and v6 wildcard of different processes",
			tcp:        []sock{{k4Any, "0A", 0, 11}},
			tcp6:       []sock{{k6Any, "0A", 0, 12}},
			procs:      map[int]proc{300: {"/usr/bin/docker-proxy", fds("socket:[11]")}, 301: {"/usr/bin/docker-proxy", fds("socket:[12]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("0.0.0.0:8080"), 11, 0}, {ap("[::]:8080"), 12, 0}},
			wantProcs:  []Process{{300, "/usr/bin/docker-proxy", []uint64{11}}, {301, "/usr/bin/docker-proxy", []uint64{12}}},
			wantString: "pid 300 (/usr/bin/docker-proxy, uid 0) listens on 0.0.0.0:8080; pid 301 (/usr/bin/docker-proxy, uid 0) listens on [::]:8080",
			wantErr:    ErrAmbiguous,
		},
		{
			name:       "two sockets, one holder not visible",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{{k6Loop, "0A", 0, 12}},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[11]")}},
			origin:     "http://localhost:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}, {ap("[::1]:8080"), 12, 0}},
			wantProcs:  []Process{{4242, "/usr/bin/python3", []uint64{11}}},
			wantString: "pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080; uid 0 (process not visible) listens on [::1]:8080",
			wantErr:    ErrAmbiguous,
		},
		{
			name:       "one process holds all, a second holds one",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{{k6Loop, "0A", 1000, 12}},
			procs:      map[int]proc{100: {"/usr/bin/srv", fds("socket:[11]", "socket:[12]")}, 101: {"/usr/bin/srv", fds("socket:[12]")}},
			origin:     "http://localhost:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}, {ap("[::1]:8080"), 12, 1000}},
			wantProcs:  []Process{{100, "/usr/bin/srv", []uint64{11, 12}}, {101, "/usr/bin/srv", []uint64{12}}},
			wantString: "pid 100 (/usr/bin/srv, uid 1000) listens on 127.0.0.1:8080; pids 100 and 101 (/usr/bin/srv, uid 1000) listen on [::1]:8080",
		},
		{
			name:      "pre-forked workers share one socket",
			tcp:       []sock{{k4Any, "0A", 0, 11}},
			tcp6:      []sock{},
			procs:     map[int]proc{100: {"/usr/sbin/nginx", fds("socket:[11]")}, 101: {"/usr/sbin/nginx", fds("socket:[11]")}, 102: {"/usr/sbin/nginx", fds("socket:[11]")}, 103: {"/usr/sbin/nginx", fds("socket:[11]")}, 104: {"/usr/sbin/nginx", fds()}},
			origin:    "http://localhost:8080",
			wantSocks: []Socket{{ap("0.0.0.0:8080"), 11, 0}},
			wantProcs: []Process{
				{100, "/usr/sbin/nginx", []uint64{11}}, {101, "/usr/sbin/nginx", []uint64{11}},
				{102, "/usr/sbin/nginx", []uint64{11}}, {103, "/usr/sbin/nginx", []uint64{11}},
			},
			wantString: "pids 100, 101, 102 and 1 more (/usr/sbin/nginx, uid 0) listen on 0.0.0.0:8080",
		},
		{
			name:       "holders with different executables",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{100: {"/usr/bin/a", fds("socket:[11]")}, 101: {"/usr/bin/b", fds("socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{100, "/usr/bin/a", []uint64{11}}, {101, "/usr/bin/b", []uint64{11}}},
			wantString: "pids 100 (/usr/bin/a) and 101 (/usr/bin/b) (uid 1000) listen on 127.0.0.1:8080",
		},
		{
			name:       "holder not visible",
			tcp:        []sock{{k4Loop, "0A", 0, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds()}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 0}},
			wantString: "uid 0 (process not visible) listens on 127.0.0.1:8080",
		},
		{
			name:       "exe not readable",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{4242: {"", fds("socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{4242, "", []uint64{11}}},
			wantString: "pid 4242 (exe not readable, uid 1000) listens on 127.0.0.1:8080",
		},
		{
			name:       "hostile executable name is quoted",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{4242: {"/tmp/x\nnothing listens on 127.0.0.1:8080, uid 0) \x1b[2K", fds("socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{4242, "/tmp/x\nnothing listens on 127.0.0.1:8080, uid 0) \x1b[2K", []uint64{11}}},
			wantString: `pid 4242 ("/tmp/x\nnothing listens on 127.0.0.1:8080, uid 0) \x1b[2K", uid 1000) listens on 127.0.0.1:8080`,
		},
		{
			name:       "deleted executable",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{4242: {"/usr/bin/python3 (deleted)", fds("socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/python3 (deleted)", []uint64{11}}},
			wantString: `pid 4242 ("/usr/bin/python3 (deleted)", uid 1000) listens on 127.0.0.1:8080`,
		},
		{
			name:       "long executable path is shortened",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{4242: {"/usr/bin/python3" + strings.Repeat("A", 100) + "/evil", fds("socket:[11]")}},
			origin:     "http://127.0.0.1:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/python3" + strings.Repeat("A", 100) + "/evil", []uint64{11}}},
			wantString: `pid 4242 ("/usr/bin/python3` + strings.Repeat("A", 24) + `"..."` + strings.Repeat("A", 35) + `/evil", uid 1000) listens on 127.0.0.1:8080`,
		},
		{
			name:       "no tcp6 table: no IPv6 sockets",
			tcp:        []sock{{k4Loop, "0A", 1000, 11}},
			procs:      map[int]proc{4242: {"/usr/bin/python3", fds("socket:[11]")}},
			origin:     "http://localhost:8080",
			wantSocks:  []Socket{{ap("127.0.0.1:8080"), 11, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/python3", []uint64{11}}},
			wantString: "pid 4242 (/usr/bin/python3, uid 1000) listens on 127.0.0.1:8080",
		},
		{
			name:       "https default port",
			tcp:        []sock{{"0100007F:01BB", "0A", 1000, 11}},
			tcp6:       []sock{},
			procs:      map[int]proc{4242: {"/usr/bin/caddy", fds("socket:[11]")}},
			origin:     "https://localhost",
			wantSocks:  []Socket{{ap("127.0.0.1:443"), 11, 1000}},
			wantProcs:  []Process{{4242, "/usr/bin/caddy", []uint64{11}}},
			wantString: "pid 4242 (/usr/bin/caddy, uid 1000) listens on 127.0.0.1:443",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := Finder{Proc: fakeProc(t, tt.tcp, tt.tcp6, tt.procs)}
			l, err := f.Find(tt.origin)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Find: error %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				want := fmt.Sprintf("%v: %s: %s", tt.wantErr, tt.origin, tt.wantString)
				if err.Error() != want {
					t.Errorf("error\n  %s\nwant\n  %s", err, want)
				}
			}
			if l.Origin != tt.origin {
				t.Errorf("Origin = %q", l.Origin)
			}
			if !reflect.DeepEqual(l.Sockets, tt.wantSocks) {
				t.Errorf("Sockets = %v, want %v", l.Sockets, tt.wantSocks)
			}
			if !reflect.DeepEqual(l.Procs, tt.wantProcs) {
				t.Errorf("Procs = %v, want %v", l.Procs, tt.wantProcs)
			}
			if l.Incomplete {
				t.Error("Incomplete")
			}
			if s := l.String(); s != tt.wantString {
				t.Errorf("String\n  %s\nwant\n  %s", s, tt.wantString)
			}
			if (l.Key() == "") != (len(tt.wantSocks) == 0) {
				t.Errorf("Key = %q with %d sockets", l.Key(), len(tt.wantSocks))
			}
		})
	}
}

func TestFindFakeUnavailable(t *testing.T) {
	ok := []sock{{k4Loop, "0A", 1000, 11}}
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, root string)
		want  string
	}{
		{"no tcp table", func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, "net", "tcp"))) }, "net/tcp: no such file"},
		{"no net directory", func(t *testing.T, root string) { must(t, os.RemoveAll(filepath.Join(root, "net"))) }, "net/tcp: no such file"},
		{"tcp is a directory", func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "net", "tcp")))
			must(t, os.Mkdir(filepath.Join(root, "net", "tcp"), 0o755))
		}, "is a directory"},
		{"malformed tcp", func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "net", "tcp"), []byte(tcpHeader+"   0: 0100007F:1F9\n"), 0o644))
		}, "net/tcp: line 2: malformed socket table"},
		{"malformed tcp6", func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "net", "tcp6"), []byte(tcp6Header+sock{k4Loop, "0A", 0, 1}.line(0)), 0o644))
		}, "net/tcp6: line 2: malformed socket table: local address"},
		{"tcp6 unreadable", func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "net", "tcp6")))
			must(t, os.Symlink("tcp6", filepath.Join(root, "net", "tcp6"))) // a loop: ELOOP, not ENOENT
		}, "too many levels of symbolic links"},
		{"empty tcp", func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "net", "tcp"), nil, 0o644))
		}, "net/tcp: malformed socket table: empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeProc(t, ok, []sock{}, map[int]proc{1: {"/a", []string{"socket:[11]"}}})
			tt.setup(t, root)
			l, err := Finder{Proc: root}.Find("http://localhost:8080")
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Find = %v; want ErrUnavailable containing %q", err, tt.want)
			}
			if !reflect.DeepEqual(l, Listener{}) {
				t.Fatalf("Listener = %+v with ErrUnavailable, want empty", l)
			}
			if tt.name == "no tcp table" && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("error %v does not keep fs.ErrNotExist", err)
			}
		})
	}
}

func TestFindFakeLimits(t *testing.T) {
	tcp := []sock{{k4Loop, "0A", 1000, 11}, {k4Other, "0A", 1000, 12}, {k4Loop2, "01", 1000, 13}}
	procs := map[int]proc{
		10: {"/a", []string{"/dev/null", "/dev/null", "/dev/null"}},
		20: {"/b", []string{"/dev/null", "socket:[11]"}},
		30: {"/c", []string{"socket:[11]"}},
	}
	// Descriptor order within a directory is the file system's; process 20's two links are
	// the same so that a budget ending inside it gives one answer.
	procs[20] = proc{"/b", []string{"socket:[11]", "socket:[11]"}}
	root := fakeProc(t, tcp, []sock{}, procs)
	full := []Process{{20, "/b", []uint64{11}}, {30, "/c", []uint64{11}}}
	for _, tt := range []struct {
		name       string
		lim        limits
		wantProcs  []Process
		incomplete bool
		err        string
	}{
		{"defaults", limits{}, full, false, ""},
		{"table at its line limit", limits{lines: 4}, full, false, ""},
		{"table over its line limit", limits{lines: 3}, nil, false, "net/tcp: malformed socket table: more than 3 lines"},
		{"table over its byte limit", limits{bytes: 200}, nil, false, "net/tcp: malformed socket table: longer than 200 bytes"},
		{"processes at their limit", limits{procs: 3}, full, false, ""},
		{"processes over their limit", limits{procs: 2}, []Process{{20, "/b", []uint64{11}}}, true, ""},
		{"descriptors at their limit", limits{fds: 6}, full, false, ""},
		{"descriptors over their limit", limits{fds: 5}, []Process{{20, "/b", []uint64{11}}}, true, ""},
		{"descriptors run out inside a process", limits{fds: 4}, []Process{{20, "/b", []uint64{11}}}, true, ""},
		{"descriptors run out before a holder", limits{fds: 3}, nil, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Finder{Proc: root, lim: tt.lim}.Find("http://127.0.0.1:8080")
			if tt.err != "" {
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Find = %v; want ErrUnavailable containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(l.Procs, tt.wantProcs) || l.Incomplete != tt.incomplete {
				t.Fatalf("Procs = %v, Incomplete = %v; want %v, %v", l.Procs, l.Incomplete, tt.wantProcs, tt.incomplete)
			}
			if got := strings.HasSuffix(l.String(), " (process scan incomplete)"); got != tt.incomplete {
				t.Fatalf("String() = %q", l.String())
			}
		})
	}
}

func TestStringBounds(t *testing.T) {
	l := Listener{Origin: "http://localhost:8080"}
	for i := range 9 {
		ino := uint64(100 + i)
		l.Sockets = append(l.Sockets, Socket{ap(fmt.Sprintf("127.0.0.1:%d", 8000+i)), ino, i})
		l.Procs = append(l.Procs, Process{PID: 1000 + i, Exe: "/" + strings.Repeat("\x00", 200), Inodes: []uint64{ino}})
	}
	s := l.String()
	if len(s) > MaxLine {
		t.Fatalf("String is %d bytes, more than %d", len(s), MaxLine)
	}
	for _, c := range []byte(s) {
		if c < ' ' || c > '~' {
			t.Fatalf("String has byte %#x: %q", c, s)
		}
	}
	if !strings.HasSuffix(s, "; and 5 more sockets") {
		t.Fatalf("String = %q, want it to end in the count of sockets not shown", s)
	}

	one := Listener{Sockets: []Socket{{ap("127.0.0.1:1"), 1, 0}, {ap("127.0.0.2:1"), 2, 0}, {ap("127.0.0.3:1"), 3, 0}, {ap("127.0.0.4:1"), 4, 0}, {ap("127.0.0.5:1"), 5, 0}}}
	want := "uid 0 (process not visible) listens on 127.0.0.1:1, 127.0.0.2:1, 127.0.0.3:1, 127.0.0.4:1 and 1 more"
	if s := one.String(); s != want {
		t.Fatalf("String = %q, want %q", s, want)
	}
	uids := Listener{Sockets: []Socket{{ap("127.0.0.1:1"), 1, 1000}, {ap("[::1]:1"), 2, 0}}}
	want = "uids 0 and 1000 (process not visible) listens on 127.0.0.1:1 and [::1]:1"
	if s := uids.String(); s != want {
		t.Fatalf("String = %q, want %q", s, want)
	}
	if s := (Listener{}).String(); s != "nothing listens on the origin's addresses" {
		t.Fatalf("zero Listener String = %q", s)
	}
}

func TestKey(t *testing.T) {
	a := Listener{Sockets: []Socket{{ap("127.0.0.1:8080"), 12, 1000}, {ap("[::1]:8080"), 11, 1000}}}
	if got, want := a.Key(), "11@[::1]:8080/1000 12@127.0.0.1:8080/1000"; got != want {
		t.Fatalf("Key = %q, want %q", got, want)
	}
	withProcs := a
	withProcs.Procs = []Process{{PID: 1, Inodes: []uint64{11, 12}}}
	withProcs.Origin = "http://localhost:8080"
	for _, tt := range []struct {
		name string
		l    Listener
		same bool
	}{
		{"holders and origin are not part of it", withProcs, true},
		{"socket replaced", Listener{Sockets: []Socket{{ap("127.0.0.1:8080"), 13, 1000}, {ap("[::1]:8080"), 11, 1000}}}, false},
		{"socket removed", Listener{Sockets: []Socket{{ap("[::1]:8080"), 11, 1000}}}, false},
		{"socket added", Listener{Sockets: []Socket{{ap("127.0.0.1:8080"), 12, 1000}, {ap("[::1]:8080"), 11, 1000}, {ap("0.0.0.0:8080"), 14, 1000}}}, false},
		{"other uid", Listener{Sockets: []Socket{{ap("127.0.0.1:8080"), 12, 0}, {ap("[::1]:8080"), 11, 1000}}}, false},
		{"nothing", Listener{}, false},
	} {
		if got := tt.l.Key() == a.Key(); got != tt.same {
			t.Errorf("%s: Key %q vs %q", tt.name, tt.l.Key(), a.Key())
		}
	}
	if k := (Listener{}).Key(); k != "" {
		t.Fatalf("empty Key = %q", k)
	}
}
