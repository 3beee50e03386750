package gate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/challenge"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/hostproc"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/vault"
)

// fakePresence answers with decide; a nil decision allows.
type fakePresence struct {
	decide func(ctx context.Context, r presence.Request) error
	asked  atomic.Int32
	last   atomic.Pointer[presence.Request]
}

func (f *fakePresence) Name() string { return "fake" }
func (f *fakePresence) Do(ctx context.Context, r presence.Request, use func(context.Context) error) error {
	f.asked.Add(1)
	f.last.Store(&r)
	if f.decide != nil {
		if err := f.decide(ctx, r); err != nil {
			return err
		}
	}
	return use(ctx)
}

// countingStore counts Secret calls so tests can prove the vault was not read.
type countingStore struct {
	vault.Store
	secrets atomic.Int32
}

func (c *countingStore) Secret(ctx context.Context, o, a string) (vault.Record, []byte, error) {
	c.secrets.Add(1)
	return c.Store.Secret(ctx, o, a)
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// memAudit is an in-memory Auditor; fail, when set, makes every Append fail.
type memAudit struct {
	mu   sync.Mutex
	recs []auditwriter.Record
	fail error
}

func (m *memAudit) Append(r auditwriter.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.recs = append(m.recs, r)
	return nil
}

func (m *memAudit) records() []auditwriter.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]auditwriter.Record(nil), m.recs...)
}

// fakeHosts plays the host supervisor: pid 777 (every fixture connection's peer) is the host.
type fakeHosts struct {
	pid     int
	display []string // what the last Start was given
}

func (h *fakeHosts) Start(ctx context.Context, allow, display []string) (hostproc.Result, error) {
	h.display = display
	return hostproc.Result{Status: "running", PID: h.pid, Ready: json.RawMessage(`{"pid":777}`)}, nil
}
func (h *fakeHosts) Genuine(pid, gid int, accepted time.Time) bool { return pid == h.pid }
func (h *fakeHosts) Running() (int, string)                        { return h.pid, "/opt/headless/headless" }

// goodHello is what the fixture's Expect accepts.
var goodHello = brokerapi.HelloParams{Chromium: "/usr/lib/chromium/chromium", ChromiumEnv: []string{"PATH", "HOME", "TMPDIR"}, Config: "/home/u/.config/headless/config.json", Version: "test"}

type fixture struct {
	srv   *Server
	audit *memAudit
	store *countingStore
	pres  *fakePresence
	clock *clock
	hosts *fakeHosts
}

const canary = "c4nary-Pässwörd-9f3e"

// testKey is the fixture's seal key.
var testKey = func() *seal.Key {
	k, err := seal.NewKey(bytes.Repeat([]byte{0x5a}, seal.KeyLen))
	if err != nil {
		panic(err)
	}
	return k
}()

func newFixture(t testing.TB) *fixture {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	store := &countingStore{Store: vault.NewMemory(vault.MemoryOptions{Now: clk.Now})}
	pres := &fakePresence{}
	hosts := &fakeHosts{pid: 777}
	aud := &memAudit{}
	paths, err := OpenLoginPaths(t.TempDir(), os.Getuid())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		store: store, pres: pres, clock: clk, hosts: hosts, audit: aud,
		srv: &Server{
			Audit:      aud,
			Vault:      store,
			Presence:   pres,
			Challenges: challenge.New(challenge.Options{TTL: 2 * time.Minute, Now: clk.Now}),
			Version:    "test",
			PID:        4242,
			Hosts:      hosts,
			Expect:     HostExpect{Chromium: goodHello.Chromium, Config: goodHello.Config, Version: "test"},
			Key:        testKey,
			Paths:      paths,
		},
	}
	ctx := context.Background()
	if err := store.Add(ctx, vault.Record{Origin: "https://app.example", Account: "admin@example", Alias: "staging-admin"}, []byte(canary)); err != nil {
		t.Fatal(err)
	}
	if err := store.Add(ctx, vault.Record{Origin: "https://other.example", Account: "bob", Alias: "other-bob"}, []byte("x-other-secret")); err != nil {
		t.Fatal(err)
	}
	return f
}

// conn serves one in-memory connection of the host (pid 777) that said hello, and returns the
// client side.
func (f *fixture) conn(t testing.TB) net.Conn {
	t.Helper()
	return f.connOf(t, 777)
}

// connOf serves one in-memory connection of pid that said hello.
func (f *fixture) connOf(t testing.TB, pid int) net.Conn {
	t.Helper()
	c := f.connAs(t, Peer{UID: 0, PID: pid, Exe: "/usr/bin/agent"})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, `{"id":1000000,"method":"host.hello","params":`+string(must(json.Marshal(goodHello)))+"}\n")
	line, err := readLine(c)
	if err != nil || !bytes.Contains(line, []byte(`"result":{}`)) {
		t.Fatalf("hello: %q %v", line, err)
	}
	c.SetDeadline(time.Time{})
	return c
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// readLine reads one frame byte by byte (no buffering that would swallow the next reply).
func readLine(c net.Conn) ([]byte, error) {
	var out []byte
	b := make([]byte, 1)
	for {
		if _, err := c.Read(b); err != nil {
			return out, err
		}
		if b[0] == '\n' {
			return out, nil
		}
		out = append(out, b[0])
	}
}

