//go:build linux

package loopback

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// The test binary doubles as the second process of the real tests: with childEnv set, TestMain
// runs one of the child modes below instead of the tests.
const childEnv = "LOOPBACK_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
	case "listen":
		os.Exit(childListen())
	case "hold":
		os.Exit(childHold())
	case "find":
		os.Exit(childFind())
	case "idle":
		os.Exit(childIdle())
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%q\n", childEnv, os.Getenv(childEnv))
		os.Exit(2)
	}
	code := realtest.RunReaping(m, "loopback")
	if code == 0 {
		code = checkNoListeners()
	}
	os.Exit(code)
}

// checkNoListeners fails the run when the test process still holds a listening socket.
func checkNoListeners() int {
	f := Finder{}
	socks, err := f.listening()
	if err != nil {
		fmt.Fprintf(os.Stderr, "loopback tests: listing sockets after the run: %v\n", err)
		return 1
	}
	inodes := map[uint64]bool{}
	for _, s := range socks {
		inodes[s.Inode] = true
	}
	procs, _ := f.holders(inodes)
	for _, p := range procs {
		if p.PID == os.Getpid() {
			fmt.Fprintf(os.Stderr, "loopback tests leaked listening sockets %v\n", p.Inodes)
			return 1
		}
	}
	return 0
}

// childListen listens on LOOPBACK_TEST_NET, LOOPBACK_TEST_ADDR (IPV6_V6ONLY from
// LOOPBACK_TEST_V6ONLY unless empty), prints "ready", and exits when stdin closes.
func childListen() int {
	v6only := -1
	if s := os.Getenv("LOOPBACK_TEST_V6ONLY"); s != "" {
		v6only, _ = strconv.Atoi(s)
	}
	l, err := listenOpt(os.Getenv("LOOPBACK_TEST_NET"), os.Getenv("LOOPBACK_TEST_ADDR"), v6only)
	if err != nil {
		fmt.Printf("error %v\n", err)
		return 1
	}
	defer l.Close()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// childHold keeps descriptor 3 (a listener it inherited) open until stdin closes.
func childHold() int {
	f := os.NewFile(3, "inherited")
	defer f.Close()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// childIdle opens LOOPBACK_TEST_FDS descriptors and waits for stdin to close: a bystander for
// the benchmark's holder scan.
func childIdle() int {
	n, _ := strconv.Atoi(os.Getenv("LOOPBACK_TEST_FDS"))
	for range n {
		if _, err := os.Open(os.DevNull); err != nil {
			fmt.Printf("error %v\n", err)
			return 1
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// findResult is what childFind prints.
type findResult struct {
	String string
	Key    string
	Procs  []Process
	Err    string
}

// childFind runs Find for LOOPBACK_TEST_ORIGIN and prints the result as JSON.
func childFind() int {
	l, err := Finder{}.Find(os.Getenv("LOOPBACK_TEST_ORIGIN"))
	r := findResult{String: l.String(), Key: l.Key(), Procs: l.Procs}
	if err != nil {
		r.Err = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// listenOpt listens like net.Listen; v6only 0 or 1 sets IPV6_V6ONLY before bind (-1 keeps Go's
// choice: on for "tcp6", off for "tcp" on a wildcard).
func listenOpt(network, addr string, v6only int) (net.Listener, error) {
	if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Addr().Is4In6() && network == "tcp6" {
		return listenMapped(ap)
	}
	lc := net.ListenConfig{}
	if v6only >= 0 {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, v6only)
			}); err != nil {
				return err
			}
			return serr
		}
	}
	return lc.Listen(context.Background(), network, addr)
}

// listenMapped listens on an IPv6 socket bound to a v4-mapped address, which package net does
// not do (it would open an IPv4 socket).
func listenMapped(ap netip.AddrPort) (net.Listener, error) {
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "mapped")
	defer f.Close()
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 0); err != nil {
		return nil, err
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}); err != nil {
		return nil, fmt.Errorf("bind %s: %w", ap, err)
	}
	if err := syscall.Listen(fd, 16); err != nil {
		return nil, err
	}
	return net.FileListener(f)
}

