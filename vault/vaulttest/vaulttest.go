// Package vaulttest is the shared conformance suite for vault.Store implementations. The same
// suite runs against vault.Memory and against the real Secret Service.
package vaulttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/credential"
	"github.com/headless-dev/headless/vault"
)

// Run runs the suite. newStore returns a store for one subtest; it may share state with the
// stores of other subtests (every subtest uses origins of its own), and it registers its own
// cleanup with t.
func Run(t *testing.T, newStore func(t *testing.T) vault.Store) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newStore(t)) })
	t.Run("Created", func(t *testing.T) { testCreated(t, newStore(t)) })
	t.Run("ListExactOrigin", func(t *testing.T) { testListExactOrigin(t, newStore(t)) })
	t.Run("ListAllSorted", func(t *testing.T) { testListAllSorted(t, newStore(t)) })
	t.Run("AliasUniqueCaseInsensitive", func(t *testing.T) { testAliasUnique(t, newStore(t)) })
	t.Run("CaseInsensitiveLookup", func(t *testing.T) { testCaseInsensitiveLookup(t, newStore(t)) })
	t.Run("UnknownAlias", func(t *testing.T) { testUnknownAlias(t, newStore(t)) })
	t.Run("Invalid", func(t *testing.T) { testInvalid(t, newStore(t)) })
	t.Run("OwnCopy", func(t *testing.T) { testOwnCopy(t, newStore(t)) })
	t.Run("NonASCII", func(t *testing.T) { testNonASCII(t, newStore(t)) })
	t.Run("MaxSecretLen", func(t *testing.T) { testMaxSecretLen(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newStore(t)) })
	t.Run("SecondFactor", func(t *testing.T) { testSecondFactor(t, newStore(t)) })
	t.Run("Replace", func(t *testing.T) { testReplace(t, newStore(t)) })
}

// testReplace: Replace swaps a record's secret and keeps the record (account, alias, creation
// time); it refuses an unknown alias and a secret whose second factor differs.
func testReplace(t *testing.T, s vault.Store) {
	o := origin(t)
	mustAdd(t, s, vault.Record{Origin: o, Account: "acct", Alias: "Swap"}, "old-secret")
	before, _ := s.List(ctx(t), o)
	if err := s.Replace(ctx(t), o, "swap", []byte("new-secret")); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	rec, got, err := s.Secret(ctx(t), o, "Swap")
	if err != nil || string(got) != "new-secret" || rec.Account != "acct" || rec.Alias != "Swap" {
		t.Fatalf("after Replace: %+v %q %v", rec, got, err)
	}
	after, _ := s.List(ctx(t), o)
	if len(before) != 1 || len(after) != 1 || !after[0].Created.Equal(before[0].Created) {
		t.Fatalf("Replace changed the record: %+v -> %+v", before, after)
	}
	if err := s.Replace(ctx(t), o, "nobody", []byte("x")); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Fatalf("Replace(unknown) = %v; want ErrAliasUnknown", err)
	}
	withFactor := credential.JoinFactor([]byte("pw"), []byte("totp1:SHA1:6:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"))
	if err := s.Replace(ctx(t), o, "swap", withFactor); err == nil {
		t.Fatal("Replace gave a password-only record a second factor")
	}
	if _, got, _ := s.Secret(ctx(t), o, "swap"); string(got) != "new-secret" {
		t.Fatalf("a refused Replace changed the secret: %q", got)
	}
}

