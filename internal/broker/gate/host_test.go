package gate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/audit"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/loopback"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// withAudit gives f a real audit log in a temp dir and returns a reader of its records.
func withAudit(t *testing.T, f *fixture) func() []auditwriter.Record {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := auditwriter.Open(auditwriter.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f.srv.Audit = l
	return func() []auditwriter.Record {
		recs, err := audit.List(path, time.Time{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
}

// TestReleaseOnlyToTheGenuineHost: a release from any connection but the host's (another
// process; the host's pid without host.hello; a hello that disagrees with brokerd's config) is
// PEER_NOT_HOST, before the challenge is consumed and before presence is asked, and audited
// with the requester's chain; the same challenge then still works for the genuine host.
func TestReleaseOnlyToTheGenuineHost(t *testing.T) {
	ctx := context.Background()
	chromiumErr := errors.New("/usr/lib/chromium/chromium is not an ELF executable (a script or wrapper is refused)")
	cases := []struct {
		name  string
		peer  Peer
		hello *brokerapi.HelloParams
		check error
		want  string // in the message
	}{
		{"another process", Peer{PID: 31337, Exe: "/usr/bin/python3"}, nil, nil, "pid 31337"},
		{"another process that says hello", Peer{PID: 31337}, &goodHello, nil, "is not the browser host this brokerd started"},
		{"the host without hello", Peer{PID: 777}, nil, nil, "did not say how it runs"},
		{"another version", Peer{PID: 777}, &brokerapi.HelloParams{Chromium: goodHello.Chromium, Config: goodHello.Config, Version: "v9"}, nil, `the host is version "v9", brokerd is "test"`},
		{"another config", Peer{PID: 777}, &brokerapi.HelloParams{Chromium: goodHello.Chromium, Config: "/tmp/x/headless/config.json", Version: "test"}, nil, `read the config "/tmp/x/headless/config.json"`},
		{"another chromium", Peer{PID: 777}, &brokerapi.HelloParams{Chromium: "/tmp/wrapper.sh", Config: goodHello.Config, Version: "test"}, nil, `launches Chromium "/tmp/wrapper.sh"`},
		{"chromium env not allowlisted", Peer{PID: 777}, &brokerapi.HelloParams{Chromium: goodHello.Chromium, ChromiumEnv: []string{"PATH", "LD_PRELOAD"}, Config: goodHello.Config, Version: "test"}, nil, `"LD_PRELOAD", which is not allowlisted`},
		{"configured chromium refused", Peer{PID: 777}, &goodHello, chromiumErr, "the configured Chromium is refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			records := withAudit(t, f)
			host := f.client(t)
			if tc.check != nil {
				f.srv.Expect.CheckChromium = func(string) error { return tc.check }
			}
			ch, err := host.Challenge(ctx, brokerapi.ChallengeParams{Session: "s1", Document: "doc-1", Origin: "https://app.example"})
			if err != nil {
				t.Fatal(err)
			}
			c := brokerapi.NewClient(f.connAs(t, tc.peer))
			if tc.hello != nil {
				err := c.Call(ctx, brokerapi.MethodHostHello, *tc.hello, nil)
				if tc.peer.PID == 777 && code(err) != wire.CodePeerNotHost {
					t.Fatalf("a disagreeing hello was answered %v", err)
				}
			}
			p := brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s1", Document: "doc-1"}
			_, secret, err := c.Release(ctx, p)
			if code(err) != wire.CodePeerNotHost || secret != nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("release: %v, want PEER_NOT_HOST naming %q", err, tc.want)
			}
			var we *wire.Error
			if !errors.As(err, &we) || we.Hint == "" {
				t.Fatalf("no hint: %#v", err)
			}
			if f.pres.asked.Load() != 0 || f.store.secrets.Load() != 0 {
				t.Fatal("presence was asked or the vault read for a refused peer")
			}
			recs := records()
			if len(recs) != 1 || recs[0].Op != "release" || recs[0].Decision != "deny" || recs[0].Code != "PEER_NOT_HOST" ||
				recs[0].PID != tc.peer.PID || len(recs[0].Chain) == 0 || recs[0].Chain[0].PID != tc.peer.PID {
				t.Fatalf("audit: %+v", recs)
			}
			// Nothing was consumed: the genuine host can still use the challenge.
			if _, secret, err := host.Release(ctx, p); err != nil || string(secret) != canary {
				t.Fatalf("the host's release after the refusal: %v", err)
			}
		})
	}
}

func TestHelloAndStartAndVersion(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.srv.Started = brokerapi.StartedAuto
	c := f.client(t)
	var r brokerapi.HostStartResult
	if err := c.Call(ctx, brokerapi.MethodHostStart, struct{}{}, &r); err != nil || r.Status != "running" || r.PID != 777 || string(r.Ready) != `{"pid":777}` {
		t.Fatalf("host.start: %+v %v", r, err)
	}
	v, err := c.Version(ctx)
	if err != nil || v.Started != brokerapi.StartedAuto || v.HostPID != 777 {
		t.Fatalf("version: %+v %v", v, err)
	}
	// Without a supervisor, nothing is the host and nothing can be started.
	f.srv.Hosts = nil
	if err := c.Call(ctx, brokerapi.MethodHostStart, struct{}{}, &r); code(err) != wire.CodeHostUnavail {
		t.Fatalf("host.start without a supervisor: %v", err)
	}
	ch, _ := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if _, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d"}); code(err) != wire.CodePeerNotHost {
		t.Fatalf("release without a supervisor: %v", err)
	}
}

// TestReleaseReportsAreCheckedAndShown: what the host reports is bounded and printable, and
// reaches the prompt and the audit as sent.
func TestReleaseReportsAreCheckedAndShown(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	records := withAudit(t, f)
	c := f.client(t)
	issue := func() string {
		ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s1", Document: "doc-1", Origin: "https://app.example"})
		if err != nil {
			t.Fatal(err)
		}
		return ch.Challenge
	}
	agents := func(n int) []brokerapi.Proc {
		var a []brokerapi.Proc
		for i := range n {
			a = append(a, brokerapi.Proc{PID: 10 + i, Exe: "/usr/bin/bash"})
		}
		return a
	}
	for name, p := range map[string]brokerapi.ReleaseParams{
		"unknown purpose":      {Purpose: "dump"},
		"control char in path": {Path: "/login\x1b[2J"},
		"long path":            {Path: "/" + strings.Repeat("a", brokerapi.MaxPath)},
		"control char field":   {Field: "Pass\u202eword"},
		"long field":           {Field: strings.Repeat("f", brokerapi.MaxField+1)},
		"five agents":          {Agent: agents(5)},
		"agent pid 0":          {Agent: []brokerapi.Proc{{PID: 0, Exe: "/x"}}},
		"agent long exe":       {Agent: []brokerapi.Proc{{PID: 1, Exe: "/" + strings.Repeat("e", procstat.MaxExe)}}},
		"agent newline comm":   {Agent: []brokerapi.Proc{{PID: 1, Comm: "a\nb"}}},
	} {
		t.Run(name, func(t *testing.T) {
			p.Challenge, p.Alias, p.Session, p.Document = issue(), "staging-admin", "s1", "doc-1"
			if _, _, err := c.Release(ctx, p); code(err) != wire.CodeInvalidArgument {
				t.Fatalf("%v, want INVALID_ARGUMENT", err)
			}
			if f.pres.asked.Load() != 0 {
				t.Fatal("presence asked")
			}
		})
	}
	p := brokerapi.ReleaseParams{Challenge: issue(), Alias: "staging-admin", Session: "s1", Document: "doc-1", Purpose: brokerapi.PurposeVerify,
		Path: "/login", Field: "Password", Agent: []brokerapi.Proc{{PID: 12, Comm: "headless"}, {PID: 11, Exe: "/usr/bin/bash"}}}
	if _, secret, err := c.Release(ctx, p); err != nil || string(secret) != canary {
		t.Fatalf("release: %v", err)
	}
	r := f.pres.last.Load()
	if !r.Verify || r.Path != "/login" || r.Field != "Password" || len(r.Agent) != 2 || r.Agent[0].Comm != "headless" || !r.Host {
		t.Fatalf("presence request %+v", r)
	}
	recs := records()
	last := recs[len(recs)-1]
	if last.Decision != "allow" || last.Purpose != "verify" || last.Path != "/login" || last.Field != "Password" || len(last.Agent) != 2 ||
		last.Exe != "/opt/headless/headless" && last.Exe != "/usr/bin/agent" {
		t.Fatalf("audit %+v", last)
	}
}

// fakeLoopback answers Find with a fixed listener and error, counting calls.
type fakeLoopback struct {
	l     loopback.Listener
	err   error
	calls int
}

func (f *fakeLoopback) Find(o string) (loopback.Listener, error) {
	f.calls++
	l := f.l
	l.Origin = o
	return l, f.err
}

// TestLoopbackOrigins: the listener of a loopback origin is named in the prompt and the
// audit and its key returned with the release; an origin served by different processes is
// ORIGIN_AMBIGUOUS before anyone is asked, and one that cannot be looked up ORIGIN_UNVERIFIED.
func TestLoopbackOrigins(t *testing.T) {
	ctx := context.Background()
	const dev = "http://127.0.0.1:8080"
	one := loopback.Listener{
		Sockets: []loopback.Socket{{Addr: netip.MustParseAddrPort("127.0.0.1:8080"), Inode: 5, UID: 1000}},
		Procs:   []loopback.Process{{PID: 4242, Exe: "/usr/bin/python3", Inodes: []uint64{5}}},
	}
	two := one
	two.Sockets = append(append([]loopback.Socket{}, one.Sockets...), loopback.Socket{Addr: netip.MustParseAddrPort("[::1]:8080"), Inode: 6, UID: 1000})
	two.Procs = append(append([]loopback.Process{}, one.Procs...), loopback.Process{PID: 666, Exe: "/tmp/evil", Inodes: []uint64{6}})
	for _, tc := range []struct {
		name string
		fl   *fakeLoopback
		want wire.Code
	}{
		{"one listener", &fakeLoopback{l: one}, ""},
		{"ambiguous", &fakeLoopback{l: two, err: fmt.Errorf("%w: two processes", loopback.ErrAmbiguous)}, wire.CodeOriginAmbiguous},
		{"could not look", &fakeLoopback{err: fmt.Errorf("%w: /proc/net/tcp", loopback.ErrUnavailable)}, wire.CodeOriginUnverified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			records := withAudit(t, f)
			f.srv.Loopback = tc.fl
			if err := f.store.Add(ctx, vault.Record{Origin: dev, Account: "dev@x", Alias: "dev"}, []byte(canary)); err != nil {
				t.Fatal(err)
			}
			c := f.client(t)
			ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: dev})
			if err != nil {
				t.Fatal(err)
			}
			rel, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "dev", Session: "s", Document: "d"})
			recs := records()
			last := recs[len(recs)-1]
			if tc.want != "" {
				if code(err) != tc.want || secret != nil || f.pres.asked.Load() != 0 || f.store.secrets.Load() != 0 {
					t.Fatalf("release: %v (asked %d), want %s", err, f.pres.asked.Load(), tc.want)
				}
				if last.Code != string(tc.want) || tc.want == wire.CodeOriginAmbiguous && !strings.Contains(last.Listener, "/tmp/evil") {
					t.Fatalf("audit %+v", last)
				}
				return
			}
			if err != nil || string(secret) != canary || rel.Listener != one.Key() || rel.Listener == "" {
				t.Fatalf("release %+v %v", rel, err)
			}
			if r := f.pres.last.Load(); r.Listener != one.String() || !strings.Contains(r.Description(), "/usr/bin/python3") {
				t.Fatalf("prompt: %q", r.Description())
			}
			if last.Listener != one.String() || last.Decision != "allow" {
				t.Fatalf("audit %+v", last)
			}
		})
	}
	// An https origin is never looked up.
	f := newFixture(t)
	fl := &fakeLoopback{l: one}
	f.srv.Loopback = fl
	c := f.client(t)
	ch, _ := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if rel, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d"}); err != nil || rel.Listener != "" || fl.calls != 0 {
		t.Fatalf("https release: %+v %v, %d lookups", rel, err, fl.calls)
	}
}

