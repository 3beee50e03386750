//go:build linux

package tests

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/challenge"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/broker/auditwriter"
	"github.com/headless-dev/headless/internal/broker/gate"
	"github.com/headless-dev/headless/internal/broker/hostproc"
	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/broker/seal"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/internal/safesock"
	"github.com/headless-dev/headless/vault"
)

// Benchmarks report their own latency percentiles (p50-ms, p99-ms) next to ns/op.
// scripts/bench.sh runs them in one invocation and prints the ratios.

type samples []time.Duration

func (s samples) report(b *testing.B) { s.reportAs(b, "") }

// p50 is the median in milliseconds.
func (s samples) p50() float64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return float64(c[(len(c)-1)/2].Microseconds()) / 1000
}

// reportAs reports the percentiles as PREFIXp50-ms and PREFIXp99-ms (one benchmark that
// measures several things).
func (s samples) reportAs(b *testing.B, prefix string) {
	if len(s) == 0 {
		return
	}
	slices.Sort(s)
	pct := func(p float64) float64 {
		i := int(p * float64(len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), prefix+"p50-ms")
	b.ReportMetric(pct(0.99), prefix+"p99-ms")
}

func benchBroker(b *testing.B, mode string) (*env, *brokerapi.Client) {
	e := newEnv(b, envOptions{})
	program, _ := presencetest.FakePinentry(b, mode)
	e.pinentryConfig(program)
	e.startBrokerd()
	c, err := brokerapi.Dial(context.Background(), e.sockPath())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Add(context.Background(), origin, "bench@example.test", "bench", []byte("bench-password-1")); err != nil {
		b.Fatal(err)
	}
	return e, c
}

// BenchmarkRelease is one release through a real brokerd to the real host that brokerd
// started, as 'credentials verify' does it (releases go to nothing else): the host issues a
// challenge, opens its release connection (host.hello), brokerd checks the genuine host, the
// challenge and the alias, asks the scripted pinentry (a real process speaking Assuan), reads
// with GetSecret over the DH session, audits, replies; the host zeroes it. The control-socket
// call is made by this process directly (no CLI process per iteration).
func BenchmarkRelease(b *testing.B) {
	e, _ := benchBroker(b, "approve")
	e.start(b)
	ctx := context.Background()
	conn, err := net.Dial("unix", filepath.Join(e.runDir(), "control.sock"))
	if err != nil {
		b.Fatal(err)
	}
	cl := control.NewClient(conn)
	defer cl.Close()
	var s samples
	for b.Loop() {
		start := time.Now()
		r, err := cl.CredentialsVerify(ctx, control.VerifyParams{Origin: origin, Alias: "bench"})
		s = append(s, time.Since(start))
		if err != nil || !r.Released {
			b.Fatal(r, err)
		}
	}
	s.report(b)
}

// BenchmarkBaselineGetSecret is the raw vault read on an open DH session (no broker).
func BenchmarkBaselineGetSecret(b *testing.B) {
	e := newEnv(b, envOptions{})
	ctx := context.Background()
	ss, err := vault.OpenSecretService(ctx, vault.SecretServiceOptions{Address: e.k.Addr})
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	if err := ss.Add(ctx, vault.Record{Origin: origin, Account: "bench@example.test", Alias: "bench"}, []byte("bench-password-1")); err != nil {
		b.Fatal(err)
	}
	var s samples
	for b.Loop() {
		start := time.Now()
		_, secret, err := ss.Secret(ctx, origin, "bench")
		s = append(s, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		credential.Zero(secret)
	}
	s.report(b)
}

// BenchmarkBaselinePinentry is the scripted pinentry alone (spawn, Assuan, CONFIRM, reap).
func BenchmarkBaselinePinentry(b *testing.B) {
	newEnv(b, envOptions{noBus: true}) // opt-in check and build
	program, _ := presencetest.FakePinentry(b, "approve")
	p, err := presence.NewPinentry(presence.PinentryOptions{Program: program, Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := presence.Request{Origin: origin, Account: "bench@example.test", Alias: "bench", Session: "bench", PID: os.Getpid()}
	var s samples
	for b.Loop() {
		start := time.Now()
		err := p.Do(ctx, req, func(context.Context) error { return nil })
		s = append(s, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	s.report(b)
}

// BenchmarkChallengeIssue issues challenges from 1, 8 and 64 concurrent connections.
func BenchmarkChallengeIssue(b *testing.B) {
	for _, conns := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			e, _ := benchBroker(b, "approve")
			clients := make([]*brokerapi.Client, conns)
			for i := range clients {
				c, err := brokerapi.Dial(context.Background(), e.sockPath())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				clients[i] = c
			}
			ctx := context.Background()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N/conns + 1
			start := time.Now()
			for i, c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; j < per; j++ {
						if _, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "s", Document: fmt.Sprintf("d-%d-%d", i, j), Origin: origin}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*conns)/time.Since(start).Seconds(), "challenges/s")
		})
	}
}

// BenchmarkBrokerdIdleRSS reports brokerd's resident memory after start-up and a few requests.
func BenchmarkBrokerdIdleRSS(b *testing.B) {
	e, c := benchBroker(b, "approve")
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.List(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(e.brokerPID()), "status"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			b.ReportMetric(float64(kb)/1024, "rss-MB")
		}
	}
}

