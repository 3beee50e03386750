//go:build linux

package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// Hostile requests on both sockets, against the real brokerd and host: every malformed,
// oversize, deep, wrong-typed, replayed or foreign request gets its exact typed error or a
// closed connection; both daemons stay up (same pids), a listing afterwards shows no state
// changed, and their RSS stays bounded.

// hostileExchange sends payload on a fresh connection to sock, half-closes, and returns the
// error code of every reply frame in order ("" for a result) and whether the server closed
// the connection by itself before the peer half-closed (closeFirst: payload is sent, then the
// reader waits for EOF without half-closing).
func hostileExchange(t *testing.T, sock string, payload []byte, closeFirst bool) []string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("dial %s: %v", sock, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		c.Write(payload)
		if !closeFirst {
			c.(*net.UnixConn).CloseWrite()
		}
	}()
	var codes []string
	r := bufio.NewReaderSize(c, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var reply struct {
				ID     uint64          `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code, Message, Hint string
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &reply); err != nil {
				t.Fatalf("reply is not JSON: %q", line)
			}
			if reply.Error != nil {
				if reply.Error.Hint == "" || reply.Error.Message == "" {
					t.Errorf("error without message or hint: %q", line)
				}
				codes = append(codes, reply.Error.Code)
			} else {
				codes = append(codes, "")
			}
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("%s: no EOF within 20s (replies %v)", sock, codes)
			}
			return codes
		}
	}
}

func rssKB(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	t.Fatalf("pid %d: no VmRSS", pid)
	return 0
}

// serverEnds is how many sockets bear sock's path in /proc/net/unix: the listener and the
// server's end of every connection it has accepted and not yet closed (a client's end has
// no path). The daemons are undumpable, so their /proc/PID/fd is not readable.
func serverEnds(t testing.TB, sock string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 8 && f[7] == sock {
			n++
		}
	}
	return n
}

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestHostileRequests(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	program, plog := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	canary := newCanary()
	if r := e.addCredential("ops", "ops@example.test", canary); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	e.start(t)
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	if r := e.runTTY([]step{{"Password for", canary + "\n"}, {"Repeat the password", canary + "\n"}},
		"headless", "credentials", "add", "--session", "iso", "--origin", origin, "--account", "i@x", "--alias", "isoops", "--json"); r.code != 0 {
		t.Fatalf("add --session iso: %+v", r)
	}
	var st lsStatus
	e.ok(t, &st, "status")
	brokerPID := e.brokerPID()
	if brokerPID == 0 || st.Host.PID == 0 {
		t.Fatalf("status: %+v, brokerd %d", st, brokerPID)
	}
	// Replayed and mismatched challenges through the real sign-in path (control.sock, the
	// host's own broker connection): a used challenge is CHALLENGE_USED; another session's is
	// CHALLENGE_MISMATCH; nothing is typed for either.
	srv := newBenchSite(t, benchAccount, benchPassword)
	var add result
	add = e.runTTY([]step{{"Password for", benchPassword + "\n"}, {"Repeat the password", benchPassword + "\n"}},
		"headless", "credentials", "add", "--origin", srv.URL, "--account", benchAccount, "--alias", "bench", "--json")
	if add.code != 0 {
		t.Fatalf("add bench: %+v", add)
	}
	visit := func(session string) string {
		var p pageJSON
		e.ok(t, &p, "visit", srv.URL+"/login", "--session", session)
		if p.AuthRequired == nil {
			t.Fatalf("no auth_required in %s", session)
		}
		return p.AuthRequired.Challenge
	}
	e.ok(t, nil, "session", "create", "other")
	chOther := visit("other")
	ch := visit("default")
	e.fails(t, "CHALLENGE_UNKNOWN", "auth", "login", "--challenge", "nosuch", "--alias", "bench")
	e.fails(t, "CHALLENGE_MISMATCH", "auth", "login", "--challenge", chOther, "--alias", "bench")
	var a authJSON
	e.ok(t, &a, "auth", "login", "--challenge", ch, "--alias", "bench")
	if a.Status != "authenticated" {
		t.Fatalf("login: %+v", a)
	}
	e.ok(t, nil, "visit", srv.URL+"/logout")
	e.ok(t, nil, "visit", srv.URL+"/login")
	e.fails(t, "CHALLENGE_USED", "auth", "login", "--challenge", ch, "--alias", "bench")
	if got := srv.accepted.Load(); got != 1 {
		t.Errorf("the site accepted %d sign-ins, want 1 (only the valid challenge)", got)
	}
	n := 3
	// The sign-in's state is part of the listing taken below.
	if prompts := len(presencetest.Prompts(t, plog)); prompts != 1 {
		t.Errorf("the person was prompted %d times, want 1 (the one valid sign-in)", prompts)
	}

	listing := func() string {
		var creds, sessions any
		e.ok(t, &creds, "credentials", "list")
		e.ok(t, &sessions, "session", "list")
		b, _ := json.Marshal([]any{creds, sessions, aliasesIn(t, e, "--session", "iso")})
		return string(b)
	}
	// An MCP server's lease: a connection that owns a session (closed with it). It sits idle
	// through everything below; were it closed for idleness or evicted to make room, its
	// session would be gone from the listing taken after. (The host's own broker connection,
	// which holds the isolated store, is in the same position on broker.sock.)
	lease, err := net.Dial("unix", filepath.Join(e.runDir(), "control.sock"))
	must(t, err)
	defer lease.Close()
	lease.Write([]byte(`{"id":1,"method":"session.create","params":{"name":"lease","owned":true}}` + "\n"))
	lease.SetReadDeadline(time.Now().Add(60 * time.Second))
	if line, err := bufio.NewReader(lease).ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"owned":true`) {
		t.Fatalf("the lease's session.create: %q %v", line, err)
	}
	before := listing()
	rss0 := map[string]int{"brokerd": rssKB(t, brokerPID), "host": rssKB(t, st.Host.PID)}
	broker, control := e.sockPath(), filepath.Join(e.runDir(), "control.sock")

	huge := `{"id":9,"method":"credentials.list","params":{"origin":[` + strings.Repeat(`"https://a.example",`, 40000) + `"x"]}}` + "\n"
	manyKeys := `{"id":9,"method":"ping","params":{` + strings.Repeat(`"k":1,`, 60000) + `"k":1}}` + "\n"
	type tc struct {
		name    string
		payload string
		want    []string // codes of the replies, in order ("" a result); nil: no reply, closed
		// closeFirst: the server must close the connection without the peer half-closing
		closeFirst bool
	}
	// Cases that mean the same on both sockets.
	common := []tc{
		{"garbage", "garbage\n", []string{"BAD_REQUEST"}, false},
		{"truncated JSON", `{"id":1,"method":"ping"` + "\n", []string{"BAD_REQUEST"}, false},
		{"truncated frame without newline", `{"id":1,"method":"ping"`, nil, false},
		// JSON decoding makes the byte U+FFFD: a method nobody serves.
		{"invalid UTF-8 method", "{\"id\":1,\"method\":\"pi\xffng\"}\n", []string{"UNKNOWN_METHOD"}, false},
		{"invalid UTF-8 in params", "{\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xc3\x28\"}}\n", []string{"BAD_REQUEST"}, false},
		{"NUL byte", "{\"id\":1,\"method\":\"ping\"}\x00\n", []string{"BAD_REQUEST"}, false},
		{"unknown top-level field", `{"id":1,"method":"ping","x":1}` + "\n", []string{"BAD_REQUEST"}, false},
		{"unknown params field", `{"id":1,"method":"ping","params":{"x":1}}` + "\n", []string{"BAD_REQUEST"}, false},
		{"unknown method", `{"id":1,"method":"eval","params":{"js":"1"}}` + "\n", []string{"UNKNOWN_METHOD"}, false},
		{"id of the wrong type", `{"id":"1","method":"ping"}` + "\n", []string{"BAD_REQUEST"}, false},
		{"negative id", `{"id":-1,"method":"ping"}` + "\n", []string{"BAD_REQUEST"}, false},
		{"method of the wrong type", `{"id":1,"method":7}` + "\n", []string{"BAD_REQUEST"}, false},
		{"params of the wrong type", `{"id":1,"method":"ping","params":[1,2]}` + "\n", []string{"BAD_REQUEST"}, false},
		{"a top-level array", `[{"id":1,"method":"ping"}]` + "\n", []string{"BAD_REQUEST"}, false},
		{"trailing data", `{"id":1,"method":"ping"} {"id":2,"method":"ping"}` + "\n", []string{"BAD_REQUEST"}, false},
		{"deep nesting in params", `{"id":1,"method":"ping","params":{"x":` + deep(20000) + `}}` + "\n", []string{"BAD_REQUEST"}, false},
		{"huge array in params", huge, []string{"BAD_REQUEST"}, false},
		{"60000 duplicate keys", manyKeys, []string{"BAD_REQUEST"}, false},
		{"oversize frame", strings.Repeat("x", 2<<20), []string{"FRAME_TOO_LARGE"}, true},
		{"oversize frame after a good one", `{"id":1,"method":"ping"}` + "\n" + strings.Repeat(" ", 2<<20), []string{"", "FRAME_TOO_LARGE"}, true},
		{"empty lines then ping", "\n\n\n" + `{"id":1,"method":"ping"}` + "\n", []string{""}, false},
		{"a good request after garbage", "}{\n" + `{"id":2,"method":"ping"}` + "\n", []string{"BAD_REQUEST", ""}, false},
	}
	type sockCase struct {
		sock string
		tc
	}
	var cases []sockCase
	for _, c := range common {
		cases = append(cases, sockCase{broker, c}, sockCase{control, c})
	}
	// broker.sock's own methods, from a script (not the host brokerd started).
	for _, c := range []tc{
		{"release of an unknown challenge", `{"id":1,"method":"release","params":{"challenge":"nosuch","alias":"ops","session":"default","document":"d"}}` + "\n", []string{"PEER_NOT_HOST"}, false},
		{"release with a missing alias", `{"id":1,"method":"release","params":{"challenge":"x"}}` + "\n", []string{"PEER_NOT_HOST"}, false},
		{"add with a secret of the wrong type", `{"id":1,"method":"credentials.add","params":{"origin":"https://a.example","account":"a","alias":"b","secret":7}}` + "\n", []string{"BAD_REQUEST"}, false},
		{"add with a bad origin", `{"id":1,"method":"credentials.add","params":{"origin":"javascript:alert(1)","account":"a","alias":"b","secret":"cHc="}}` + "\n", []string{"INVALID_ORIGIN"}, false},
		{"list another connection's isolated store", `{"id":1,"method":"credentials.list","params":{"session":"iso"}}` + "\n", []string{"SESSION_UNKNOWN"}, false},
		{"remove from another connection's isolated store", `{"id":1,"method":"credentials.remove","params":{"session":"iso","origin":"` + origin + `","alias":"isoops"}}` + "\n", []string{"SESSION_UNKNOWN"}, false},
		{"close another connection's isolated session", `{"id":1,"method":"session.close","params":{"session":"iso"}}` + "\n", []string{"SESSION_UNKNOWN"}, false},
		{"challenge with an oversize origin", `{"id":1,"method":"challenge.issue","params":{"session":"s","document":"d","origin":"https://` + strings.Repeat("a", 5000) + `.example"}}` + "\n", []string{"INVALID_ORIGIN"}, false},
	} {
		cases = append(cases, sockCase{broker, c})
	}
	// control.sock's own methods.
	for _, c := range []tc{
		{"visit with a url of the wrong type", `{"id":1,"method":"visit","params":{"url":7}}` + "\n", []string{"BAD_REQUEST"}, false},
		{"visit javascript:", `{"id":1,"method":"visit","params":{"url":"javascript:alert(1)"}}` + "\n", []string{"UNSAFE_NAVIGATION"}, false},
		{"visit in an unknown session", `{"id":1,"method":"visit","params":{"url":"https://a.example/","session":"nosuch"}}` + "\n", []string{"SESSION_UNKNOWN"}, false},
		{"click an unknown ref", `{"id":1,"method":"click","params":{"ref":"e999999"}}` + "\n", []string{"REF_UNKNOWN"}, false},
		{"credentials.add over the socket (no terminal)", `{"id":1,"method":"credentials.add","params":{"origin":"` + origin + `","account":"a","alias":"planted","secret":"cHc="}}` + "\n", []string{"NO_TTY"}, false},
		{"session.create with a name of the wrong type", `{"id":1,"method":"session.create","params":{"name":["a"]}}` + "\n", []string{"BAD_REQUEST"}, false},
		{"session.close of an unknown session", `{"id":1,"method":"session.close","params":{"name":"nosuch"}}` + "\n", []string{"SESSION_UNKNOWN"}, false},
	} {
		cases = append(cases, sockCase{control, c})
	}
	for _, c := range cases {
		name := filepath.Base(c.sock) + ": " + c.name
		got := hostileExchange(t, c.sock, []byte(c.payload), c.closeFirst)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: replies %q, want %q", name, got, c.want)
		}
	}
	n += len(cases)

	// Another uid is refused by the kernel-checked peer credentials on both sockets, even with
	// the directories and socket modes opened to it (restored at once).
	pdir, err := os.MkdirTemp("", "headless-probe-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(pdir) })
	must(t, os.Chmod(pdir, 0o755))
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	must(t, err)
	must(t, writeExecutable(filepath.Join(pdir, "probe"), b, 0o755))
	for _, sock := range []string{broker, control} {
		opened := []string{e.root, filepath.Dir(e.runDir()), e.runDir()}
		for _, d := range opened {
			must(t, os.Chmod(d, 0o711))
		}
		must(t, os.Chmod(sock, 0o666))
		other := exec.Command(filepath.Join(pdir, "probe"))
		other.Dir = "/"
		other.Env = []string{helperEnv + "=peerprobe", "PROBE_SOCK=" + sock}
		other.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, _ := other.CombinedOutput()
		must(t, os.Chmod(sock, 0o600))
		for _, d := range opened {
			must(t, os.Chmod(d, 0o700))
		}
		if !strings.Contains(string(out), "connected") || !strings.Contains(string(out), "PEER_REFUSED") {
			t.Errorf("%s: another uid: %s", filepath.Base(sock), out)
		}
		n++
	}

	// The two daemons take the same load at once, each in a subtest of its own: broker.sock and
	// control.sock are served by different processes.
	var loaded atomic.Int32
	t.Run("load", func(t *testing.T) {
		for _, sock := range []string{broker, control} {
			t.Run(filepath.Base(sock), func(t *testing.T) {
				t.Parallel()
				loaded.Add(int32(hostileLoad(t, sock)))
			})
		}
	})
	n += int(loaded.Load())
	if r := e.run("", "headless", "status", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"broker"`) {
		t.Fatalf("status after the hostile load: %+v", r)
	}

	t.Logf("%d hostile cases across broker.sock and control.sock", n)
	if n < 50 {
		t.Fatalf("only %d hostile cases", n)
	}
	// Both daemons are the same processes, the state is unchanged, RSS is bounded.
	var after lsStatus
	e.ok(t, &after, "status")
	if e.brokerPID() != brokerPID || after.Host.PID != st.Host.PID || !procAlive(brokerPID) {
		t.Fatalf("a daemon restarted: brokerd %d then %d, host %d then %d", brokerPID, e.brokerPID(), st.Host.PID, after.Host.PID)
	}
	if got := listing(); got != before {
		t.Errorf("state changed:\nbefore %s\nafter  %s", before, got)
	}
	for name, pid := range map[string]int{"brokerd": brokerPID, "host": st.Host.PID} {
		kb := rssKB(t, pid)
		t.Logf("%s RSS %d kB before, %d kB after", name, rss0[name], kb)
		if kb > rss0[name]+64*1024 {
			t.Errorf("%s RSS grew from %d to %d kB", name, rss0[name], kb)
		}
	}
	assertNoCanary(t, "the hostile run's outputs", e.allOutput(), canary)
}

// TestHostileExpiredChallenge: a challenge used after it expired is CHALLENGE_EXPIRED, through
// the real sign-in path: nobody is asked, nothing is typed, the site sees no sign-in. The
// lifetime is the user-only config's challenge_ttl_seconds at its documented minimum (10 s);
// the test waits it out. A fresh challenge then signs in.
func TestHostileExpiredChallenge(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	program, plog := presencetest.FakePinentry(t, "approve")
	e.writeConfig(fmt.Sprintf(`{"presence":{"provider":"pinentry","program":%q,"timeout_seconds":5},"challenge_ttl_seconds":10}`, program))
	pw := newCanary()
	srv := newBenchSite(t, benchAccount, pw)
	e.start(t)
	if r := e.runTTY([]step{{"Password for", pw + "\n"}, {"Repeat the password", pw + "\n"}},
		"headless", "credentials", "add", "--origin", srv.URL, "--account", benchAccount, "--alias", "bench", "--json"); r.code != 0 {
		t.Fatalf("add bench: %+v", r)
	}
	var p pageJSON
	e.ok(t, &p, "visit", srv.URL+"/login")
	issued := time.Now()
	if p.AuthRequired == nil {
		t.Fatal("no auth_required")
	}
	time.Sleep(time.Until(issued.Add(11 * time.Second))) // past the 10 s lifetime
	e.fails(t, "CHALLENGE_EXPIRED", "auth", "login", "--challenge", p.AuthRequired.Challenge, "--alias", "bench")
	if prompts := presencetest.Prompts(t, plog); len(prompts) != 0 {
		t.Errorf("the person was asked about an expired challenge: %v", prompts)
	}
	if got := srv.accepted.Load(); got != 0 {
		t.Errorf("the site saw %d sign-ins with an expired challenge", got)
	}
	// The page is where it was, and a fresh challenge works.
	e.ok(t, &p, "visit", srv.URL+"/login")
	var a authJSON
	e.ok(t, &a, "auth", "login", "--challenge", p.AuthRequired.Challenge, "--alias", "bench")
	if a.Status != "authenticated" || srv.accepted.Load() != 1 || len(presencetest.Prompts(t, plog)) != 1 {
		t.Fatalf("a fresh challenge: %+v, accepted %d, prompts %d", a, srv.accepted.Load(), len(presencetest.Prompts(t, plog)))
	}
	assertNoCanary(t, "the expired-challenge run's outputs", e.allOutput(), pw)
}

// hostileLoad puts the connection load of TestHostileRequests on the daemon at sock: 1000
// half-open connections, 300 idle ones, slow writers. It returns how many cases it ran.
func hostileLoad(t *testing.T, sock string) (n int) {
	name := filepath.Base(sock)
	// 1000 half-open connections per socket, every other one holding a partial frame, the
	// rest having sent nothing. At the connection limit each newcomer takes the place of the
	// longest idle connection (it gets BUSY), and a partial frame is closed with FRAME_TIMEOUT
	// once the frame timeout passes: meanwhile a normal client is served, not refused BUSY.
	// Afterwards the daemon's descriptors are released.
	{
		ends0 := serverEnds(t, sock)
		conns := make([]net.Conn, 1000)
		for i := range conns {
			c, err := net.Dial("unix", sock)
			if err != nil {
				t.Fatalf("%s: half-open connection %d: %v", name, i, err)
			}
			if i%2 == 0 {
				c.Write([]byte(`{"id":1,"method":`))
			}
			conns[i] = c
			if i == 500 || i == len(conns)-1 {
				if got := hostileExchange(t, sock, []byte(`{"id":1,"method":"ping"}`+"\n"), false); strings.Join(got, ",") != "" || len(got) != 1 {
					t.Errorf("%s: a normal client after %d half-open connections got %q, want its result", name, i+1, got)
				}
			}
		}
		outcomes := map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The frame timeout (10 s) bounds how long a partial frame may stay.
				c.SetReadDeadline(time.Now().Add(25 * time.Second))
				line, err := bufio.NewReader(c).ReadBytes('\n')
				var reply struct {
					Error *struct{ Code string } `json:"error"`
				}
				what := "open"
				switch {
				case len(line) > 0 && json.Unmarshal(line, &reply) == nil && reply.Error != nil:
					what = reply.Error.Code
				case len(line) > 0:
					what = "reply " + string(line)
				case !errors.Is(err, os.ErrDeadlineExceeded):
					what = "closed without a reply"
				}
				if i%2 == 0 {
					what = "partial: " + what
				} else {
					what = "silent: " + what
				}
				mu.Lock()
				outcomes[what]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
		t.Logf("%s: 1000 half-open connections: %v", name, outcomes)
		for what, n := range outcomes {
			switch what {
			case "partial: BUSY", "partial: FRAME_TIMEOUT", "silent: BUSY", "silent: open":
			default:
				t.Errorf("%s: %d half-open connections ended %q", name, n, what)
			}
		}
		if outcomes["partial: BUSY"]+outcomes["silent: BUSY"] == 0 || outcomes["partial: FRAME_TIMEOUT"]+outcomes["partial: BUSY"] != 500 {
			t.Errorf("%s: outcomes %v: want every partial frame ended (BUSY or FRAME_TIMEOUT) and some connections evicted", name, outcomes)
		}
		if !pollUntil(15*time.Second, func() bool { return serverEnds(t, sock) <= ends0+2 }) {
			t.Errorf("%s: the daemon holds %d sockets after the half-open connections closed, %d before", name, serverEnds(t, sock), ends0)
		}
		n++
	}

	// 300 connections per socket that each made a request and then sit idle: at the limit
	// the newcomers take the places of the longest idle ones (BUSY), but never of a
	// connection that owns state (the lease above, the host's broker connection), which is
	// older than all of them.
	{
		ends0 := serverEnds(t, sock)
		var idle []net.Conn
		for i := 0; i < 300; i++ {
			c, err := net.Dial("unix", sock)
			if err != nil {
				t.Fatalf("%s: idle connection %d: %v", name, i, err)
			}
			idle = append(idle, c)
			c.Write([]byte(`{"id":1,"method":"ping"}` + "\n"))
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			if line, err := bufio.NewReader(c).ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"result"`) {
				t.Fatalf("%s: idle connection %d's ping: %q %v", name, i, line, err)
			}
		}
		// The evicted ones were answered BUSY as they were evicted: every answer is in by now.
		var busy atomic.Int32
		var wg sync.WaitGroup
		deadline := time.Now().Add(200 * time.Millisecond)
		for _, c := range idle {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.SetReadDeadline(deadline)
				if line, _ := bufio.NewReader(c).ReadBytes('\n'); strings.Contains(string(line), `"BUSY"`) {
					busy.Add(1)
				}
			}()
		}
		wg.Wait()
		for _, c := range idle {
			c.Close()
		}
		if busy := int(busy.Load()); busy < 300-128 {
			t.Errorf("%s: %d of 300 idle connections made room (BUSY), want at least %d", name, busy, 300-128)
		}
		// The daemon lets go of the closed ones before the slow writers come: else, on a
		// loaded machine, it is still at its limit and a writer idle between two bytes is the
		// one that makes room (BUSY), as it should be.
		if !pollUntil(15*time.Second, func() bool { return serverEnds(t, sock) <= ends0+2 }) {
			t.Errorf("%s: the daemon holds %d sockets after the idle connections closed, %d before", name, serverEnds(t, sock), ends0)
		}
		n++
	}

	// Slow writers: one that sends a frame a byte every 20 ms is
	// served once the frame is complete; one that sends a byte a second is answered
	// FRAME_TIMEOUT and closed when the frame timeout passes. Another client is served
	// meanwhile.
	var swg sync.WaitGroup
	{
		for _, every := range []time.Duration{20 * time.Millisecond, time.Second} {
			c, err := net.Dial("unix", sock)
			must(t, err)
			defer c.Close()
			swg.Add(1)
			go func() {
				defer swg.Done()
				frame := []byte(`{"id":5,"method":"ping"}` + "\n")
				go func() {
					for _, ch := range frame {
						if _, err := c.Write([]byte{ch}); err != nil {
							return
						}
						time.Sleep(every)
					}
				}()
				c.SetReadDeadline(time.Now().Add(40 * time.Second))
				r := bufio.NewReader(c)
				line, _ := r.ReadBytes('\n')
				rest, err := r.ReadBytes('\n')
				closed := len(rest) == 0 && err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
				switch {
				case every < time.Second && !strings.Contains(string(line), `"id":5,"result"`):
					t.Errorf("%s: a writer of a byte every %v: %q", name, every, line)
				case every == time.Second && (!strings.Contains(string(line), `"FRAME_TIMEOUT"`) || !closed):
					t.Errorf("%s: a writer of a byte a second: %q, then closed %v (%v); want FRAME_TIMEOUT, closed", name, line, closed, err)
				}
			}()
		}
		time.Sleep(100 * time.Millisecond)
		if got := hostileExchange(t, sock, []byte(`{"id":1,"method":"ping"}`+"\n"), false); strings.Join(got, ",") != "" || len(got) != 1 {
			t.Errorf("%s: a client next to slow writers got %q", name, got)
		}
		n += 2
	}
	swg.Wait()
	return n
}