// lsock describes one listener of a real test.
type lsock struct {
	network, host string // "tcp4", "127.0.0.1"
	v6only        int    // -1, 0 or 1
}

// listenSame opens listeners on one free port, all in this process, retrying with another
// port when one of the addresses is taken there.
func listenSame(t *testing.T, socks ...lsock) (int, []net.Listener) {
	t.Helper()
	for try := 0; try < 20; try++ {
		var ls []net.Listener
		port := 0
		var err error
		for _, s := range socks {
			var l net.Listener
			l, err = listenOpt(s.network, net.JoinHostPort(s.host, strconv.Itoa(port)), s.v6only)
			if err != nil {
				break
			}
			ls = append(ls, l)
			port = l.Addr().(*net.TCPAddr).Port
		}
		if err == nil {
			for i, l := range ls {
				checkV6Only(t, l, socks[i])
				t.Cleanup(func() { l.Close() })
			}
			return port, ls
		}
		for _, l := range ls {
			l.Close()
		}
		if len(ls) == 0 {
			t.Fatalf("listen %s %s: %v (the real tests need 127.0.0.0/8 and ::1 on lo)", socks[0].network, socks[0].host, err)
		}
	}
	t.Fatalf("no port free on all of %v", socks)
	return 0, nil
}

// checkV6Only fails t unless l's IPV6_V6ONLY is what s asked for.
func checkV6Only(t *testing.T, l net.Listener, s lsock) {
	t.Helper()
	if s.v6only < 0 {
		return
	}
	rc, err := l.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY) })
	if gerr != nil || v != s.v6only {
		t.Fatalf("%v: IPV6_V6ONLY = %d, %v", s, v, gerr)
	}
}

// inode is the socket inode of l, from fstat.
func inode(t *testing.T, l net.Listener) uint64 {
	t.Helper()
	rc, err := l.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	var serr error
	rc.Control(func(fd uintptr) { serr = syscall.Fstat(int(fd), &st) })
	if serr != nil {
		t.Fatal(serr)
	}
	return st.Ino
}