// testSecondFactor: a TOTP seed stored with the password comes back with it from Secret, and
// List says only that it exists; a malformed second factor is refused.
func testSecondFactor(t *testing.T, s vault.Store) {
	o := origin(t)
	const factor = "totp1:SHA1:6:30:GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	stored := credential.JoinFactor([]byte("pw-with-factor"), []byte(factor))
	if err := s.Add(ctx(t), vault.Record{Origin: o, Account: "a", Alias: "otp"}, stored); err != nil {
		t.Fatalf("Add: %v", err)
	}
	mustAdd(t, s, vault.Record{Origin: o, Account: "a", Alias: "plain"}, "pw")
	recs, err := s.List(ctx(t), o)
	if err != nil || len(recs) != 2 {
		t.Fatalf("List: %v %v", recs, err)
	}
	for _, r := range recs {
		if r.TOTP != (r.Alias == "otp") {
			t.Errorf("List: %s has TOTP=%v", r.Alias, r.TOTP)
		}
		if strings.Contains(fmt.Sprintf("%+v", r), "GEZD") {
			t.Errorf("List carries the seed: %+v", r)
		}
	}
	rec, got, err := s.Secret(ctx(t), o, "otp")
	if err != nil {
		t.Fatalf("Secret: %v", err)
	}
	defer credential.Zero(got)
	pw, f := credential.SplitFactor(got)
	if string(pw) != "pw-with-factor" || string(f) != factor || !rec.TOTP {
		t.Fatalf("Secret: record %+v, password/factor not as stored", rec)
	}
	for _, bad := range [][]byte{
		credential.JoinFactor([]byte("pw"), []byte("hotp1:x")),
		credential.JoinFactor([]byte("pw"), []byte("totp1:")),
		credential.JoinFactor([]byte("pw"), []byte("totp1:a b")),
		credential.JoinFactor([]byte("pw"), bytes.Repeat([]byte("A"), credential.MaxFactorLen+1)),
		credential.JoinFactor(nil, []byte(factor)),
	} {
		if err := s.Add(ctx(t), vault.Record{Origin: o, Account: "a", Alias: "bad"}, bad); !errors.Is(err, credential.ErrInvalid) {
			t.Errorf("Add of a malformed second factor: %v", err)
		}
	}
}

// uniq returns a random label so subtests sharing a store never collide.
func uniq(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// origin returns an https origin unique to this call.
func origin(t *testing.T) string { return "https://" + uniq(t) + ".test" }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustAdd(t *testing.T, s vault.Store, rec vault.Record, secret string) {
	t.Helper()
	if err := s.Add(ctx(t), rec, []byte(secret)); err != nil {
		t.Fatalf("Add(%s, %s): %v", rec.Origin, rec.Alias, err)
	}
}

func mustSecret(t *testing.T, s vault.Store, origin, alias string) (vault.Record, []byte) {
	t.Helper()
	rec, secret, err := s.Secret(ctx(t), origin, alias)
	if err != nil {
		t.Fatalf("Secret(%s, %s): %v", origin, alias, err)
	}
	return rec, secret
}

func mustList(t *testing.T, s vault.Store, origin string) []vault.Record {
	t.Helper()
	recs, err := s.List(ctx(t), origin)
	if err != nil {
		t.Fatalf("List(%q): %v", origin, err)
	}
	return recs
}

// keys returns "origin alias account" per record, for comparisons that ignore Created.
func keys(recs []vault.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Origin + " " + r.Alias + " " + r.Account
	}
	return out
}

