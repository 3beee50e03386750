package vault_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/headless-dev/headless/vault"
	"github.com/headless-dev/headless/vault/vaulttest"
)

// The darwin Keychain is kvStore over go-keyring; its logic runs here over a map.
func TestKVStore(t *testing.T) {
	vaulttest.Run(t, func(t *testing.T) vault.Store {
		return vault.NewKVStoreForTest(&vault.MapKV{}, nil)
	})
}

func TestKVStoreIndexChunks(t *testing.T) {
	ctx := context.Background()
	kv := &vault.MapKV{}
	s := vault.NewKVStoreForTest(kv, nil)
	const n = 60 // index JSON well over one chunk
	for i := range n {
		rec := vault.Record{Origin: fmt.Sprintf("https://site-%02d.example.test", i), Account: strings.Repeat("a", 40), Alias: fmt.Sprintf("alias-%02d", i)}
		if err := s.Add(ctx, rec, []byte("pw")); err != nil {
			t.Fatal(err)
		}
	}
	chunks := 0
	for k, v := range kv.Items() {
		if k[0] == "headless" {
			chunks++
		}
		if k[0] == "headless" && strings.Contains(v, "pw") && !strings.Contains(v, "https") {
			t.Fatal("index holds a password")
		}
	}
	if chunks < 2 {
		t.Fatalf("index in %d items, want several", chunks)
	}
	// A fresh store on the same backend sees everything.
	recs, err := vault.NewKVStoreForTest(kv, nil).List(ctx, "")
	if err != nil || len(recs) != n {
		t.Fatalf("List = %d records, %v", len(recs), err)
	}
	// Shrinking drops stale chunks.
	for i := range n - 1 {
		if err := s.Remove(ctx, fmt.Sprintf("https://site-%02d.example.test", i), fmt.Sprintf("ALIAS-%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	left := 0
	for k := range kv.Items() {
		left++
		_ = k
	}
	if left != 2 { // one index item + one secret
		t.Fatalf("%d items left, want 2: %v", left, kv.Items())
	}
}

func TestKVStoreUnavailable(t *testing.T) {
	ctx := context.Background()
	kv := &vault.MapKV{}
	s := vault.NewKVStoreForTest(kv, nil)
	if err := s.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: "x"}, []byte("pw")); err != nil {
		t.Fatal(err)
	}
	kv.Fail = errors.New("security: exit status 51")
	if _, err := s.List(ctx, ""); !errors.Is(err, vault.ErrUnavailable) {
		t.Fatalf("List: %v", err)
	}
	if _, _, err := s.Secret(ctx, "https://a.test", "x"); !errors.Is(err, vault.ErrUnavailable) {
		t.Fatalf("Secret: %v", err)
	}
}
