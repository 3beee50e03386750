package vault_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/headless-dev/headless/vault"
	"github.com/headless-dev/headless/vault/vaulttest"
)

func TestMemory(t *testing.T) {
	vaulttest.Run(t, func(t *testing.T) vault.Store {
		m := vault.NewMemory(vault.MemoryOptions{})
		t.Cleanup(m.Wipe)
		return m
	})
}

func TestMemoryFull(t *testing.T) {
	ctx := context.Background()
	m := vault.NewMemory(vault.MemoryOptions{MaxRecords: 3})
	for i := range 3 {
		if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: fmt.Sprintf("a%d", i)}, []byte("pw")); err != nil {
			t.Fatal(err)
		}
	}
	err := m.Add(ctx, vault.Record{Origin: "https://b.test", Account: "a", Alias: "b"}, []byte("pw"))
	if !errors.Is(err, vault.ErrFull) {
		t.Fatalf("Add beyond MaxRecords: err = %v, want ErrFull", err)
	}
	// A duplicate is reported as such even when full.
	err = m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: "A0"}, []byte("pw"))
	if !errors.Is(err, vault.ErrAliasExists) {
		t.Fatalf("duplicate Add when full: err = %v, want ErrAliasExists", err)
	}
	if err := m.Remove(ctx, "https://a.test", "a1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(ctx, vault.Record{Origin: "https://b.test", Account: "a", Alias: "b"}, []byte("pw")); err != nil {
		t.Fatalf("Add after Remove freed a slot: %v", err)
	}
}

func TestMemoryDefaultMax(t *testing.T) {
	ctx := context.Background()
	m := vault.NewMemory(vault.MemoryOptions{})
	for i := range 64 {
		if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: fmt.Sprintf("a%d", i)}, []byte("pw")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: "last"}, []byte("pw")); !errors.Is(err, vault.ErrFull) {
		t.Fatalf("65th Add: err = %v, want ErrFull", err)
	}
}

func TestMemoryNow(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	m := vault.NewMemory(vault.MemoryOptions{Now: func() time.Time { return at }})
	ctx := context.Background()
	if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: "x"}, []byte("pw")); err != nil {
		t.Fatal(err)
	}
	recs, _ := m.List(ctx, "")
	if len(recs) != 1 || !recs[0].Created.Equal(at) {
		t.Fatalf("List = %+v, want Created %v", recs, at)
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func TestMemoryWipeZeroes(t *testing.T) {
	ctx := context.Background()
	m := vault.NewMemory(vault.MemoryOptions{})
	for i := range 5 {
		if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: fmt.Sprintf("a%d", i)}, []byte("secret-password")); err != nil {
			t.Fatal(err)
		}
	}
	held := vault.MemorySecretsForTest(m)
	if len(held) != 5 {
		t.Fatalf("hook saw %d secrets", len(held))
	}
	for _, b := range held {
		if allZero(b) {
			t.Fatal("secret zero before Wipe")
		}
	}
	m.Wipe()
	for _, b := range held {
		if !allZero(b) {
			t.Fatalf("Wipe left %d non-zero bytes behind", len(b))
		}
	}
	if recs, _ := m.List(ctx, ""); len(recs) != 0 {
		t.Fatalf("List after Wipe = %+v", recs)
	}
	if _, _, err := m.Secret(ctx, "https://a.test", "a0"); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Fatalf("Secret after Wipe: err = %v", err)
	}
	// Usable again.
	if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: "a0"}, []byte("pw")); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryRemoveZeroes(t *testing.T) {
	ctx := context.Background()
	m := vault.NewMemory(vault.MemoryOptions{})
	if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: "x"}, []byte("secret-password")); err != nil {
		t.Fatal(err)
	}
	held := vault.MemorySecretsForTest(m)
	if err := m.Remove(ctx, "https://a.test", "X"); err != nil {
		t.Fatal(err)
	}
	if !allZero(held[0]) {
		t.Fatal("Remove did not zero the secret")
	}
}

func TestMemoryContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := vault.NewMemory(vault.MemoryOptions{})
	if err := m.Add(ctx, vault.Record{Origin: "https://a.test", Account: "a", Alias: "x"}, []byte("pw")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with cancelled ctx: %v", err)
	}
}