// connAs serves one in-memory connection of peer, without a hello.
func (f *fixture) connAs(t testing.TB, peer Peer) net.Conn {
	t.Helper()
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() {
		f.srv.ServeConn(context.Background(), b, peer)
		close(done)
	}()
	t.Cleanup(func() {
		a.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("ServeConn did not return after the client closed")
		}
	})
	return a
}

func (f *fixture) client(t testing.TB) *brokerapi.Client {
	return brokerapi.NewClient(f.conn(t))
}

// raw sends one raw frame and reads one reply frame.
func raw(t *testing.T, c net.Conn, frame string) wire.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, frame); err != nil {
		t.Fatalf("write: %v", err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatalf("read reply to %.60q: %v", frame, err)
	}
	var r wire.Response
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

func code(err error) wire.Code { return wire.CodeOf(err) }

func TestMalformedInputGetsTypedErrors(t *testing.T) {
	f := newFixture(t)
	c := f.conn(t)
	cases := []struct {
		name, frame string
		id          uint64
		want        wire.Code
	}{
		{"not json", "hello\n", 0, wire.CodeBadRequest},
		{"truncated json", `{"id":3,"method":"ping"` + "\n", 0, wire.CodeBadRequest},
		{"unknown field", `{"id":4,"method":"ping","extra":1}` + "\n", 4, wire.CodeBadRequest},
		{"wrong id type", `{"id":"five","method":"ping"}` + "\n", 0, wire.CodeBadRequest},
		{"wrong params type", `{"id":6,"method":"credentials.list","params":{"origin":7}}` + "\n", 6, wire.CodeBadRequest},
		{"unknown param", `{"id":7,"method":"credentials.list","params":{"origin":"https://a.example","all":true}}` + "\n", 7, wire.CodeBadRequest},
		{"params not object", `{"id":8,"method":"credentials.list","params":[1]}` + "\n", 8, wire.CodeBadRequest},
		{"two values", `{"id":9,"method":"ping"}{"id":10,"method":"ping"}` + "\n", 0, wire.CodeBadRequest},
		{"case-folded key", `{"ID":12,"method":"ping"}` + "\n", 12, wire.CodeBadRequest},
		{"unknown method", `{"id":11,"method":"secrets.dump"}` + "\n", 11, wire.CodeUnknownMethod},
		{"bad origin", `{"id":12,"method":"credentials.list","params":{"origin":"javascript:alert(1)"}}` + "\n", 12, wire.CodeInvalidOrigin},
		{"negative id", `{"id":-1,"method":"ping"}` + "\n", 0, wire.CodeBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := raw(t, c, tc.frame)
			if r.Error == nil || r.Error.Code != tc.want {
				t.Fatalf("got %+v, want error %s", r, tc.want)
			}
			if r.ID != tc.id {
				t.Errorf("id = %d, want %d", r.ID, tc.id)
			}
			if r.Error.Hint == "" {
				t.Errorf("error %s has no hint", r.Error.Code)
			}
		})
	}
	// The same connection still works, and so does the state.
	r := raw(t, c, `{"id":99,"method":"credentials.list"}`+"\n")
	if r.Error != nil || r.ID != 99 {
		t.Fatalf("after malformed input: %+v", r)
	}
	var lr brokerapi.ListResult
	json.Unmarshal(r.Result, &lr)
	if len(lr.Credentials) != 2 {
		t.Fatalf("state changed: %+v", lr)
	}
}

func TestOversizeFrameClosesConnection(t *testing.T) {
	f := newFixture(t)
	c := f.conn(t)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		big := bytes.Repeat([]byte("a"), wire.MaxFrame+10)
		c.Write(big)
	}()
	br := bufio.NewReader(c)
	line, err := br.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no error reply before close: %v", err)
	}
	var r wire.Response
	json.Unmarshal(line, &r)
	if r.Error == nil || r.Error.Code != wire.CodeFrameTooLarge {
		t.Fatalf("got %s", line)
	}
	if _, err := br.ReadBytes('\n'); err == nil {
		t.Fatal("connection still open after an oversize frame")
	}
	// Other connections are unaffected.
	if _, err := f.client(t).Version(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFrameAtLimitIsAccepted(t *testing.T) {
	f := newFixture(t)
	c := f.conn(t)
	// A valid request padded with spaces to exactly MaxFrame bytes including the newline.
	head := `{"id":5,"method":"ping"`
	frame := head + strings.Repeat(" ", wire.MaxFrame-len(head)-2) + "}\n"
	if len(frame) != wire.MaxFrame {
		t.Fatal(len(frame))
	}
	r := raw(t, c, frame)
	if r.Error != nil || r.ID != 5 {
		t.Fatalf("frame of exactly MaxFrame: %+v", r.Error)
	}
}

func TestTruncatedFrameClosesQuietly(t *testing.T) {
	f := newFixture(t)
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() { f.srv.ServeConn(context.Background(), b, Peer{}); close(done) }()
	io.WriteString(a, `{"id":1,"meth`)
	a.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("server kept a truncated connection")
	}
}