func selfExe(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestRealDecoding checks the table decoding against the kernel: addresses whose bytes differ
// (so a swapped word or byte shows), the port, the inode and the uid of sockets this process
// opened.
func TestRealDecoding(t *testing.T) {
	self, exe, uid := os.Getpid(), selfExe(t), os.Getuid()
	for _, tt := range []struct {
		sock   lsock
		origin string // with %d for the port
		addr   string // with %d for the port
	}{
		{lsock{"tcp4", "127.1.2.3", -1}, "http://127.1.2.3:%d", "127.1.2.3:%d"},
		{lsock{"tcp4", "127.254.253.252", -1}, "http://127.254.253.252:%d", "127.254.253.252:%d"},
		{lsock{"tcp6", "::1", -1}, "http://[::1]:%d", "[::1]:%d"},
		{lsock{"tcp6", "::ffff:127.1.2.3", 0}, "http://127.1.2.3:%d", "[::ffff:127.1.2.3]:%d"},
	} {
		t.Run(tt.sock.host, func(t *testing.T) {
			port, ls := listenSame(t, tt.sock)
			origin := fmt.Sprintf(tt.origin, port)
			l, err := Finder{}.Find(origin)
			if err != nil {
				t.Fatal(err)
			}
			ino := inode(t, ls[0])
			want := []Socket{{netip.MustParseAddrPort(fmt.Sprintf(tt.addr, port)), ino, uid}}
			if !reflect.DeepEqual(l.Sockets, want) {
				t.Fatalf("Sockets = %v, want %v", l.Sockets, want)
			}
			if wantP := []Process{{self, exe, []uint64{ino}}}; !reflect.DeepEqual(l.Procs, wantP) {
				t.Fatalf("Procs = %v, want %v", l.Procs, wantP)
			}
			wantS := fmt.Sprintf("pid %d (%s, uid %d) listens on %s", self, exe, uid, fmt.Sprintf(tt.addr, port))
			if l.String() != wantS {
				t.Fatalf("String = %q, want %q", l.String(), wantS)
			}
		})
	}
}

// TestRealCandidates opens listeners of this process on one port and checks which of them each
// loopback origin on that port reaches. Wildcards and v6only variants included.
func TestRealCandidates(t *testing.T) {
	v4 := lsock{"tcp4", "127.0.0.1", -1}
	v6 := lsock{"tcp6", "::1", -1}
	any4 := lsock{"tcp4", "0.0.0.0", -1}
	any6only := lsock{"tcp6", "::", 1}
	any6dual := lsock{"tcp", "::", 0}
	mapped := lsock{"tcp6", "::ffff:127.0.0.1", 0}
	for _, tt := range []struct {
		name  string
		socks []lsock
		want  map[string][]string // origin host → addresses reached, "" for the port
	}{
		{"127.0.0.1", []lsock{v4}, map[string][]string{
			"127.0.0.1": {"127.0.0.1"}, "[::1]": nil, "localhost": {"127.0.0.1"}, "127.0.0.2": nil,
		}},
		{"::1", []lsock{v6}, map[string][]string{
			"127.0.0.1": nil, "[::1]": {"[::1]"}, "localhost": {"[::1]"},
		}},
		{"0.0.0.0", []lsock{any4}, map[string][]string{
			"127.0.0.1": {"0.0.0.0"}, "127.0.0.2": {"0.0.0.0"}, "[::1]": nil, "localhost": {"0.0.0.0"},
		}},
		// /proc does not show IPV6_V6ONLY: [::] counts for IPv4 origins either way.
		{":: v6only", []lsock{any6only}, map[string][]string{
			"127.0.0.1": {"[::]"}, "[::1]": {"[::]"}, "localhost": {"[::]"},
		}},
		{":: dual-stack", []lsock{any6dual}, map[string][]string{
			"127.0.0.1": {"[::]"}, "[::1]": {"[::]"}, "localhost": {"[::]"},
		}},
		{"::ffff:127.0.0.1", []lsock{mapped}, map[string][]string{
			"127.0.0.1": {"[::ffff:127.0.0.1]"}, "127.0.0.2": nil, "[::1]": nil, "localhost": {"[::ffff:127.0.0.1]"},
		}},
		{"127.0.0.1 and ::1", []lsock{v4, v6}, map[string][]string{
			"127.0.0.1": {"127.0.0.1"}, "[::1]": {"[::1]"}, "localhost": {"127.0.0.1", "[::1]"},
		}},
		{"0.0.0.0 and :: v6only", []lsock{any4, any6only}, map[string][]string{
			"127.0.0.1": {"0.0.0.0", "[::]"}, "[::1]": {"[::]"}, "localhost": {"0.0.0.0", "[::]"},
		}},
		{"127.0.0.1 and :: v6only", []lsock{v4, any6only}, map[string][]string{
			"127.0.0.1": {"127.0.0.1", "[::]"}, "[::1]": {"[::]"}, "localhost": {"127.0.0.1", "[::]"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			port, _ := listenSame(t, tt.socks...)
			for host, addrs := range tt.want {
				origin := fmt.Sprintf("http://%s:%d", host, port)
				l, err := Finder{}.Find(origin)
				if err != nil {
					t.Fatalf("%s: %v", origin, err) // one process: never ambiguous
				}
				var got, want []string
				var inodes []uint64
				for _, s := range l.Sockets {
					got = append(got, s.Addr.String())
				}
				for _, a := range addrs {
					want = append(want, fmt.Sprintf("%s:%d", a, port))
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: sockets %v, want %v", origin, got, want)
				}
				if len(addrs) == 0 {
					if l.Procs != nil || l.Key() != "" {
						t.Fatalf("%s: nothing listens, but Procs %v, Key %q", origin, l.Procs, l.Key())
					}
					continue
				}
				for _, s := range l.Sockets {
					inodes = append(inodes, s.Inode)
				}
				if len(l.Procs) != 1 || l.Procs[0].PID != os.Getpid() || len(l.Procs[0].Inodes) != len(inodes) {
					t.Fatalf("%s: Procs = %v, want this process holding %v", origin, l.Procs, inodes)
				}
				wantS := fmt.Sprintf("pid %d (%s, uid %d) listens on %s", os.Getpid(), selfExe(t), os.Getuid(), list(want, 9))
				if l.String() != wantS {
					t.Fatalf("%s: String = %q, want %q", origin, l.String(), wantS)
				}
			}
		})
	}
}

// child runs the test binary in a child mode and returns its pid and first line of output.
// The child is stopped (stdin closed, then killed) when t ends.
func child(t testing.TB, mode string, env []string, extra []*os.File, cred *syscall.Credential, exe string) (int, string) {
	t.Helper()
	if exe == "" {
		exe = selfExe(t)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{childEnv + "=" + mode}, env...)...)
	cmd.ExtraFiles = extra
	cmd.Stderr = os.Stderr
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimSuffix(line, "\n")
		io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	select {
	case line := <-lines:
		return cmd.Process.Pid, line
	case <-time.After(30 * time.Second):
		t.Fatalf("child %s: no output in 30 s", mode)
		return 0, ""
	}
}

// childListener starts a second process listening on network, host, port; ok is false when
// the address is taken.
func childListener(t *testing.T, network, host string, port, v6only int) (pid int, ok bool) {
	t.Helper()
	env := []string{"LOOPBACK_TEST_NET=" + network, "LOOPBACK_TEST_ADDR=" + net.JoinHostPort(host, strconv.Itoa(port))}
	if v6only >= 0 {
		env = append(env, "LOOPBACK_TEST_V6ONLY="+strconv.Itoa(v6only))
	}
	pid, line := child(t, "listen", env, nil, nil, "")
	if line == "ready" {
		return pid, true
	}
	if strings.Contains(line, "address already in use") {
		return pid, false
	}
	t.Fatalf("child listener on %s %s:%d: %q", network, host, port, line)
	return 0, false
}

// TestRealAmbiguous: the attack of issue 10. The dev server (this process) listens on
// 127.0.0.1:P only, another process on [::1]:P; localhost:P must be refused.
func TestRealAmbiguous(t *testing.T) {
	for _, tt := range []struct {
		name       string
		mine       lsock
		theirs     lsock
		origin     string // %d: port
		mineAddr   string
		theirsAddr string
		mineFirst  bool   // this process's socket sorts first
		alsoClear  string // an origin on P that reaches only this process's socket
		alsoTheirs string // an origin on P that reaches only the child's socket
	}{
		{"v4 server, v6 intruder", lsock{"tcp4", "127.0.0.1", -1}, lsock{"tcp6", "::1", -1}, "http://localhost:%d", "127.0.0.1", "[::1]", true, "http://127.0.0.1:%d", "http://[::1]:%d"},
		{"v6 server, v4 intruder", lsock{"tcp6", "::1", -1}, lsock{"tcp4", "127.0.0.1", -1}, "https://localhost:%d", "[::1]", "127.0.0.1", false, "https://[::1]:%d", "https://127.0.0.1:%d"},
		// Conservative: [::] v6only cannot take IPv4, but /proc does not say so.
		{"v4 wildcard, v6 wildcard", lsock{"tcp4", "0.0.0.0", -1}, lsock{"tcp6", "::", 1}, "http://127.0.0.1:%d", "0.0.0.0", "[::]", true, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var port, kid int
			var mine []net.Listener
			for try := 0; ; try++ {
				port, mine = listenSame(t, tt.mine)
				var ok bool
				if kid, ok = childListener(t, tt.theirs.network, tt.theirs.host, port, tt.theirs.v6only); ok {
					break
				}
				mine[0].Close()
				if try == 10 {
					t.Fatal("no port free on both families")
				}
			}
			self, exe, uid := os.Getpid(), selfExe(t), os.Getuid()
			origin := fmt.Sprintf(tt.origin, port)
			l, err := Finder{}.Find(origin)
			if !errors.Is(err, ErrAmbiguous) {
				t.Fatalf("Find(%s) = %v, %v; want ErrAmbiguous", origin, l, err)
			}
			groups := []string{
				fmt.Sprintf("pid %d (%s, uid %d) listens on %s:%d", self, exe, uid, tt.mineAddr, port),
				fmt.Sprintf("pid %d (%s, uid %d) listens on %s:%d", kid, exe, uid, tt.theirsAddr, port),
			}
			if !tt.mineFirst {
				groups[0], groups[1] = groups[1], groups[0]
			}
			want := fmt.Sprintf("%v: %s: %s; %s", ErrAmbiguous, origin, groups[0], groups[1])
			if err.Error() != want {
				t.Fatalf("error\n  %s\nwant\n  %s", err, want)
			}
			if len(l.Sockets) != 2 || len(l.Procs) != 2 {
				t.Fatalf("with ErrAmbiguous: Sockets %v, Procs %v; want both", l.Sockets, l.Procs)
			}
			// Sockets, which skips the holders for one socket, looks for them here.
			if ls, err := (Finder{}).Sockets(origin); !errors.Is(err, ErrAmbiguous) || err.Error() != want || !reflect.DeepEqual(ls, l) {
				t.Fatalf("Sockets(%s) = %v, %v; want Find's %v, %v", origin, ls, err, l, want)
			}
			if tt.alsoClear == "" {
				return
			}
			clear := fmt.Sprintf(tt.alsoClear, port)
			l, err = Finder{}.Find(clear)
			wantS := fmt.Sprintf("pid %d (%s, uid %d) listens on %s:%d", self, exe, uid, tt.mineAddr, port)
			if err != nil || l.String() != wantS {
				t.Fatalf("Find(%s) = %q, %v; want %q", clear, l.String(), err, wantS)
			}
			theirs := fmt.Sprintf(tt.alsoTheirs, port)
			l, err = Finder{}.Find(theirs)
			wantS = fmt.Sprintf("pid %d (%s, uid %d) listens on %s:%d", kid, exe, uid, tt.theirsAddr, port)
			if err != nil || l.String() != wantS {
				t.Fatalf("Find(%s) = %q, %v; want %q", theirs, l.String(), err, wantS)
			}
		})
	}
}

