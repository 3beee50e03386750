//go:build linux

package tests

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// passkeySite is a WebAuthn relying party (go-webauthn) with one user, alice, for the passkey
// tests. It is served on http://localhost:PORT (RP ID "localhost"; http://localhost is a secure
// context, so the page may call navigator.credentials), and a second small server on
// http://partner.localhost:PORT2 plays another origin: a subdomain, which WebAuthn lets claim
// its parent's RP ID ("localhost"), the passkey's.
//
// RP server (origin Origin(), http://localhost:PORT):
//
//	GET  /register         "Create a passkey" button: POST /register/begin, create(), POST
//	                       /register/finish, then "Passkey registered" (or "Registration failed: NAME",
//	                       also reported to POST /register/failed)
//	POST /register/begin   BeginRegistration for alice: resident key and user verification required
//	POST /register/finish  FinishRegistration (CreateCredential): the credential is kept in memory
//	GET  /login            "Sign in with a passkey" button: POST /login/begin, get() (timeout 5000 ms),
//	                       POST /login/finish, then to /account; on failure "Sign-in refused: NAME",
//	                       reported to POST /login/refused (a refusal)
//	POST /login/begin      BeginDiscoverableLogin, user verification required
//	POST /login/finish     FinishPasskeyLogin (the user by user handle: alice): a session cookie
//	                       (pk_sid); the authenticator's sign count is recorded and the stored
//	                       credential updated; a refused assertion is a refusal
//	GET  /account          "Signed in as alice" with a valid session cookie, else 303 /login
//	GET  /logout           ends the session, 303 /login
//	GET  /password         a password sign-in form of the same site (POST /password: the account
//	                       and password SetAccount set, then 303 /account), the bench's baseline
//	GET  /login-framed     /login with that same iframe below it
//
// Other server (OtherOrigin(), http://partner.localhost:PORT2):
//
//	GET  /frame            from load, for 20 s: navigator.credentials.get with rpId "localhost"
//	                       (its parent's, the passkey's) and allowCredentials = the registered
//	                       credential's id, asked again every 150 ms (a request cannot see an
//	                       authenticator added after it began); the first "ok", else the last
//	                       error's name, goes to POST /xorigin/result
//	POST /xorigin/result   recorded (XOriginResults)
//
// Every request body the site receives is kept (Bodies), for the leak sweep.
type passkeySite struct {
	siteBook    // cookie pk_sid; mu guards the fields below too
	rp          *httptest.Server
	other       *httptest.Server
	otherOrigin string
	origin      string // http://localhost:PORT
	wa          *webauthn.WebAuthn

	user        pkUser
	ceremonies  map[string]webauthn.SessionData // challenge → the ceremony's session data
	signCounts  []uint32                        // each successful sign-in's counter, as the authenticator reported it
	clones      int                             // sign-ins with a clone warning
	refusals    []string                        // each refused sign-in: the error's name
	regFailures []string                        // each failed registration (page side): the error's name
	xorigin     []string                        // outcomes reported by the other origin's frame
	frameLoads  int                             // GET /frame
	bodies      [][]byte                        // every request body received (both servers)
	errs        []string                        // why the site refused something, for the test's log
	// greedy, when > 0, makes /login the agent's own page (published at the credential's
	// sign-in path): its passkey button asks for that many assertions in a row, after POST
	// /signal?what=stop, then POST /signal?what=cont; onSignal gets each.
	greedy   int
	onSignal func(what string)
	// frameOnClick makes /login's passkey button first add a frame to the page (same origin),
	// wait 300 ms, then ask as the site's own page does.
	frameOnClick bool
}

// FrameOnClick sets whether /login's button adds a frame before it asks for the passkey.
func (s *passkeySite) FrameOnClick(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frameOnClick = on
}

