//go:build linux

package tests

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
	"github.com/headless-dev/headless/internal/brokerapi"
)

// Load on broker.sock: what a normal client (the CLI, the host between sign-ins) asks brokerd
// without a person — version (headless status), credentials.list and challenge.issue, in
// turn — against the real brokerd, its real Secret Service and audit log.

// loadRequests is one round of the load: 10,000 requests.
const loadRequests = 10000

// brokerLoad sends total requests spread over conns concurrent connections to the brokerd at
// sock, each connection one request at a time, and returns every request's latency and every
// error.
func brokerLoad(sock string, conns, total int) (samples, []error) {
	ctx := context.Background()
	var (
		mu   sync.Mutex
		all  samples
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for k := 0; k < conns; k++ {
		n := total / conns
		if k < total%conns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := brokerapi.Dial(ctx, sock)
			if err != nil {
				fail(fmt.Errorf("connection %d: %w", k, err))
				return
			}
			defer c.Close()
			mine := make(samples, 0, n)
			for i := 0; i < n; i++ {
				start := time.Now()
				switch i % 3 {
				case 0:
					_, err = c.Version(ctx)
				case 1:
					_, err = c.List(ctx, "")
				case 2:
					_, err = c.Challenge(ctx, brokerapi.ChallengeParams{Session: "load", Document: fmt.Sprintf("d-%d-%d", k, i), Origin: origin})
				}
				mine = append(mine, time.Since(start))
				if err != nil {
					fail(fmt.Errorf("connection %d request %d: %w", k, i, err))
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, errs
}

// pct is the p-th percentile (0 < p ≤ 1) in milliseconds.
func (s samples) pct(p float64) float64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return float64(c[int(p*float64(len(c)-1))].Microseconds()) / 1000
}

// loadBroker starts a real brokerd with one saved credential (so every list and challenge
// finds it) for the load.
func loadBroker(t testing.TB) (e *env, pid int) {
	e = newEnv(t, envOptions{})
	program, _ := presencetest.FakePinentry(t, "approve")
	e.pinentryConfig(program)
	if p := e.startBrokerd(); p == nil {
		t.Fatal("brokerd did not start")
	}
	c, err := brokerapi.Dial(context.Background(), e.sockPath())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Add(context.Background(), origin, "load@example.test", "load", []byte("load-password-1")); err != nil {
		t.Fatal(err)
	}
	return e, e.brokerPID()
}

// TestBrokerLoad: 10,000 requests over 64 concurrent connections to the real brokerd, with 0
// errors (no BUSY, no dropped connection), brokerd's RSS growing by a bounded amount, and
// every connection's socket released after. Latency is reported (BenchmarkBrokerLoad has the
// figures), never asserted.
func TestBrokerLoad(t *testing.T) {
	e, pid := loadBroker(t)
	sock := e.sockPath()
	ends0 := serverEnds(t, sock)
	rss0 := rssKB(t, pid)
	s, errs := brokerLoad(sock, 64, loadRequests)
	for i, err := range errs {
		if i == 5 {
			t.Errorf("… and %d more errors", len(errs)-5)
			break
		}
		t.Errorf("load: %v", err)
	}
	if len(s) != loadRequests {
		t.Errorf("%d requests made, want %d", len(s), loadRequests)
	}
	rss1 := rssKB(t, pid)
	t.Logf("10,000 requests over 64 connections: %d errors, p50 %.3f ms, p99 %.3f ms; brokerd RSS %d kB before, %d kB after",
		len(errs), s.pct(0.50), s.pct(0.99), rss0, rss1)
	if rss1 > rss0+64*1024 {
		t.Errorf("brokerd RSS grew from %d to %d kB", rss0, rss1)
	}
	if !pollUntil(10*time.Second, func() bool { return serverEnds(t, sock) <= ends0 }) {
		t.Errorf("brokerd holds %d sockets after the load, %d before", serverEnds(t, sock), ends0)
	}
	if e.brokerPID() != pid || !procAlive(pid) {
		t.Fatalf("brokerd restarted: pid %d, then %d", pid, e.brokerPID())
	}
}

// BenchmarkBrokerLoad is one round of 10,000 requests per iteration over 64 concurrent
// connections, and the same round over 1 connection (the same-run baseline: the latency of an
// unloaded brokerd): p50-ms and p99-ms per request, requests/s, errors (must be 0) and
// brokerd's RSS after the rounds.
func BenchmarkBrokerLoad(b *testing.B) {
	for _, conns := range []int{1, 64} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			e, pid := loadBroker(b)
			var all samples
			nerr := 0
			var busy time.Duration
			for b.Loop() {
				start := time.Now()
				s, errs := brokerLoad(e.sockPath(), conns, loadRequests)
				busy += time.Since(start)
				all = append(all, s...)
				nerr += len(errs)
				for i, err := range errs {
					if i < 3 {
						b.Log(err)
					}
				}
			}
			all.report(b)
			b.ReportMetric(float64(nerr), "errors")
			b.ReportMetric(float64(len(all))/busy.Seconds(), "requests/s")
			b.ReportMetric(float64(rssKB(b, pid))/1024, "rss-MB")
		})
	}
}