func TestCredentialsLifecycle(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.client(t)
	got, err := c.Add(ctx, "HTTPS://App.Example:443/", "ops", "Deploy-Bot", []byte("pw-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Origin != "https://app.example" || got.Alias != "Deploy-Bot" || got.Created.IsZero() {
		t.Fatalf("add returned %+v", got)
	}
	if _, err := c.Add(ctx, "https://app.example", "ops2", "deploy-bot", []byte("pw-2")); code(err) != wire.CodeAliasExists {
		t.Fatalf("duplicate alias (other case): %v", err)
	}
	if _, err := c.Add(ctx, "http://app.example", "ops", "x", []byte("pw")); code(err) != wire.CodeInvalidOrigin {
		t.Fatalf("http non-loopback: %v", err)
	}
	if _, err := c.Add(ctx, "https://app.example", "ops", "bad alias!", []byte("pw")); code(err) != wire.CodeInvalidArgument {
		t.Fatalf("bad alias: %v", err)
	}
	if _, err := c.Add(ctx, "https://app.example", "ops", "big", bytes.Repeat([]byte("x"), credential.MaxSecretLen+1)); code(err) != wire.CodeInvalidArgument {
		t.Fatalf("oversize secret: %v", err)
	}
	list, err := c.List(ctx, "https://app.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("list = %+v", list)
	}
	all, err := c.List(ctx, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("list all = %+v, %v", all, err)
	}
	if err := c.Remove(ctx, "https://app.example", "DEPLOY-BOT"); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, "https://app.example", "deploy-bot"); code(err) != wire.CodeAliasUnknown {
		t.Fatalf("second remove: %v", err)
	}
	if err := c.Remove(ctx, "https://other.example", "staging-admin"); code(err) != wire.CodeAliasUnknown {
		t.Fatalf("remove at wrong origin: %v", err)
	}
}

// TestNoAuditNothingServed: a Server without an audit log serves nothing: Serve fails at once,
// and a connection is closed before any request is answered.
func TestNoAuditNothingServed(t *testing.T) {
	f := newFixture(t)
	f.srv.Audit = nil
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "b.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := f.srv.Serve(context.Background(), l, 0); err == nil || !strings.Contains(err.Error(), "no audit log") {
		t.Fatalf("Serve without an audit log = %v", err)
	}
	c := f.connAs(t, Peer{PID: 777})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, `{"id":1,"method":"ping"}`+"\n")
	if line, err := readLine(c); err == nil || len(line) > 0 {
		t.Fatalf("a connection without an audit log was answered: %q, %v", line, err)
	}
}

// TestFailingAuditorReleasesNothing: when the audit record of an allowed release cannot be
// written, the reply is an error without a secret; a denial is still refused, and a later
// release (with the log working again) is allowed and recorded.
func TestFailingAuditorReleasesNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.audit.fail = fmt.Errorf("audit: write record: %w", &os.PathError{Op: "write", Path: "audit.jsonl", Err: syscall.ENOSPC})
	c := f.conn(t)
	ch, err := brokerapi.NewClient(c).Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	frame := `{"id":5,"method":"release","params":{"challenge":"` + ch.Challenge + `","alias":"staging-admin","session":"s","document":"d"}}` + "\n"
	if _, err := io.WriteString(c, frame); err != nil {
		t.Fatal(err)
	}
	line, err := readLine(c)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte(base64.StdEncoding.EncodeToString([]byte(canary)))) || bytes.Contains(line, []byte(`"secret"`)) {
		t.Fatalf("a release whose audit record failed carried the secret: %s", line)
	}
	var r wire.Response
	if err := json.Unmarshal(line, &r); err != nil || r.Error == nil || r.Error.Code != wire.CodeAuditUnavail || r.Error.Hint == "" ||
		!strings.Contains(r.Error.Message, "no space left on device") || r.Result != nil {
		t.Fatalf("reply %s (%v); want AUDIT_UNAVAILABLE naming ENOSPC, a hint, and no result", line, err)
	}
	if n := len(f.audit.records()); n != 0 {
		t.Fatalf("%d records written by a failing auditor", n)
	}
	// The log works again: the next release goes through and is the one record.
	f.audit.mu.Lock()
	f.audit.fail = nil
	f.audit.mu.Unlock()
	cl := brokerapi.NewClient(c)
	ch, err = cl.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := cl.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d"})
	if err != nil || string(secret) != canary {
		t.Fatalf("release with a working log: %v", err)
	}
	if recs := f.audit.records(); len(recs) != 1 || recs[0].Op != "release" || recs[0].Decision != "allow" {
		t.Fatalf("records %+v; want one allowed release", recs)
	}
}

// reservingAudit is a memAudit that can set aside a record's space; reserveErr, when set,
// makes Reserve fail (a full disk).
type reservingAudit struct {
	*memAudit
	reserveErr error
	reserves   atomic.Int32
}

func (r *reservingAudit) Reserve() error {
	r.reserves.Add(1)
	return r.reserveErr
}