// TestRealPreforked: one socket held by two processes (a server and its worker) is not ambiguous.
func TestRealPreforked(t *testing.T) {
	port, ls := listenSame(t, lsock{"tcp4", "127.0.0.1", -1})
	f, err := ls[0].(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	kid, line := child(t, "hold", nil, []*os.File{f}, nil, "")
	f.Close()
	if line != "ready" {
		t.Fatalf("child: %q", line)
	}
	l, err := Finder{}.Find(fmt.Sprintf("http://localhost:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	self, exe, ino := os.Getpid(), selfExe(t), inode(t, ls[0])
	want := []Process{{self, exe, []uint64{ino}}, {kid, exe, []uint64{ino}}}
	if kid < self {
		want[0], want[1] = want[1], want[0]
	}
	if !reflect.DeepEqual(l.Procs, want) {
		t.Fatalf("Procs = %v, want %v", l.Procs, want)
	}
	wantS := fmt.Sprintf("pids %d and %d (%s, uid %d) listen on 127.0.0.1:%d", want[0].PID, want[1].PID, exe, os.Getuid(), port)
	if l.String() != wantS {
		t.Fatalf("String = %q, want %q", l.String(), wantS)
	}
}

// TestRealKeyChanges: the key is stable while the listener is, and changes when it is replaced.
func TestRealKeyChanges(t *testing.T) {
	port, ls := listenSame(t, lsock{"tcp4", "127.0.0.1", -1})
	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	key := func() string {
		t.Helper()
		l, err := Finder{}.Find(origin)
		if err != nil {
			t.Fatal(err)
		}
		// Sockets gives the same key without looking for holders.
		ls, err := Finder{}.Sockets(origin)
		if err != nil || ls.Key() != l.Key() || len(ls.Procs) != 0 || !reflect.DeepEqual(ls.Sockets, l.Sockets) {
			t.Fatalf("Sockets = %v (procs %v), %v; want key %q and no holders", ls.Sockets, ls.Procs, err, l.Key())
		}
		return l.Key()
	}
	k1 := key()
	if want := fmt.Sprintf("%d@127.0.0.1:%d/%d", inode(t, ls[0]), port, os.Getuid()); k1 != want {
		t.Fatalf("Key = %q, want %q", k1, want)
	}
	if k := key(); k != k1 {
		t.Fatalf("Key changed from %q to %q with the same listener", k1, k)
	}
	ls[0].Close()
	if k := key(); k != "" {
		t.Fatalf("Key = %q after the listener closed, want \"\"", k)
	}
	l2, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	k2 := key()
	if k2 == "" || k2 == k1 {
		t.Fatalf("Key = %q after the listener was replaced, was %q", k2, k1)
	}
	if want := fmt.Sprintf("%d@127.0.0.1:%d/%d", inode(t, l2), port, os.Getuid()); k2 != want {
		t.Fatalf("Key = %q, want %q", k2, want)
	}
}

// TestRealNotVisible: a process of another user looks for root's listener; it sees the
// socket and its uid, not the process.
func TestRealNotVisible(t *testing.T) {
	realtest.NeedRoot(t, "start a process of another user (uid 65534)")
	port, _ := listenSame(t, lsock{"tcp4", "127.0.0.1", -1})
	// The test binary lives in a 0700 build directory: copy it where uid 65534 can run it.
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		must(t, os.Chmod(d, 0o755))
	}
	exe := filepath.Join(dir, "loopback.test")
	b, err := os.ReadFile(selfExe(t))
	must(t, err)
	must(t, os.WriteFile(exe, b, 0o755))

	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	_, out := child(t, "find", []string{"LOOPBACK_TEST_ORIGIN=" + origin}, nil, &syscall.Credential{Uid: 65534, Gid: 65534}, exe)
	var r findResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("child output %q: %v", out, err)
	}
	want := findResult{String: fmt.Sprintf("uid 0 (process not visible) listens on 127.0.0.1:%d", port)}
	l, err := Finder{}.Find(origin)
	must(t, err)
	want.Key = l.Key()
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("as uid 65534: %+v, want %+v", r, want)
	}
}

