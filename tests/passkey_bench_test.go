//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// BenchmarkPasskeyLogin measures a passkey sign-in against a password sign-in of the same
// site: per iteration, one alias login with the passkey (visit /login + auth login: the host's
// virtual authenticator answers the site's WebAuthn ceremony, which go-webauthn verifies),
// then one with the password of the same account (visit /password + auth login: typed and
// submitted), each ending at the site's /account, in the same host and session, interleaved
// (the site is passkeySite, passkeysite_test.go). Reports the p50 of each (passkey-p50-ms,
// password-p50-ms) and errors (sign-ins that did not end authenticated at /account: must be 0).
func BenchmarkPasskeyLogin(b *testing.B) {
	e := newEnv(b, envOptions{})
	site := newPasskeySite(b)
	pw := newCanary()
	const pwAccount = "alice@example.test" // the form's field is type=email
	site.SetAccount(pwAccount, pw)
	person, personLog := presencetest.FakePinentry(b, "switch")
	w := &pkWorld{e: e, site: site, personLog: personLog}
	lsPresence(e, person, 30)
	mfaEnroll(b, e, site.Origin(), "rp-password", pwAccount, pw, "")
	if r := e.run("", "headless", "start", "--json"); r.code != 0 {
		b.Fatalf("start: %+v", r)
	}
	if r := w.enrol(b, "default"); r.code != 0 {
		b.Fatalf("enrol the passkey: %+v", r)
	}
	login := func(path, alias string) (time.Duration, error) {
		if r := e.run("", "headless", "visit", site.URL("/logout"), "--json"); r.code != 0 {
			return 0, fmt.Errorf("logout: %+v", r)
		}
		start := time.Now()
		if r := e.run("", "headless", "visit", site.URL(path), "--json"); r.code != 0 {
			return 0, fmt.Errorf("visit %s: %+v", path, r)
		}
		r := e.run("", "headless", "auth", "login", "--alias", alias, "--json")
		d := time.Since(start)
		var a lsAuth
		if err := json.Unmarshal([]byte(r.stdout), &a); r.code != 0 || err != nil || a.Status != "authenticated" || a.Evidence["url_after"] != site.URL("/account") {
			return d, fmt.Errorf("auth login %s: %+v", alias, r)
		}
		return d, nil
	}
	var passkey, password samples
	errs := 0
	for b.Loop() {
		for _, c := range []struct {
			path, alias string
			into        *samples
		}{{"/login", pkAlias, &passkey}, {"/password", "rp-password", &password}} {
			d, err := login(c.path, c.alias)
			if err != nil {
				errs++
				b.Log(err)
				continue
			}
			*c.into = append(*c.into, d)
		}
	}
	b.ReportMetric(float64(errs), "errors")
	passkey.reportAs(b, "passkey-")
	password.reportAs(b, "password-")
}