// TestFullAuditLogAsksNobody: when the audit log cannot set aside the space of a release's
// record (a full disk), the release is AUDIT_UNAVAILABLE before anyone is asked and before the
// vault is read; the refusal is still offered to the log. With space, the reservation comes
// first and the release goes through.
func TestFullAuditLogAsksNobody(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ra := &reservingAudit{memAudit: f.audit, reserveErr: fmt.Errorf("audit: reserve: %w", syscall.ENOSPC)}
	f.srv.Audit = ra
	cl := f.client(t)
	ch, err := cl.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := cl.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d"})
	if wire.CodeOf(err) != wire.CodeAuditUnavail || secret != nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("release with a full audit log: %v (secret %v), want AUDIT_UNAVAILABLE naming ENOSPC", err, secret != nil)
	}
	if n, s := f.pres.asked.Load(), f.store.secrets.Load(); n != 0 || s != 0 || ra.reserves.Load() != 1 {
		t.Fatalf("asked %d, vault read %d, reserved %d times; want nobody asked and nothing read", n, s, ra.reserves.Load())
	}
	if recs := f.audit.records(); len(recs) != 1 || recs[0].Decision != "deny" || recs[0].Code != string(wire.CodeAuditUnavail) {
		t.Fatalf("records %+v; want the refusal", recs)
	}
	ra.reserveErr = nil
	ch, err = cl.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, secret, err := cl.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d"}); err != nil || string(secret) != canary {
		t.Fatalf("release with space: %v", err)
	}
	if f.pres.asked.Load() != 1 || ra.reserves.Load() != 2 {
		t.Fatalf("asked %d, reserved %d", f.pres.asked.Load(), ra.reserves.Load())
	}

	// An add the log has no space for is refused before the store is written.
	ra.reserveErr = fmt.Errorf("audit: reserve: %w", syscall.ENOSPC)
	if _, err := cl.Add(ctx, "https://app.example", "new@example", "new-one", []byte("pw-new")); wire.CodeOf(err) != wire.CodeAuditUnavail ||
		!strings.Contains(err.Error(), "nothing was saved") {
		t.Fatalf("add with a full audit log: %v, want AUDIT_UNAVAILABLE", err)
	}
	if recs, _ := f.store.List(ctx, "https://app.example"); len(recs) != 1 {
		t.Fatalf("the store after a refused add: %+v", recs)
	}
	if recs := f.audit.records(); recs[len(recs)-1].Op != "add" || recs[len(recs)-1].Code != string(wire.CodeAuditUnavail) {
		t.Fatalf("newest record %+v, want the refused add", recs[len(recs)-1])
	}
	// A remove too: the credential stays.
	if err := cl.Remove(ctx, "https://app.example", "staging-admin"); wire.CodeOf(err) != wire.CodeAuditUnavail ||
		!strings.Contains(err.Error(), "nothing was removed") {
		t.Fatalf("remove with a full audit log: %v, want AUDIT_UNAVAILABLE", err)
	}
	if recs, _ := f.store.List(ctx, "https://app.example"); len(recs) != 1 || recs[0].Alias != "staging-admin" {
		t.Fatalf("the store after a refused remove: %+v", recs)
	}
	if recs := f.audit.records(); recs[len(recs)-1].Op != "remove" || recs[len(recs)-1].Code != string(wire.CodeAuditUnavail) {
		t.Fatalf("newest record %+v, want the refused remove", recs[len(recs)-1])
	}
	ra.reserveErr = nil
	if err := cl.Remove(ctx, "https://app.example", "staging-admin"); err != nil {
		t.Fatalf("remove with space: %v", err)
	}

	// A keyring init or repair (the secret-service provider's): refused before the keyring is
	// asked, and the refusal recorded.
	kr := &unlockingPresence{fakePresence: f.pres}
	f.srv.Presence = kr
	ra.reserveErr = fmt.Errorf("audit: reserve: %w", syscall.ENOSPC)
	if _, err := cl.Init(ctx); wire.CodeOf(err) != wire.CodeAuditUnavail || !strings.Contains(err.Error(), "no keyring was created") {
		t.Fatalf("init with a full audit log: %v, want AUDIT_UNAVAILABLE", err)
	}
	if _, err := cl.Repair(ctx); wire.CodeOf(err) != wire.CodeAuditUnavail || !strings.Contains(err.Error(), "nothing was repaired") {
		t.Fatalf("repair with a full audit log: %v, want AUDIT_UNAVAILABLE", err)
	}
	if n := kr.keyring.Load(); n != 0 {
		t.Fatalf("the keyring was asked %d times", n)
	}
	recs := f.audit.records()
	if len(recs) < 2 || recs[len(recs)-2].Op != "init" || recs[len(recs)-1].Op != "repair" || recs[len(recs)-1].Code != string(wire.CodeAuditUnavail) {
		t.Fatalf("newest records %+v, want the refused init and repair", recs[max(len(recs)-2, 0):])
	}
	ra.reserveErr = nil
	if _, err := cl.Init(ctx); err != nil || kr.keyring.Load() != 1 {
		t.Fatalf("init with space: %v (keyring asked %d)", err, kr.keyring.Load())
	}
}

// unlockingPresence is a fakePresence with the secret-service provider's keyring operations
// (the unlocker interface), counting how often the keyring was asked.
type unlockingPresence struct {
	*fakePresence
	keyring atomic.Int32
}

func (u *unlockingPresence) Unlocked(ctx context.Context, create bool, use func(context.Context) error) error {
	u.keyring.Add(1)
	return use(ctx)
}

func (u *unlockingPresence) Init(ctx context.Context) (bool, error) {
	u.keyring.Add(1)
	return true, nil
}

func (u *unlockingPresence) Repair(ctx context.Context) (bool, error) {
	u.keyring.Add(1)
	return true, nil
}

func TestChallengeListsOnlyThatOrigin(t *testing.T) {
	f := newFixture(t)
	ch, err := f.client(t).Challenge(context.Background(), brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://APP.example"})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Origin != "https://app.example" || len(ch.Aliases) != 1 || ch.Aliases[0] != "staging-admin" {
		t.Fatalf("challenge = %+v", ch)
	}
	if len(ch.Challenge) != 26 || !ch.ExpiresAt.Equal(f.clock.Now().Add(2*time.Minute)) {
		t.Fatalf("challenge id/expiry = %q %v", ch.Challenge, ch.ExpiresAt)
	}
}