func TestRealNotLoopback(t *testing.T) {
	for _, o := range []string{"https://example.com", "https://192.0.2.1:8443", "https://[::ffff:127.0.0.1]", "https://0.0.0.0"} {
		if l, err := (Finder{}).Find(o); !errors.Is(err, ErrNotLoopback) || !reflect.DeepEqual(l, Listener{}) {
			t.Errorf("Find(%q) = %+v, %v; want ErrNotLoopback", o, l, err)
		}
		if IsLoopback(o) {
			t.Errorf("IsLoopback(%q) = true", o)
		}
	}
}

// BenchmarkFind measures one Find on this machine: the tables, the holder scan of every
// process and the exe links. "nothing" stops after the tables.
func BenchmarkFind(b *testing.B) {
	l4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l4.Close()
	port := l4.Addr().(*net.TCPAddr).Port
	l6, err := net.Listen("tcp6", fmt.Sprintf("[::1]:%d", port))
	if err != nil {
		b.Fatal(err)
	}
	defer l6.Close()
	for _, bb := range []struct {
		name   string
		origin string
		extra  int  // idle processes started for the run, 50 descriptors each
		keyed  bool // Sockets (the look before typing), not Find
	}{
		{"listening", fmt.Sprintf("http://localhost:%d", port), 0, false},
		{"nothing", "http://localhost:9", 0, false},
		{"listening+40procs", fmt.Sprintf("http://localhost:%d", port), 40, false},
		{"sockets+40procs", fmt.Sprintf("http://127.0.0.1:%d", port), 40, true},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for range bb.extra {
				if _, line := child(b, "idle", []string{"LOOPBACK_TEST_FDS=50"}, nil, nil, ""); line != "ready" {
					b.Fatalf("idle child: %q", line)
				}
			}
			for b.Loop() {
				find := Finder{}.Find
				if bb.keyed {
					find = Finder{}.Sockets
				}
				if _, err := find(bb.origin); err != nil {
					b.Fatal(err)
				}
			}
			procs, _ := listPIDs("/proc", MaxProcs)
			b.ReportMetric(float64(len(procs)), "procs")
		})
	}
}

