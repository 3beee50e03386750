//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// BenchmarkTOTPStep measures what a TOTP code step adds to a sign-in: per iteration, one alias
// login (visit + auth login, verified authenticated) of an account whose site asks for a code
// after the password, then one of an account of the same site that it signs in after the
// password alone, in the same host and session (the site is mfaSite, totp_e2e_test.go). Reports
// the p50 of each (with-p50-ms, without-p50-ms) and errors (sign-ins that did not end
// authenticated with the code typed, or that typed one: must be 0); scripts/bench.sh reports
// their difference.
func BenchmarkTOTPStep(b *testing.B) {
	e := newEnv(b, envOptions{})
	site := newMFASite(b)
	key, seedB32 := newSeed(b)
	otpPW, plainPW := newCanary(), newCanary()
	site.SetAccount("otp@example.test", otpPW)
	site.SetAccount("plain@example.test", plainPW)
	site.mu.Lock()
	site.keys["otp@example.test"] = key
	site.mu.Unlock()
	program, _ := presencetest.FakePinentry(b, "approve")
	lsPresence(e, program, 30)
	mfaEnroll(b, e, site.URL, "otp", "otp@example.test", otpPW, "otpauth://totp/Example:otp@example.test?secret="+seedB32+"&issuer=Example", "--login-path", "/login", "--login-path", "/verify")
	mfaEnroll(b, e, site.URL, "plain", "plain@example.test", plainPW, "")
	if r := e.run("", "headless", "start", "--json"); r.code != 0 {
		b.Fatalf("start: %+v", r)
	}
	login := func(alias string, code bool) (time.Duration, error) {
		start := time.Now()
		r := e.run("", "headless", "visit", site.URL+"/login", "--json")
		var p pageJSON
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || p.AuthRequired == nil {
			return 0, fmt.Errorf("visit: no auth_required: %+v", r)
		}
		r = e.run("", "headless", "auth", "login", "--challenge", p.AuthRequired.Challenge, "--alias", alias, "--json")
		d := time.Since(start)
		var a lsAuth
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &a) != nil || a.Status != "authenticated" || (a.Evidence["code_typed"] == true) != code {
			return d, fmt.Errorf("auth login %s: %+v", alias, r)
		}
		if r := e.run("", "headless", "visit", site.URL+"/logout", "--json"); r.code != 0 {
			return d, fmt.Errorf("logout: %+v", r)
		}
		return d, nil
	}
	var with, without samples
	errs := 0
	for b.Loop() {
		for _, c := range []struct {
			alias string
			code  bool
			into  *samples
		}{{"otp", true, &with}, {"plain", false, &without}} {
			d, err := login(c.alias, c.code)
			if err != nil {
				errs++
				b.Log(err)
				continue
			}
			*c.into = append(*c.into, d)
		}
	}
	b.ReportMetric(float64(errs), "errors")
	with.reportAs(b, "with-")
	without.reportAs(b, "without-")
}