func testRoundTrip(t *testing.T, s vault.Store) {
	o := origin(t)
	mustAdd(t, s, vault.Record{Origin: o, Account: "alice@example.com", Alias: "work"}, "hunter2")
	mustAdd(t, s, vault.Record{Origin: o, Account: "bob", Alias: "home"}, "swordfish")

	got := keys(mustList(t, s, o))
	want := []string{o + " home bob", o + " work alice@example.com"}
	if !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	rec, secret := mustSecret(t, s, o, "work")
	if string(secret) != "hunter2" {
		t.Fatalf("Secret(work) returned the wrong password (%d bytes)", len(secret))
	}
	if rec.Origin != o || rec.Account != "alice@example.com" || rec.Alias != "work" {
		t.Fatalf("Secret(work) record = %+v", rec)
	}
	credential.Zero(secret)

	if err := s.Remove(ctx(t), o, "work"); err != nil {
		t.Fatalf("Remove(work): %v", err)
	}
	if got := keys(mustList(t, s, o)); !slices.Equal(got, []string{o + " home bob"}) {
		t.Fatalf("List after Remove = %q", got)
	}
	if _, _, err := s.Secret(ctx(t), o, "work"); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Fatalf("Secret after Remove: err = %v, want ErrAliasUnknown", err)
	}
	if err := s.Remove(ctx(t), o, "work"); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Fatalf("second Remove: err = %v, want ErrAliasUnknown", err)
	}
	// The alias is free again.
	mustAdd(t, s, vault.Record{Origin: o, Account: "carol", Alias: "work"}, "new")
	_, secret = mustSecret(t, s, o, "work")
	if string(secret) != "new" {
		t.Fatal("re-added alias returned the old password")
	}
}

func testCreated(t *testing.T, s vault.Store) {
	o := origin(t)
	before := time.Now()
	mustAdd(t, s, vault.Record{Origin: o, Account: "a", Alias: "x", Created: time.Unix(1, 0)}, "pw")
	after := time.Now()
	check := func(where string, c time.Time) {
		t.Helper()
		// Stores may keep whole seconds.
		if c.IsZero() || c.Before(before.Truncate(time.Second).Add(-time.Second)) || c.After(after.Add(time.Second)) {
			t.Fatalf("%s: Created = %v, want between %v and %v", where, c, before, after)
		}
	}
	recs := mustList(t, s, o)
	if len(recs) != 1 {
		t.Fatalf("List = %+v", recs)
	}
	check("List", recs[0].Created)
	rec, secret := mustSecret(t, s, o, "x")
	credential.Zero(secret)
	check("Secret", rec.Created)
	if !rec.Created.Equal(recs[0].Created) {
		t.Fatalf("Secret Created %v != List Created %v", rec.Created, recs[0].Created)
	}
}

func testListExactOrigin(t *testing.T, s vault.Store) {
	u := uniq(t)
	a := "https://a-" + u + ".test"
	aPort := a + ":8443"
	aHTTP := "http://a-" + u + ".test"
	local := "http://localhost-" + u + ":8080"
	for i, o := range []string{a, aPort, aHTTP, local} {
		mustAdd(t, s, vault.Record{Origin: o, Account: "acct", Alias: fmt.Sprintf("k%d", i)}, "pw")
	}
	for i, o := range []string{a, aPort, aHTTP, local} {
		got := keys(mustList(t, s, o))
		want := []string{fmt.Sprintf("%s k%d acct", o, i)}
		if !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", o, got, want)
		}
	}
	for _, o := range []string{"https://a-" + u + ".test/", "https://A-" + u + ".test", "https://a-" + u + ".tes", "a-" + u + ".test"} {
		if got := mustList(t, s, o); len(got) != 0 {
			t.Errorf("List(%q) = %+v, want nothing (origin match must be exact)", o, got)
		}
		if _, _, err := s.Secret(ctx(t), o, "k0"); !errors.Is(err, vault.ErrAliasUnknown) {
			t.Errorf("Secret(%q, k0): err = %v, want ErrAliasUnknown", o, err)
		}
	}
}