// Greedy makes /login the agent's page asking for n assertions per click, calling onSignal
// ("stop" before the first, "cont" after the last); 0 restores the site's own page.
func (s *passkeySite) Greedy(n int, onSignal func(what string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.greedy, s.onSignal = n, onSignal
}

// pkUser is alice, the relying party's one account.
type pkUser struct {
	creds []webauthn.Credential
}

// pkUserHandle is alice's user handle: fixed bytes.
var pkUserHandle = []byte{0xa1, 0x1c, 0xe0, 0x01, 0x70, 0x61, 0x73, 0x73, 0x6b, 0x65, 0x79, 0x2d, 0x75, 0x73, 0x65, 0x72}

const pkAccount = "alice"

func (u *pkUser) WebAuthnID() []byte                         { return pkUserHandle }
func (u *pkUser) WebAuthnName() string                       { return pkAccount }
func (u *pkUser) WebAuthnDisplayName() string                { return "Alice" }
func (u *pkUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// pkCredential is a registered credential as the site keeps it.
type pkCredential struct {
	ID        []byte
	PublicKey []byte
	SignCount uint32
}

func newPasskeySite(t testing.TB) *passkeySite {
	t.Helper()
	s := &passkeySite{siteBook: newSiteBook(http.Cookie{Name: "pk_sid"}), ceremonies: map[string]webauthn.SessionData{}}
	s.other = pkLocalhostServer(t, s.recording(s.otherMux()))
	s.otherOrigin = "http://partner.localhost:" + strconv.Itoa(s.other.Listener.Addr().(*net.TCPAddr).Port)
	s.rp = pkLocalhostServer(t, s.recording(s.rpMux()))
	s.origin = "http://localhost:" + strconv.Itoa(s.rp.Listener.Addr().(*net.TCPAddr).Port)
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          "localhost",
		RPDisplayName: "Passkey Example",
		RPOrigins:     []string{s.origin},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: 5 * time.Second, TimeoutUVD: 5 * time.Second},
			Registration: webauthn.TimeoutConfig{Timeout: 30 * time.Second, TimeoutUVD: 30 * time.Second},
		},
		// Chromium may add extension outputs nobody asked for; what is tested here is the key.
		ExtensionsUnsolicitedOutputPolicy: protocol.UnsolicitedOutputPolicyIgnore,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.wa = wa
	return s
}

// pkLocalhostServer serves h on 127.0.0.1:PORT and, where the machine has IPv6 loopback, on
// [::1]:PORT too: Chromium resolves "localhost" to both, and no other program may answer for
// localhost:PORT on the address the test would not hold.
func pkLocalhostServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	for range 20 {
		l4, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l4.Addr().(*net.TCPAddr).Port
		l6, err := net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(port)))
		if err != nil && errors.Is(err, syscall.EADDRINUSE) {
			l4.Close()
			continue // that port is taken on ::1: another pair
		}
		srv := httptest.NewUnstartedServer(h)
		srv.Listener.Close()
		srv.Listener = l4
		srv.Start()
		t.Cleanup(srv.Close)
		if err == nil { // else: no IPv6 loopback here, localhost is 127.0.0.1 alone
			s6 := &http.Server{Handler: h}
			go s6.Serve(l6)
			t.Cleanup(func() { s6.Close() })
		}
		return srv
	}
	t.Fatal("no port free on both 127.0.0.1 and ::1")
	return nil
}

// Origin is the RP's origin, http://localhost:PORT.
func (s *passkeySite) Origin() string         { return s.origin }
func (s *passkeySite) URL(path string) string { return s.origin + path }

// OtherOrigin is the second origin, http://partner.localhost:PORT2 (Chromium resolves every
// *.localhost name to loopback itself).
func (s *passkeySite) OtherOrigin() string         { return s.otherOrigin }
func (s *passkeySite) OtherURL(path string) string { return s.otherOrigin + path }

// FrameURL is the other origin's page that asks for the credential.
func (s *passkeySite) FrameURL() string { return s.OtherURL("/frame") }

// Registered is how many credentials alice has.
func (s *passkeySite) Registered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.user.creds)
}

// Credentials returns alice's credentials as the site keeps them now.
func (s *passkeySite) Credentials() []pkCredential {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []pkCredential
	for _, c := range s.user.creds {
		out = append(out, pkCredential{ID: slices.Clone(c.ID), PublicKey: slices.Clone(c.PublicKey), SignCount: c.Authenticator.SignCount})
	}
	return out
}

// SignCounts returns the sign count of every successful sign-in so far, in order.
func (s *passkeySite) SignCounts() []uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.signCounts)
}

// Refusals is how many sign-ins were refused (the page's get() failed, or the assertion did
// not verify).
func (s *passkeySite) Refusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refusals)
}

// RefusalNames returns the error name of each refusal.
func (s *passkeySite) RefusalNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.refusals)
}

// RegistrationFailures returns the error name of each registration the page saw fail.
func (s *passkeySite) RegistrationFailures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.regFailures)
}

// CloneWarnings is how many sign-ins go-webauthn flagged as from a cloned authenticator (a
// sign count that did not grow).
func (s *passkeySite) CloneWarnings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clones
}

// XOriginResults returns the outcomes the other origin's frame reported.
func (s *passkeySite) XOriginResults() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.xorigin)
}

// FrameLoads is how many times the other origin's frame page was served.
func (s *passkeySite) FrameLoads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frameLoads
}

// Errors returns why the site refused what it refused (for a failing test's log).
func (s *passkeySite) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