// instantPresence stands in for a person who approves at once: with it the in-process
// benchmark isolates brokerd's own work (socket, framing, challenge, lookup, reply) from the
// cost of spawning a pinentry.
type instantPresence struct{}

func (instantPresence) Name() string { return "instant-test" }
func (instantPresence) Do(ctx context.Context, r presence.Request, use func(context.Context) error) error {
	return use(ctx)
}

// BenchmarkReleaseInProcess is one release through brokerd's server on a real Unix socket and
// the real Secret Service, with presence answered instantly. Minus BenchmarkBaselineGetSecret
// it is brokerd's own overhead per release.
func BenchmarkReleaseInProcess(b *testing.B) {
	e := newEnv(b, envOptions{})
	ctx := context.Background()
	ss, err := vault.OpenSecretService(ctx, vault.SecretServiceOptions{Address: e.k.Addr})
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	if err := ss.Add(ctx, vault.Record{Origin: origin, Account: "bench@example.test", Alias: "bench"}, []byte("bench-password-1")); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	l, err := safesock.Listen(filepath.Join(dir, "broker.sock"))
	if err != nil {
		b.Fatal(err)
	}
	hello := brokerapi.HelloParams{Chromium: "/usr/lib/chromium/chromium", Config: "/bench/config.json", Version: "bench"}
	// A real audit log, as brokerd has: every release appends (and fsyncs) its record.
	alog, err := auditwriter.Open(auditwriter.Options{Path: filepath.Join(dir, "audit.jsonl")})
	if err != nil {
		b.Fatal(err)
	}
	defer alog.Close()
	// A trusted brokerd's key and state directory (a test key: brokerd's own is root's).
	key, err := seal.NewKey(bytes.Repeat([]byte{0x5a}, seal.KeyLen))
	if err != nil {
		b.Fatal(err)
	}
	paths, err := gate.OpenLoginPaths(b.TempDir(), os.Getuid())
	if err != nil {
		b.Fatal(err)
	}
	srv := &gate.Server{Vault: ss, Presence: instantPresence{}, Challenges: challenge.New(challenge.Options{}), PID: os.Getpid(), Audit: alog, Key: key, Paths: paths,
		// This process plays the genuine host: the release path runs the whole gate.
		Hosts: selfHost{}, Expect: gate.HostExpect{Chromium: hello.Chromium, Config: hello.Config, Version: hello.Version}}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { srv.Serve(sctx, l, os.Getuid()); close(done) }()
	defer func() { cancel(); <-done }()
	c, err := brokerapi.Dial(ctx, filepath.Join(dir, "broker.sock"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Call(ctx, brokerapi.MethodHostHello, hello, nil); err != nil {
		b.Fatal(err)
	}
	releaseLoop(b, c)
}

// selfHost is a host supervisor for which this test process is the genuine host.
type selfHost struct{}

func (selfHost) Start(context.Context, []string, []string) (hostproc.Result, error) {
	return hostproc.Result{}, nil
}
func (selfHost) Genuine(pid, _ int, _ time.Time) bool { return pid == os.Getpid() }
func (selfHost) Running() (int, string)               { return os.Getpid(), "/proc/self/exe" }

// releaseLoop times one release per iteration (the challenge it answers is issued untimed).
func releaseLoop(b *testing.B, c *brokerapi.Client) {
	ctx := context.Background()
	var s samples
	for i := 0; b.Loop(); i++ {
		doc := "doc-" + strconv.Itoa(i)
		ch, err := c.Challenge(ctx, brokerapi.ChallengeParams{Session: "bench", Document: doc, Origin: origin})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		_, secret, err := c.Release(ctx, brokerapi.ReleaseParams{Challenge: ch.Challenge, Alias: "bench", Session: "bench", Document: doc})
		s = append(s, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		credential.Zero(secret)
	}
	s.report(b)
}