func TestRelease(t *testing.T) {
	ctx := context.Background()
	issue := func(t *testing.T, f *fixture, c *brokerapi.Client, o string) string {
		ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s1", Document: "doc-1", Origin: o})
		if err != nil {
			t.Fatal(err)
		}
		return ch.Challenge
	}
	t.Run("allowed", func(t *testing.T) {
		f := newFixture(t)
		c := f.client(t)
		id := issue(t, f, c, "https://app.example")
		rel, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: id, Alias: "Staging-Admin", Session: "s1", Document: "doc-1"})
		if err != nil {
			t.Fatal(err)
		}
		if string(secret) != canary || rel.Account != "admin@example" || rel.Origin != "https://app.example" || rel.Alias != "staging-admin" {
			t.Fatalf("released %+v", rel)
		}
		r := f.pres.last.Load()
		if r.Origin != "https://app.example" || r.Account != "admin@example" || r.Alias != "staging-admin" || r.Session != "s1" || r.PID != 777 || r.Exe != "/opt/headless/headless" || !r.Host {
			t.Fatalf("presence request %+v", r)
		}
		// Single use.
		if _, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: id, Alias: "staging-admin", Session: "s1", Document: "doc-1"}); code(err) != wire.CodeChallengeUsed {
			t.Fatalf("replay: %v", err)
		}
	})
	denials := []struct {
		name    string
		decide  error
		want    wire.Code
		prepare func(f *fixture, p *brokerapi.ReleaseParams)
	}{
		{"presence denied", presence.ErrDenied, wire.CodePresenceDenied, nil},
		{"presence denied by pinentry", fmt.Errorf("%w: %w", presence.ErrDenied, &presence.PinentryError{Code: 83886179}), wire.CodePresenceDenied, nil},
		{"presence timeout", presence.ErrTimeout, wire.CodePresenceTimeout, nil},
		{"presence unavailable", presence.ErrUnavailable, wire.CodePresenceUnavail, nil},
		{"expired", nil, wire.CodeChallengeExp, func(f *fixture, p *brokerapi.ReleaseParams) { f.clock.Add(2 * time.Minute) }},
		{"other session", nil, wire.CodeChallengeMism, func(f *fixture, p *brokerapi.ReleaseParams) { p.Session = "s2" }},
		{"other document", nil, wire.CodeChallengeMism, func(f *fixture, p *brokerapi.ReleaseParams) { p.Document = "doc-2" }},
		{"unknown challenge", nil, wire.CodeChallengeUnk, func(f *fixture, p *brokerapi.ReleaseParams) { p.Challenge = "AAAAAAAAAAAAAAAAAAAAAAAAAA" }},
		{"alias of another origin", nil, wire.CodeOriginMismatch, func(f *fixture, p *brokerapi.ReleaseParams) { p.Alias = "other-bob" }},
		{"unknown alias", nil, wire.CodeAliasUnknown, func(f *fixture, p *brokerapi.ReleaseParams) { p.Alias = "nobody" }},
		{"invalid alias", nil, wire.CodeInvalidArgument, func(f *fixture, p *brokerapi.ReleaseParams) { p.Alias = "../x" }},
	}
	for _, tc := range denials {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.pres.decide = func(context.Context, presence.Request) error { return tc.decide }
			c := f.client(t)
			p := brokerapi.ReleaseParams{Challenge: issue(t, f, c, "https://app.example"), Alias: "staging-admin", Session: "s1", Document: "doc-1"}
			if tc.prepare != nil {
				tc.prepare(f, &p)
			}
			_, secret, err := c.Release(ctx, p)
			if code(err) != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
			// A denial says the person did not approve, nothing of how the prompt said no
			// (pinentry's gpg error number).
			if want := "the person did not approve this release at the prompt; nothing was released"; tc.want == wire.CodePresenceDenied && wire.From(err).Message != want {
				t.Errorf("denied: message %q, want %q", wire.From(err).Message, want)
			}
			if secret != nil {
				t.Fatal("secret returned with an error")
			}
			if n := f.store.secrets.Load(); n != 0 {
				t.Fatalf("vault read %d times on a denied release", n)
			}
			if strings.Contains(err.Error(), canary) {
				t.Fatal("canary in error")
			}
		})
	}
	t.Run("denied challenge is burned", func(t *testing.T) {
		f := newFixture(t)
		f.pres.decide = func(context.Context, presence.Request) error { return presence.ErrDenied }
		c := f.client(t)
		p := brokerapi.ReleaseParams{Challenge: issue(t, f, c, "https://app.example"), Alias: "staging-admin", Session: "s1", Document: "doc-1"}
		c.Release(ctx, p)
		f.pres.decide = nil
		if _, _, err := c.Release(ctx, p); code(err) != wire.CodeChallengeUsed {
			t.Fatalf("retry after denial: %v", err)
		}
	})
}