// Bodies returns every request body either server received.
func (s *passkeySite) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}

// recording keeps every request body before h sees it.
func (s *passkeySite) recording(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body.Close()
			if len(b) > 0 {
				s.mu.Lock()
				s.bodies = append(s.bodies, b)
				s.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	})
}

// pkScript converts between base64url and ArrayBuffers, and encodes a PublicKeyCredential as
// the JSON go-webauthn parses.
const pkScript = `<script>
function b64uToBuf(s) {
  s = s.replace(/-/g, "+").replace(/_/g, "/");
  while (s.length % 4) { s += "="; }
  var bin = atob(s), u = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) { u[i] = bin.charCodeAt(i); }
  return u.buffer;
}
function bufToB64u(b) {
  var u = new Uint8Array(b), s = "";
  for (var i = 0; i < u.length; i++) { s += String.fromCharCode(u[i]); }
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function credJSON(c) {
  var r = c.response, out = {id: c.id, rawId: bufToB64u(c.rawId), type: c.type,
    clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
    response: {clientDataJSON: bufToB64u(r.clientDataJSON)}};
  if (c.authenticatorAttachment) { out.authenticatorAttachment = c.authenticatorAttachment; }
  if (r.attestationObject) {
    out.response.attestationObject = bufToB64u(r.attestationObject);
    if (r.getTransports) { out.response.transports = r.getTransports(); }
  } else {
    out.response.authenticatorData = bufToB64u(r.authenticatorData);
    out.response.signature = bufToB64u(r.signature);
    if (r.userHandle) { out.response.userHandle = bufToB64u(r.userHandle); }
  }
  return out;
}
function say(t) { document.getElementById("status").textContent = t; }
function postJSON(path, v) {
  return fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(v)});
}
</script>`

const pkRegisterBody = `<h1>Passkey Example: your account</h1>
<p>Add a passkey to alice's account.</p>
<button type="button" id="create">Create a passkey</button>
<p id="status" role="status"></p>
<script>
document.getElementById("create").addEventListener("click", async function () {
  say("Creating…");
  try {
    var opts = await (await fetch("/register/begin", {method: "POST"})).json();
    var pk = opts.publicKey;
    pk.challenge = b64uToBuf(pk.challenge);
    pk.user.id = b64uToBuf(pk.user.id);
    (pk.excludeCredentials || []).forEach(function (c) { c.id = b64uToBuf(c.id); });
    var cred = await navigator.credentials.create({publicKey: pk});
    var r = await postJSON("/register/finish", credJSON(cred));
    if (!r.ok) { throw {name: (await r.json()).error}; }
    say("Passkey registered");
  } catch (e) {
    var name = (e && e.name) || "Error";
    say("Registration failed: " + name);
    fetch("/register/failed?name=" + encodeURIComponent(name), {method: "POST"});
  }
});
</script>`

const pkLoginBody = `<h1>Sign in to Passkey Example</h1>
<button type="button" id="signin">Sign in with a passkey</button>
<p id="status" role="status"></p>
<script>
document.getElementById("signin").addEventListener("click", async function () {
  say("Signing in…");
  try {
    var opts = await (await fetch("/login/begin", {method: "POST"})).json();
    var pk = opts.publicKey;
    pk.challenge = b64uToBuf(pk.challenge);
    (pk.allowCredentials || []).forEach(function (c) { c.id = b64uToBuf(c.id); });
    pk.timeout = 5000;
    var cred = await navigator.credentials.get({publicKey: pk});
    var r = await postJSON("/login/finish", credJSON(cred));
    if (r.ok) { location.href = "/account"; return; }
    say("Sign-in refused: " + (await r.json()).error);
  } catch (e) {
    var name = (e && e.name) || "Error";
    say("Sign-in refused: " + name);
    fetch("/login/refused?name=" + encodeURIComponent(name), {method: "POST"});
  }
});
</script>`

// pkGreedyBody is the agent's own /login (red-team review of the passkey path): one click asks
// for GREEDY_N assertions in a row, each verified by the site, between two signals its watcher
// turns into SIGSTOP and SIGCONT of the browser host.
const pkGreedyBody = `<h1>Sign in to Passkey Example</h1>
<button type="button" id="signin">Sign in with a passkey</button>
<p id="status" role="status"></p>
<script>
document.getElementById("signin").addEventListener("click", async function () {
  await fetch("/signal?what=stop", {method: "POST"});
  var ok = 0;
  for (var i = 0; i < GREEDY_N; i++) {
    try {
      var opts = await (await fetch("/login/begin", {method: "POST"})).json();
      var pk = opts.publicKey;
      pk.challenge = b64uToBuf(pk.challenge);
      pk.timeout = 3000;
      var cred = await navigator.credentials.get({publicKey: pk});
      if ((await postJSON("/login/finish", credJSON(cred))).ok) { ok++; }
    } catch (e) {}
  }
  say("Signed in " + ok + " times");
  await fetch("/signal?what=cont", {method: "POST"});
});
</script>`