func testListAllSorted(t *testing.T, s vault.Store) {
	u := uniq(t)
	o1, o2 := "https://b-"+u+".test", "https://a-"+u+".test"
	mustAdd(t, s, vault.Record{Origin: o1, Account: "x", Alias: "Zed"}, "pw")
	mustAdd(t, s, vault.Record{Origin: o1, Account: "x", Alias: "alpha"}, "pw")
	mustAdd(t, s, vault.Record{Origin: o2, Account: "x", Alias: "mid"}, "pw")
	all := mustList(t, s, "")
	if !slices.IsSortedFunc(all, func(a, b vault.Record) int {
		if c := strings.Compare(a.Origin, b.Origin); c != 0 {
			return c
		}
		return strings.Compare(strings.ToLower(a.Alias), strings.ToLower(b.Alias))
	}) {
		t.Fatalf("List(\"\") is not sorted by origin then alias: %q", keys(all))
	}
	var ours []string
	for _, k := range keys(all) {
		if strings.Contains(k, u) {
			ours = append(ours, k)
		}
	}
	want := []string{o2 + " mid x", o1 + " alpha x", o1 + " Zed x"}
	if !slices.Equal(ours, want) {
		t.Fatalf("List(\"\") holds %q of ours, want %q", ours, want)
	}
	if len(all) > vault.MaxList {
		t.Fatalf("List returned %d records, more than MaxList", len(all))
	}
}

func testAliasUnique(t *testing.T, s vault.Store) {
	o := origin(t)
	mustAdd(t, s, vault.Record{Origin: o, Account: "a", Alias: "Work"}, "first")
	for _, alias := range []string{"Work", "work", "WORK", "wOrK"} {
		err := s.Add(ctx(t), vault.Record{Origin: o, Account: "b", Alias: alias}, []byte("second"))
		if !errors.Is(err, vault.ErrAliasExists) {
			t.Errorf("Add(%s) over Work: err = %v, want ErrAliasExists", alias, err)
		}
	}
	// The same alias at another origin is a different record.
	o2 := origin(t)
	mustAdd(t, s, vault.Record{Origin: o2, Account: "b", Alias: "work"}, "other")
	_, secret := mustSecret(t, s, o, "work")
	if string(secret) != "first" {
		t.Fatal("a rejected Add changed the stored password")
	}
	if n := len(mustList(t, s, o)); n != 1 {
		t.Fatalf("List(o) has %d records, want 1", n)
	}
}

func testCaseInsensitiveLookup(t *testing.T, s vault.Store) {
	o := origin(t)
	mustAdd(t, s, vault.Record{Origin: o, Account: "a", Alias: "MyBank"}, "pw1")
	rec, secret := mustSecret(t, s, o, "mybank")
	if string(secret) != "pw1" || rec.Alias != "MyBank" {
		t.Fatalf("Secret(mybank) = %+v (stored alias must be kept)", rec)
	}
	if err := s.Remove(ctx(t), o, "MYBANK"); err != nil {
		t.Fatalf("Remove(MYBANK): %v", err)
	}
	if got := mustList(t, s, o); len(got) != 0 {
		t.Fatalf("List after Remove = %+v", got)
	}
}

func testUnknownAlias(t *testing.T, s vault.Store) {
	o := origin(t)
	if _, _, err := s.Secret(ctx(t), o, "nope"); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Errorf("Secret(unknown): err = %v, want ErrAliasUnknown", err)
	}
	if err := s.Remove(ctx(t), o, "nope"); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Errorf("Remove(unknown): err = %v, want ErrAliasUnknown", err)
	}
	mustAdd(t, s, vault.Record{Origin: o, Account: "a", Alias: "yes"}, "pw")
	if _, _, err := s.Secret(ctx(t), o, "yes2"); !errors.Is(err, vault.ErrAliasUnknown) {
		t.Errorf("Secret(yes2): err = %v, want ErrAliasUnknown", err)
	}
	if got := mustList(t, s, origin(t)); len(got) != 0 {
		t.Errorf("List(fresh origin) = %+v, want empty", got)
	}
}