// TestPendingPromptDoesNotBlock holds one release at the prompt and checks that other
// connections, and the same connection, are answered meanwhile.
func TestPendingPromptDoesNotBlock(t *testing.T) {
	f := newFixture(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	f.pres.decide = func(ctx context.Context, r presence.Request) error {
		close(entered)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return presence.ErrDenied
		}
	}
	ctx := context.Background()
	holder := f.conn(t)
	ch, err := f.client(t).Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	holder.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(holder)
	io.WriteString(holder, `{"id":1,"method":"release","params":{"challenge":"`+ch.Challenge+`","alias":"staging-admin","session":"s","document":"d"}}`+"\n")
	<-entered
	// Same connection: a ping is answered while the release waits.
	io.WriteString(holder, `{"id":2,"method":"ping"}`+"\n")
	line, err := br.ReadBytes('\n')
	if err != nil || !bytes.Contains(line, []byte(`"id":2`)) {
		t.Fatalf("same-connection ping while prompt pending: %q %v", line, err)
	}
	// Other connections.
	other := f.client(t)
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := other.Version(qctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.List(qctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Challenge(qctx, brokerapi.ChallengeParams{Session: "s2", Document: "d2", Origin: "https://app.example"}); err != nil {
		t.Fatal(err)
	}
	close(release)
	line, err = br.ReadBytes('\n')
	if err != nil || !bytes.Contains(line, []byte(`"id":1`)) || !bytes.Contains(line, []byte(`"secret"`)) {
		t.Fatalf("held release: %v", err)
	}
}

func TestDisconnectCancelsPendingPrompt(t *testing.T) {
	f := newFixture(t)
	cancelled := make(chan struct{})
	entered := make(chan struct{})
	f.pres.decide = func(ctx context.Context, r presence.Request) error {
		close(entered)
		<-ctx.Done()
		close(cancelled)
		return presence.ErrDenied
	}
	ch, _ := f.client(t).Challenge(context.Background(), brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	a := f.conn(t)
	go io.WriteString(a, `{"id":1,"method":"release","params":{"challenge":"`+ch.Challenge+`","alias":"staging-admin","session":"s","document":"d"}}`+"\n")
	<-entered
	a.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("prompt not cancelled when the requester went away")
	}
}

func TestReleaseFrameShape(t *testing.T) {
	frame, err := brokerapi.ReleaseFrame(7, brokerapi.Released{Origin: "https://a.example", Account: `q"uote`, Alias: "x"}, []byte("s3cr3t"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		ID     uint64 `json:"id"`
		Result struct {
			brokerapi.Released
			Secret []byte `json:"secret"`
		} `json:"result"`
	}
	if err := wire.DecodeStrict(bytes.TrimSuffix(frame, []byte("\n")), &r); err != nil {
		t.Fatalf("%s: %v", frame, err)
	}
	if r.ID != 7 || string(r.Result.Secret) != "s3cr3t" || r.Result.Account != `q"uote` {
		t.Fatalf("%+v", r)
	}
}

func FuzzServeConn(f *testing.F) {
	f.Add([]byte(`{"id":1,"method":"ping"}` + "\n"))
	f.Add([]byte(`{"id":2,"method":"credentials.list","params":{"origin":"https://app.example"}}` + "\n"))
	f.Add([]byte(`{"id":3,"method":"release","params":{"challenge":"x","alias":"a","session":"s","document":"d"}}` + "\n"))
	f.Add([]byte(`{"id":4,"method":"credentials.add","params":{"origin":"https://a.example","account":"a","alias":"b","secret":"cHc="}}` + "\n"))
	f.Add([]byte("\n\n{\"id\":1}\n"))
	f.Add([]byte(`{"id":5,"method":"session.open","params":{"session":"iso","isolated":true}}` + "\n" +
		`{"id":6,"method":"credentials.add","params":{"session":"iso","origin":"https://app.example","account":"a","alias":"b","secret":"cHc="}}` + "\n" +
		`{"id":7,"method":"session.close","params":{"session":"iso"}}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fx := newFixture(t)
		// Nobody approves: whatever the input, the vault must never be read.
		fx.pres.decide = func(context.Context, presence.Request) error { return presence.ErrDenied }
		a, b := net.Pipe()
		done := make(chan struct{})
		go func() { fx.srv.ServeConn(context.Background(), b, Peer{}); close(done) }()
		go io.Copy(io.Discard, a)
		a.Write(in)
		a.Close()
		<-done
		if n := fx.store.secrets.Load(); n != 0 {
			t.Fatalf("vault read %d times with presence denying everything", n)
		}
		recs, err := fx.store.List(context.Background(), "https://app.example")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Alias == "staging-admin" {
				return
			}
		}
		// credentials.remove in the input may legitimately remove it; anything else is a bug.
		if !bytes.Contains(in, []byte("remove")) {
			t.Fatalf("state lost without a remove request")
		}
	})
}

// TestReleaseUsesIssueTimeMetadata: the prompt's metadata comes with the challenge; an alias
// added after the challenge is still found, one removed since is refused without a secret.
func TestReleaseUsesIssueTimeMetadata(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(ctx, "https://app.example", "late@example", "late", []byte("late-pw")); err != nil {
		t.Fatal(err)
	}
	rel, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "late", Session: "s", Document: "d"})
	if err != nil || string(secret) != "late-pw" || rel.Account != "late@example" {
		t.Fatalf("alias added after the challenge: %+v %v", rel, err)
	}
	ch, _ = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d2", Origin: "https://app.example"})
	if err := c.Remove(ctx, "https://app.example", "staging-admin"); err != nil {
		t.Fatal(err)
	}
	if _, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d2"}); code(err) != wire.CodeAliasUnknown || secret != nil {
		t.Fatalf("alias removed after the challenge: %v", err)
	}
}

// TestReleaseRefusesAChangedRecord: the person is asked about the account in the challenge's
// metadata (or an index file another program can edit); if the record read inside the grant
// is another account's, nothing is released.
func TestReleaseRefusesAChangedRecord(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	ctx := context.Background()
	ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	// The alias now names another account (removed and re-added behind the challenge's back).
	if err := f.store.Remove(ctx, "https://app.example", "staging-admin"); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Add(ctx, vault.Record{Origin: "https://app.example", Account: "mallory", Alias: "staging-admin"}, []byte("other")); err != nil {
		t.Fatal(err)
	}
	_, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d"})
	if code(err) != wire.CodeAliasUnknown || secret != nil {
		t.Fatalf("release of a changed record = %v (secret %v), want ALIAS_UNKNOWN and nothing", err, secret != nil)
	}
	if r := f.pres.last.Load(); r == nil || r.Account != "admin@example" {
		t.Fatalf("presence was asked about %+v", r)
	}
}

// released checks that the last audit record is an allowed release whose JSON says exactly
// what was sent (want: the "released" member, verbatim).
func released(t *testing.T, f *fixture, want string) {
	t.Helper()
	recs := f.audit.records()
	r := recs[len(recs)-1]
	b, _ := json.Marshal(r)
	if r.Op != "release" || r.Decision != "allow" || !strings.Contains(string(b), want) || strings.Count(string(b), `"released"`) != 1 {
		t.Fatalf("audit record %s, want %s", b, want)
	}
}

// TestReleaseWithOneTimeCode: a credential with a TOTP seed releases the password and the
// current code under the one approval, whose prompt says so; the seed never leaves; a verify
// releases the password only; a denial releases nothing.
func TestReleaseWithOneTimeCode(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.srv.Now = func() time.Time { return time.Unix(1111111109, 0) }
	c := f.client(t)
	const factor = "totp1:SHA1:8:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" // RFC 6238's SHA-1 seed
	stored := credential.JoinFactor([]byte("otp-pw"), []byte(factor))
	cred, err := c.Add(ctx, "https://app.example", "otp@example", "with-otp", stored)
	if err != nil || !cred.TOTP {
		t.Fatalf("add: %+v %v", cred, err)
	}
	ch, _ := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	rel, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "with-otp", Session: "s", Document: "d"})
	if err != nil || !rel.Code {
		t.Fatalf("release: %+v %v", rel, err)
	}
	pw, code := credential.SplitFactor(secret)
	if string(pw) != "otp-pw" || string(code) != "07081804" { // RFC 6238 appendix B, T=1111111109
		t.Fatalf("released %d bytes, not password + code", len(secret))
	}
	if bytes.Contains(secret, []byte("GEZD")) {
		t.Fatal("the seed left brokerd")
	}
	if d := f.pres.last.Load().Description(); !strings.Contains(d, "password and one-time code") {
		t.Fatalf("prompt: %s", d)
	}
	released(t, f, `"released":["password","totp"]`)
	// The plain credential's prompt still says "password" only.
	ch, _ = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if rel, _, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d"}); err != nil || rel.Code {
		t.Fatalf("plain release: %+v %v", rel, err)
	}
	if d := f.pres.last.Load().Description(); strings.Contains(d, "one-time code") {
		t.Fatalf("plain prompt: %s", d)
	}
	released(t, f, `"released":["password"]`)
	// Step-up: the code alone, under a prompt of its own; an alias without a seed is refused
	// before anyone is asked.
	ch, _ = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	rel, secret, err = c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "with-otp", Session: "s", Document: "d", Purpose: brokerapi.PurposeCode})
	if pw, code := credential.SplitFactor(secret); err != nil || !rel.Code || len(pw) != 0 || string(code) != "07081804" {
		t.Fatalf("step-up release: %+v %v (%d bytes)", rel, err, len(secret))
	}
	if d := f.pres.last.Load().Description(); !strings.Contains(d, "only the one-time code (not the password)") {
		t.Fatalf("step-up prompt: %s", d)
	}
	released(t, f, `"released":["totp"]`)
	asked := f.pres.asked.Load()
	ch, _ = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if _, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "staging-admin", Session: "s", Document: "d", Purpose: brokerapi.PurposeCode}); wire.CodeOf(err) != wire.CodeInvalidArgument || secret != nil || f.pres.asked.Load() != asked {
		t.Fatalf("step-up of an alias without a seed: %v, asked %d times more", err, f.pres.asked.Load()-asked)
	}
	// Basic: the password only, and the prompt says what for.
	ch, _ = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if rel, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "with-otp", Session: "s", Document: "d", Purpose: brokerapi.PurposeBasic}); err != nil || rel.Code || string(secret) != "otp-pw" {
		t.Fatalf("basic release: %+v %v", rel, err)
	}
	if d := f.pres.last.Load().Description(); !strings.Contains(d, "HTTP Basic authentication") || strings.Contains(d, "one-time") {
		t.Fatalf("basic prompt: %s", d)
	}
	released(t, f, `"released":["password"]`)
	// Denied: nothing.
	f.pres.decide = func(context.Context, presence.Request) error { return presence.ErrDenied }
	ch, _ = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
	if _, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "with-otp", Session: "s", Document: "d"}); err == nil || secret != nil {
		t.Fatalf("denied release: %v", err)
	}
	if r := f.audit.records(); r[len(r)-1].Decision != "deny" || r[len(r)-1].Released != nil {
		t.Fatalf("a denial's record: %+v", r[len(r)-1])
	}
	for _, r := range f.audit.records() {
		if strings.Contains(fmt.Sprintf("%+v", r), "07081804") || strings.Contains(fmt.Sprintf("%+v", r), "GEZD") {
			t.Fatal("the audit holds the code or the seed")
		}
	}
}

// TestReleasePasskey: a passkey is released only for a passkey ceremony and a password never
// is, both refused before anyone is asked; the prompt says "passkey"; the reply carries the
// highest sign count brokerd knows, which the host's passkey.signed raises once per release
// and never lowers; no audit record holds a byte of the key.
func TestReleasePasskey(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.client(t)
	key := bytes.Repeat([]byte{0xa7}, 138)
	stored, err := credential.StorePasskey(credential.Passkey{RPID: "app.example", ID: []byte("cred-1"), UserHandle: []byte{9}, Key: key, SignCount: 41})
	if err != nil {
		t.Fatal(err)
	}
	cred, err := c.Add(ctx, "https://app.example", "pk@example", "pk", stored)
	if err != nil || !cred.Passkey || cred.TOTP {
		t.Fatalf("add: %+v %v", cred, err)
	}
	issue := func() string {
		ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: "d", Origin: "https://app.example"})
		if err != nil || !slices.Contains(ch.Passkeys, "pk") || slices.Contains(ch.Passkeys, "staging-admin") {
			t.Fatalf("challenge: %+v %v", ch, err)
		}
		return ch.Challenge
	}
	asked := f.pres.asked.Load()
	for _, p := range []brokerapi.ReleaseParams{
		{Alias: "pk", Purpose: brokerapi.PurposeLogin, Path: "/login"},
		{Alias: "pk", Purpose: brokerapi.PurposeBasic},
		{Alias: "pk", Purpose: brokerapi.PurposeCode},
		{Alias: "staging-admin", Purpose: brokerapi.PurposePasskey, Path: "/login"},
	} {
		p.Challenge, p.Session, p.Document = issue(), "s", "d"
		if _, secret, err := c.Release(ctx, p); wire.CodeOf(err) != wire.CodeInvalidArgument || secret != nil {
			t.Fatalf("%s as %q: %v; want INVALID_ARGUMENT", p.Alias, p.Purpose, err)
		}
	}
	if n := f.pres.asked.Load() - asked; n != 0 {
		t.Fatalf("a mismatched kind asked the person %d times", n)
	}
	release := func() (string, brokerapi.Released) {
		ch := issue()
		rel, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch, Alias: "pk", Session: "s", Document: "d", Purpose: brokerapi.PurposePasskey, Path: "/login"})
		if err != nil {
			t.Fatalf("passkey release: %v", err)
		}
		pk, err := credential.ParsePasskey(secret)
		if err != nil || !bytes.Equal(pk.Key, key) || pk.RPID != "app.example" {
			t.Fatalf("released passkey: %v", err)
		}
		return ch, rel
	}
	ch, rel := release()
	if rel.SignCount != 41 {
		t.Fatalf("sign count %d; want the stored 41", rel.SignCount)
	}
	if d := f.pres.last.Load().Description(); !strings.Contains(d, "Use the saved passkey") {
		t.Fatalf("prompt: %s", d)
	}
	released(t, f, `"released":["passkey"]`)
	if err := c.PasskeySigned(ctx, ch, 42, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.PasskeySigned(ctx, ch, 90, 1); wire.CodeOf(err) != wire.CodeChallengeUnk {
		t.Fatalf("a second report of one release: %v; want CHALLENGE_UNKNOWN", err)
	}
	if err := c.PasskeySigned(ctx, "nope", 90, 1); wire.CodeOf(err) != wire.CodeChallengeUnk {
		t.Fatalf("a report of no release: %v", err)
	}
	ch, rel = release()
	if rel.SignCount != 42 {
		t.Fatalf("sign count %d after a report of 42 (the release reserved 42 too)", rel.SignCount)
	}
	if err := c.PasskeySigned(ctx, ch, 7, 1); err != nil { // lower: kept as it was
		t.Fatal(err)
	}
	ch, rel = release()
	if rel.SignCount != 43 { // 42 reported; the release before reserved 43
		t.Fatalf("sign count %d after a lower report; want 43 (reserved by the release before)", rel.SignCount)
	}
	// A page that had the passkey answer three times under that one approval: on record, and
	// the sign count follows the highest.
	if err := c.PasskeySigned(ctx, ch, 46, 3); err != nil {
		t.Fatal(err)
	}
	recs := f.audit.records()
	if last := recs[len(recs)-1]; last.Op != "passkey_overused" || last.Alias != "pk" || !strings.Contains(last.Detail, "3 times") {
		t.Fatalf("the overuse's record: %+v", last)
	}
	if _, rel = release(); rel.SignCount != 46 {
		t.Fatalf("sign count %d after an overuse to 46", rel.SignCount)
	}
	// A release whose report never comes still moves the count on: the next one is higher.
	if _, again := release(); again.SignCount != 47 {
		t.Fatalf("sign count %d after a release with no report; want 47", again.SignCount)
	}
	enc := base64.StdEncoding.EncodeToString(key)[:12]
	for _, r := range f.audit.records() {
		if s := fmt.Sprintf("%+v", r); strings.Contains(s, enc) || strings.Contains(s, string(key[:8])) {
			t.Fatal("the audit holds the passkey's key")
		}
	}
}