// BenchmarkHostGate is what the genuine-host check adds to every release: requireHost (the
// supervisor's pid check and the connection's hello verdict) and the requester's chain read
// from /proc for the audit record.
func BenchmarkHostGate(b *testing.B) {
	f := newFixture(b)
	conn := &rpc.Conn{Peer: Peer{PID: os.Getpid()}, Accepted: time.Now()}
	f.hosts.pid = os.Getpid()
	f.srv.hello(conn, goodHello)
	b.Run("requireHost", func(b *testing.B) {
		for b.Loop() {
			if err := f.srv.requireHost(conn); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chain", func(b *testing.B) {
		for b.Loop() {
			if c := f.srv.chainOf(conn.Peer); len(c) == 0 {
				b.Fatal("no chain")
			}
		}
	})
}

// TestHostConnectionsArePinned: the genuine host's connection (after host.hello) and a
// connection that owns an isolated-session store are exempt from the idle timeout and
// eviction; another process's hello pins nothing.
func TestHostConnectionsArePinned(t *testing.T) {
	f := newFixture(t)
	f.hosts.pid = 777
	other := &rpc.Conn{Peer: Peer{PID: 31337}, Accepted: time.Now()}
	f.srv.hello(other, goodHello)
	if other.Pinned() {
		t.Error("another process's hello pinned its connection")
	}
	host := &rpc.Conn{Peer: Peer{PID: 777}, Accepted: time.Now()}
	if _, err := f.srv.hello(host, goodHello); err != nil {
		t.Fatal(err)
	}
	if !host.Pinned() {
		t.Error("the genuine host's connection is not pinned")
	}
	owner := &rpc.Conn{Peer: Peer{PID: 31337}, Accepted: time.Now()}
	if _, err := f.srv.openSession(owner, brokerapi.SessionOpenParams{Session: "iso", Isolated: true}); err != nil {
		t.Fatal(err)
	}
	if !owner.Pinned() {
		t.Error("the connection owning an isolated store is not pinned")
	}
}

// TestIsolatedStoresUnpin: a connection is pinned while it owns an isolated store, and only
// then: closing its stores (session.close, or the wipe of a profile clear) unpins it, one
// pin per store; the genuine host's own pin (hello) stays.
func TestIsolatedStoresUnpin(t *testing.T) {
	f := newFixture(t)
	f.hosts.pid = 777
	owner := &rpc.Conn{Peer: Peer{PID: 31337}, Accepted: time.Now()}
	for _, name := range []string{"a", "b"} {
		if _, err := f.srv.openSession(owner, brokerapi.SessionOpenParams{Session: name, Isolated: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Idempotent for its owner: no second pin for the same store.
	if _, err := f.srv.openSession(owner, brokerapi.SessionOpenParams{Session: "a", Isolated: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.closeSession(owner, brokerapi.SessionCloseParams{Session: "a"}); err != nil {
		t.Fatal(err)
	}
	if !owner.Pinned() {
		t.Fatal("closing one of two stores unpinned their connection")
	}
	if _, err := f.srv.closeSession(owner, brokerapi.SessionCloseParams{Session: "b"}); err != nil {
		t.Fatal(err)
	}
	if owner.Pinned() {
		t.Fatal("a connection whose stores are all closed is still pinned")
	}
	// Another connection's close neither closes the store nor unpins anything.
	if _, err := f.srv.openSession(owner, brokerapi.SessionOpenParams{Session: "c", Isolated: true}); err != nil {
		t.Fatal(err)
	}
	other := &rpc.Conn{Peer: Peer{PID: 31338}, Accepted: time.Now()}
	if _, err := f.srv.closeSession(other, brokerapi.SessionCloseParams{Session: "c"}); err == nil {
		t.Fatal("another connection closed the store")
	}
	if !owner.Pinned() {
		t.Fatal("another connection's close unpinned the owner")
	}
	if n := f.srv.wipeOwned(owner, "profile cleared"); n != 1 || owner.Pinned() {
		t.Fatalf("wipe: %d stores, pinned %v; want 1 and unpinned", n, owner.Pinned())
	}
	// The genuine host: pinned by hello, and still after its store is gone.
	host := &rpc.Conn{Peer: Peer{PID: 777}, Accepted: time.Now()}
	if _, err := f.srv.hello(host, goodHello); err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.openSession(host, brokerapi.SessionOpenParams{Session: "d", Isolated: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.closeSession(host, brokerapi.SessionCloseParams{Session: "d"}); err != nil {
		t.Fatal(err)
	}
	if !host.Pinned() {
		t.Fatal("closing the genuine host's store unpinned its connection")
	}
}

// TestLoopbackSiteTheAgentStarted: a loopback origin served by a process of the agent chain
// (here this test process, which holds a real listener) is named in the prompt's first line;
// one whose agent chain holds only brokerd's ancestors (here this test's parent), or a process
// that did not start the server, is not.
func TestLoopbackSiteTheAgentStarted(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	o := "http://" + l.Addr().String()
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	self := os.Getpid()
	for _, tc := range []struct {
		name  string
		agent []brokerapi.Proc
		warn  bool
	}{
		{"the agent serves it", []brokerapi.Proc{{PID: 99999999, Comm: "headless"}, {PID: self, Comm: "agent"}, {PID: os.Getppid()}}, true},
		{"a shared ancestor only", []brokerapi.Proc{{PID: os.Getppid()}, {PID: 1}}, false},
		{"an agent that did not start it", []brokerapi.Proc{{PID: sleeper.Process.Pid, Comm: "sleep"}}, false},
		{"no agent chain", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if err := f.store.Add(ctx, vault.Record{Origin: o, Account: "dev@x", Alias: "dev"}, []byte(canary)); err != nil {
				t.Fatal(err)
			}
			c := f.client(t)
			ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: o})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "dev", Session: "s", Document: "d", Path: "/login", Agent: tc.agent}); err != nil {
				t.Fatal(err)
			}
			r := f.pres.last.Load()
			if !strings.Contains(r.Listener, fmt.Sprintf("pid %d", self)) {
				t.Fatalf("the listener is not this process: %q", r.Listener)
			}
			d := r.Description()
			want := fmt.Sprintf("THE AGENT STARTED THIS SITE: %s is served by pid %d (", o, self)
			if got := strings.HasPrefix(d, want) && strings.Contains(strings.SplitN(d, "\n", 2)[0], "a process started by the agent asking."); got != tc.warn {
				t.Fatalf("prompt (warning %v, want %v):\n%s", got, tc.warn, d)
			}
			if tc.warn && (r.AgentSite.PID != self || r.AgentSite.Comm == "") {
				t.Fatalf("agent site %+v", r.AgentSite)
			}
		})
	}
}