func testInvalid(t *testing.T, s vault.Store) {
	o := origin(t)
	good := vault.Record{Origin: o, Account: "acct", Alias: "ok"}
	cases := []struct {
		name   string
		rec    vault.Record
		secret []byte
	}{
		{"empty alias", vault.Record{Origin: o, Account: "a", Alias: ""}, []byte("pw")},
		{"alias with space", vault.Record{Origin: o, Account: "a", Alias: "a b"}, []byte("pw")},
		{"alias starting with dash", vault.Record{Origin: o, Account: "a", Alias: "-a"}, []byte("pw")},
		{"alias non-ASCII", vault.Record{Origin: o, Account: "a", Alias: "bänk"}, []byte("pw")},
		{"alias too long", vault.Record{Origin: o, Account: "a", Alias: strings.Repeat("a", credential.MaxAliasLen+1)}, []byte("pw")},
		{"account with newline", vault.Record{Origin: o, Account: "a\nb", Alias: "a"}, []byte("pw")},
		{"account not UTF-8", vault.Record{Origin: o, Account: "a\xffb", Alias: "a"}, []byte("pw")},
		{"account too long", vault.Record{Origin: o, Account: strings.Repeat("a", credential.MaxAccountLen+1), Alias: "a"}, []byte("pw")},
		{"empty origin", vault.Record{Origin: "", Account: "a", Alias: "a"}, []byte("pw")},
		{"empty secret", good, []byte{}},
		{"nil secret", good, nil},
		{"secret with NUL", good, []byte("pw\x00x")},
		{"secret not UTF-8", good, []byte("\x01\x7f\xff\xfe not UTF-8")},
		{"secret too long", good, bytes.Repeat([]byte("x"), credential.MaxSecretLen+1)},
	}
	for _, c := range cases {
		if err := s.Add(ctx(t), c.rec, c.secret); !errors.Is(err, credential.ErrInvalid) {
			t.Errorf("Add(%s): err = %v, want ErrInvalid", c.name, err)
		} else if c.secret != nil && len(c.secret) > 0 && strings.Contains(err.Error(), string(c.secret)) {
			t.Errorf("Add(%s): error quotes the secret", c.name)
		}
	}
	for _, alias := range []string{"", "a b", "-a"} {
		if _, _, err := s.Secret(ctx(t), o, alias); !errors.Is(err, credential.ErrInvalid) {
			t.Errorf("Secret(%q): err = %v, want ErrInvalid", alias, err)
		}
		if err := s.Remove(ctx(t), o, alias); !errors.Is(err, credential.ErrInvalid) {
			t.Errorf("Remove(%q): err = %v, want ErrInvalid", alias, err)
		}
	}
	if _, _, err := s.Secret(ctx(t), "", "ok"); !errors.Is(err, credential.ErrInvalid) {
		t.Errorf("Secret(empty origin): err = %v, want ErrInvalid", err)
	}
	if got := mustList(t, s, o); len(got) != 0 {
		t.Fatalf("invalid Adds stored %+v", got)
	}
	// No account is valid: a credential of a sign-in that asks for a password alone.
	if err := s.Add(ctx(t), vault.Record{Origin: o, Account: "", Alias: "password-only"}, []byte("pw")); err != nil {
		t.Fatalf("Add(no account): %v", err)
	}
	if got := mustList(t, s, o); len(got) != 1 || got[0].Account != "" || got[0].Alias != "password-only" {
		t.Fatalf("the credential without an account lists as %+v", got)
	}
}

func testOwnCopy(t *testing.T, s vault.Store) {
	o := origin(t)
	secret := []byte("correct horse battery staple")
	if err := s.Add(ctx(t), vault.Record{Origin: o, Account: "a", Alias: "copy"}, secret); err != nil {
		t.Fatal(err)
	}
	if string(secret) != "correct horse battery staple" {
		t.Fatal("Add modified the caller's slice")
	}
	credential.Zero(secret)
	_, got := mustSecret(t, s, o, "copy")
	if string(got) != "correct horse battery staple" {
		t.Fatal("zeroing the caller's slice after Add changed the stored password")
	}
	for i := range got {
		got[i] = 'X'
	}
	_, again := mustSecret(t, s, o, "copy")
	if string(again) != "correct horse battery staple" {
		t.Fatal("mutating a returned secret changed the stored password")
	}
	if len(again) > 0 && len(got) > 0 && &again[0] == &got[0] {
		t.Fatal("Secret returned the same backing array twice")
	}
}