// pkFramePage is the other origin's frame: credID is the credential to ask for (base64url).
func pkFramePage(credID string, ms int) string {
	j, _ := json.Marshal(credID)
	return `<h1>Partner widget</h1><p id="status" role="status">asking</p>
<script>
window.addEventListener("load", async function () {
  var outcome = "none", until = Date.now() + ` + strconv.Itoa(ms) + `;
  var allow = [];
  if (` + string(j) + `) { allow.push({type: "public-key", id: b64uToBuf(` + string(j) + `)}); }
  while (Date.now() < until && outcome !== "ok") {
    var ac = new AbortController();
    var t = setTimeout(function () { ac.abort(); }, 150);
    try {
      await navigator.credentials.get({signal: ac.signal, publicKey: {challenge: crypto.getRandomValues(new Uint8Array(32)),
        rpId: "localhost", allowCredentials: allow, userVerification: "required", timeout: 5000}});
      outcome = "ok";
    } catch (e) {
      outcome = (e && e.name) || "Error";
      if (outcome === "SecurityError") { break; }
      await new Promise(function (r) { setTimeout(r, 20); });
    }
    clearTimeout(t);
  }
  say("Outcome: " + outcome);
  fetch("/xorigin/result", {method: "POST", body: outcome});
});
</script>`
}

func pkPage(w http.ResponseWriter, title, body string) {
	w.Header().Set("Cache-Control", "no-store")
	htmlPage(w, title, pkScript, body)
}

func pkJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// pkErrName is the name a failure of the site is shown with.
func pkErrName(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Type != "" {
		return pe.Type
	}
	return "ServerRejected"
}

// pkErrText is err with go-webauthn's details, for the test's log.
func pkErrText(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %s (%s)", pe.Type, pe.Details, pe.DevInfo)
	}
	return err.Error()
}