// BenchmarkHolders measures the holder scan alone over every process of this machine.
func BenchmarkHolders(b *testing.B) {
	f := Finder{}
	for b.Loop() {
		f.holders(map[uint64]bool{1: true})
	}
	pids, _ := listPIDs("/proc", MaxProcs)
	fds := 0
	for _, pid := range pids {
		_, n, _ := scanFDs(fmt.Sprintf("/proc/%d/fd", pid), nil, MaxFDs)
		fds += n
	}
	b.ReportMetric(float64(len(pids)), "procs")
	b.ReportMetric(float64(fds), "fds")
}

// BenchmarkTables measures reading the listening sockets alone: PROC/net/tcp and tcp6 (in
// parallel), and the socket diagnostics that Finder{} reads instead.
func BenchmarkTables(b *testing.B) {
	b.Run("proc", func(b *testing.B) {
		f := Finder{Proc: "/proc"}
		for b.Loop() {
			if _, err := f.listening(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := diagListening(Finder{}.limits()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRealDiagIsTheTables: the socket diagnostics that Finder{} reads give the listening
// sockets PROC/net/tcp and tcp6 give (addresses, v4-mapped ones as such, inodes, uids): with
// listeners of every kind on one port, and for the whole machine; connected sockets and
// sockets of other states are not in it.
func TestRealDiagIsTheTables(t *testing.T) {
	port, _ := listenSame(t, lsock{"tcp4", "127.0.0.1", -1}, lsock{"tcp6", "::1", 1}, lsock{"tcp6", "::ffff:127.0.0.2", 0}, lsock{"tcp4", "127.0.0.3", -1})
	// A connection in state ESTABLISHED on another port: never listed.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mine := func(socks []Socket) []Socket {
		return slices.DeleteFunc(slices.Clone(socks), func(s Socket) bool { return s.Addr.Port() != uint16(port) })
	}
	var diag, tables []Socket
	for try := 0; try < 5; try++ { // other programs of the machine may open or close listeners between the two reads
		if diag, err = diagListening(Finder{}.limits()); err != nil { // not listening(), which falls back to the tables
			t.Fatal(err)
		}
		slices.SortFunc(diag, func(a, b Socket) int { return cmp.Or(a.Addr.Compare(b.Addr), cmp.Compare(a.Inode, b.Inode)) })
		if tables, err = (Finder{Proc: "/proc"}).listening(); err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(diag, tables) {
			break
		}
	}
	if !reflect.DeepEqual(diag, tables) {
		t.Errorf("sock_diag and the tables differ:\n%v\n%v", diag, tables)
	}
	if got := mine(diag); len(got) != 4 || got[0].UID != os.Getuid() || got[0].Inode == 0 {
		t.Fatalf("sock_diag lists %v on port %d, want the four listeners", got, port)
	}
	want := []string{"127.0.0.1", "127.0.0.3", "::1", "::ffff:127.0.0.2"}
	var got []string
	for _, s := range mine(diag) {
		got = append(got, s.Addr.Addr().String())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("addresses %q, want %q", got, want)
	}
	for _, s := range diag {
		if s.Addr.String() == c.LocalAddr().String() {
			t.Errorf("a connected socket is listed: %v", s)
		}
	}
}
