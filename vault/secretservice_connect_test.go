//go:build linux

package vault_test

import (
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/test/realtest"
	"github.com/headless-dev/headless/vault"
)

// connections is how many fresh connections TestSecretServiceManyConnections makes. With
// OpenSession as a connection's first call, gnome-keyring 42.1 aborted after 60 to 6,400 of
// them on a busy machine (2 CPUs, load 20-40; 14 runs of 14): see dialSecretService.
const connections = 3000

// TestSecretServiceManyConnections: thousands of fresh connections, four at a time, each one
// opening its session, listing and closing (as brokerd does when the keyring or the bus comes
// back, and as every test's brokerd does), leave gnome-keyring running and answering.
func TestSecretServiceManyConnections(t *testing.T) {
	k := realtest.StartKeyring(t, realtest.KeyringOptions{})
	sem := make(chan struct{}, 4)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := time.Now()
	n := 0
	for ; n < connections && k.Alive(); n++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx := testCtx(t, 30*time.Second)
			s, err := vault.OpenSecretService(ctx, vault.SecretServiceOptions{Address: k.Addr})
			if err == nil {
				_, err = s.List(ctx, "")
				s.Close()
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if !k.Alive() {
		t.Fatalf("gnome-keyring-daemon died after %d connections (the keyring harness prints its last words above)", n)
	}
	for i, err := range errs {
		if i == 3 {
			break
		}
		t.Errorf("connection: %v", err)
	}
	t.Logf("%d connections in %v", n, time.Since(start))
	s := openStore(t, k.Addr)
	if _, err := s.List(testCtx(t, 10*time.Second), ""); err != nil {
		t.Fatalf("a store opened after them: %v", err)
	}
}