func (s *passkeySite) rpMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /register", func(w http.ResponseWriter, r *http.Request) {
		pkPage(w, "Create a passkey", pkRegisterBody)
	})
	mux.HandleFunc("POST /register/begin", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		creation, sd, err := s.wa.BeginRegistration(&s.user,
			webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
				ResidentKey:        protocol.ResidentKeyRequirementRequired,
				RequireResidentKey: protocol.ResidentKeyRequired(),
				UserVerification:   protocol.VerificationRequired,
			}),
			webauthn.WithExclusions(webauthn.Credentials(s.user.creds).CredentialDescriptors()))
		if err != nil {
			pkJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		s.ceremonies[sd.Challenge] = *sd
		pkJSON(w, http.StatusOK, creation)
	})
	mux.HandleFunc("POST /register/finish", func(w http.ResponseWriter, r *http.Request) {
		parsed, err := protocol.ParseCredentialCreationResponse(r)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.errs = append(s.errs, "register/finish: "+pkErrText(err))
			pkJSON(w, http.StatusBadRequest, map[string]string{"error": pkErrName(err)})
			return
		}
		sd, ok := s.ceremonies[parsed.Response.CollectedClientData.Challenge]
		delete(s.ceremonies, parsed.Response.CollectedClientData.Challenge)
		if !ok {
			pkJSON(w, http.StatusBadRequest, map[string]string{"error": "UnknownChallenge"})
			return
		}
		cred, err := s.wa.CreateCredential(&s.user, sd, parsed)
		if err != nil {
			s.errs = append(s.errs, "register/finish: "+pkErrText(err))
			pkJSON(w, http.StatusBadRequest, map[string]string{"error": pkErrName(err)})
			return
		}
		s.user.creds = append(s.user.creds, *cred)
		pkJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	mux.HandleFunc("POST /register/failed", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.regFailures = append(s.regFailures, r.URL.Query().Get("name"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n, framing := s.greedy, s.frameOnClick
		s.mu.Unlock()
		if framing {
			pkPage(w, "Sign in", strings.Replace(pkLoginBody, `say("Signing in…");`,
				`say("Signing in…"); var f = document.createElement("iframe"); f.src = "/account"; document.body.appendChild(f); await new Promise(function (r) { setTimeout(r, 300); });`, 1))
			return
		}
		if n > 0 {
			pkPage(w, "Sign in", strings.Replace(pkGreedyBody, "GREEDY_N", strconv.Itoa(n), 1))
			return
		}
		pkPage(w, "Sign in", pkLoginBody)
	})
	mux.HandleFunc("POST /signal", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		f := s.onSignal
		s.mu.Unlock()
		if f != nil {
			f(r.URL.Query().Get("what"))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /login/begin", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		assertion, sd, err := s.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
		if err != nil {
			pkJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
			return
		}
		s.ceremonies[sd.Challenge] = *sd
		pkJSON(w, http.StatusOK, assertion)
	})
	mux.HandleFunc("POST /login/finish", func(w http.ResponseWriter, r *http.Request) {
		if name := s.finishLogin(r); name != "" {
			pkJSON(w, http.StatusForbidden, map[string]string{"error": name})
			return
		}
		s.signIn(w, pkAccount)
		pkJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	// The same site's password sign-in (the bench's baseline): alice's password, set with
	// SetAccount.
	mux.HandleFunc("GET /password", func(w http.ResponseWriter, r *http.Request) {
		pkPage(w, "Sign in", signInForm("Sign in with a password", "/password", ""))
	})
	mux.HandleFunc("POST /password", func(w http.ResponseWriter, r *http.Request) {
		u, p := r.PostFormValue("username"), r.PostFormValue("password")
		if !s.check(u, p) {
			pkPage(w, "Sign in", signInForm("Sign in with a password", "/password", alertHTML))
			return
		}
		s.signIn(w, u)
		http.Redirect(w, r, "/account", http.StatusSeeOther)
	})
	mux.HandleFunc("POST /login/refused", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.refusals = append(s.refusals, r.URL.Query().Get("name"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /account", func(w http.ResponseWriter, r *http.Request) {
		a := s.account(r)
		if a == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		pkPage(w, "Your account", `<h1>Signed in as `+html.EscapeString(a)+`</h1><a href="/logout">Sign out</a>`)
	})
	mux.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		s.signOut(w, r)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /login-framed", func(w http.ResponseWriter, r *http.Request) {
		pkPage(w, "Sign in", pkLoginBody+`
<iframe src="`+html.EscapeString(s.FrameURL())+`?ms=20000" allow="publickey-credentials-get *" width="600" height="200" title="partner"></iframe>`)
	})
	return mux
}

// finishLogin verifies the assertion in r against the ceremony its challenge began and
// alice's credentials, and records it: "" when it verified (the sign count is recorded and the
// stored credential updated), else the name of the refusal (recorded as one).
func (s *passkeySite) finishLogin(r *http.Request) string {
	parsed, err := protocol.ParseCredentialRequestResponse(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	refuse := func(name string, err error) string {
		s.refusals = append(s.refusals, name)
		s.errs = append(s.errs, "login/finish: "+pkErrText(err))
		return name
	}
	if err != nil {
		return refuse(pkErrName(err), err)
	}
	challenge := parsed.Response.CollectedClientData.Challenge
	sd, ok := s.ceremonies[challenge]
	delete(s.ceremonies, challenge)
	if !ok {
		return refuse("UnknownChallenge", fmt.Errorf("no ceremony began with challenge %q", challenge))
	}
	_, cred, err := s.wa.ValidatePasskeyLogin(func(rawID, userHandle []byte) (webauthn.User, error) {
		if !bytes.Equal(userHandle, pkUserHandle) {
			return nil, fmt.Errorf("no user with user handle %x", userHandle)
		}
		return &s.user, nil
	}, sd, parsed)
	if err != nil {
		return refuse(pkErrName(err), err)
	}
	// The counter the authenticator signed. The returned credential's SignCount is the same,
	// unless go-webauthn saw it not grow: then it keeps the old one and sets CloneWarning.
	s.signCounts = append(s.signCounts, parsed.Response.AuthenticatorData.Counter)
	if cred.Authenticator.CloneWarning {
		s.clones++
	}
	for i := range s.user.creds {
		if bytes.Equal(s.user.creds[i].ID, cred.ID) {
			s.user.creds[i] = *cred
		}
	}
	return ""
}

func (s *passkeySite) otherMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /frame", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.frameLoads++
		var id string
		if len(s.user.creds) > 0 {
			id = base64.RawURLEncoding.EncodeToString(s.user.creds[0].ID)
		}
		s.mu.Unlock()
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms <= 0 || ms > 20000 {
			ms = 20000
		}
		pkPage(w, "Partner widget", pkFramePage(id, ms))
	})
	mux.HandleFunc("POST /xorigin/result", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 256))
		s.mu.Lock()
		s.xorigin = append(s.xorigin, string(b))
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}