func testNonASCII(t *testing.T, s vault.Store) {
	o := origin(t)
	for i, pw := range []string{
		"pä ss€wörd!\"$\\'`",
		"日本語のパスワード🔑",
		" leading and trailing spaces ",
		"tab\tand\nnewline\r\n",
		"\x01\x7f controls",
	} {
		alias := fmt.Sprintf("u%d", i)
		acct := "José Ñúñez " + alias
		mustAdd(t, s, vault.Record{Origin: o, Account: acct, Alias: alias}, pw)
		rec, got := mustSecret(t, s, o, alias)
		if !bytes.Equal(got, []byte(pw)) {
			t.Errorf("password %d did not round-trip (%d bytes, want %d)", i, len(got), len(pw))
		}
		if rec.Account != acct {
			t.Errorf("account %q did not round-trip: %q", acct, rec.Account)
		}
		credential.Zero(got)
	}
}

func testMaxSecretLen(t *testing.T, s vault.Store) {
	o := origin(t)
	for _, n := range []int{1, 15, 16, 17, credential.MaxSecretLen - 1, credential.MaxSecretLen} {
		pw := make([]byte, n)
		for i := range pw {
			pw[i] = byte('!' + (i*7+n)%90)
		}
		alias := fmt.Sprintf("len%d", n)
		if err := s.Add(ctx(t), vault.Record{Origin: o, Account: "a", Alias: alias}, pw); err != nil {
			t.Fatalf("Add(%d bytes): %v", n, err)
		}
		_, got := mustSecret(t, s, o, alias)
		if !bytes.Equal(got, pw) {
			t.Fatalf("%d-byte password did not round-trip (got %d bytes)", n, len(got))
		}
	}
	err := s.Add(ctx(t), vault.Record{Origin: o, Account: "a", Alias: "over"}, bytes.Repeat([]byte("y"), credential.MaxSecretLen+1))
	if !errors.Is(err, credential.ErrInvalid) {
		t.Fatalf("Add(MaxSecretLen+1): err = %v, want ErrInvalid", err)
	}
}

func testConcurrent(t *testing.T, s vault.Store) {
	o := origin(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			alias := fmt.Sprintf("c%02d", i)
			pw := []byte("pw-" + alias)
			if err := s.Add(ctx(t), vault.Record{Origin: o, Account: "a", Alias: alias}, pw); err != nil {
				errs <- fmt.Errorf("Add(%s): %w", alias, err)
				return
			}
			_, got, err := s.Secret(ctx(t), o, alias)
			if err != nil {
				errs <- fmt.Errorf("Secret(%s): %w", alias, err)
				return
			}
			if string(got) != "pw-"+alias {
				errs <- fmt.Errorf("Secret(%s): wrong password", alias)
			}
			if _, err := s.List(ctx(t), o); err != nil {
				errs <- fmt.Errorf("List: %w", err)
			}
		}()
	}
	// Racing Adds of one alias: exactly one wins.
	var wins sync.WaitGroup
	won := make(chan struct{}, 4)
	for range 4 {
		wins.Add(1)
		go func() {
			defer wins.Done()
			err := s.Add(ctx(t), vault.Record{Origin: o, Account: "a", Alias: "Same"}, []byte("pw"))
			switch {
			case err == nil:
				won <- struct{}{}
			case !errors.Is(err, vault.ErrAliasExists):
				errs <- fmt.Errorf("racing Add(Same): %w", err)
			}
		}()
	}
	wg.Wait()
	wins.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(won) != 1 {
		t.Errorf("%d racing Adds of one alias succeeded, want 1", len(won))
	}
	if got := mustList(t, s, o); len(got) != n+1 {
		t.Errorf("List after concurrent Adds has %d records, want %d", len(got), n+1)
	}
}
