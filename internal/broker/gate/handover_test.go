package gate

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/broker/presence"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/wire"
)

// A hand-over is the person's answer at brokerd's prompt: done, declined, or the prompt's
// failure, each audited; only the genuine host asks; without a window it is asked only where
// no window could be shown.
func TestHandover(t *testing.T) {
	p := brokerapi.HandoverParams{Session: "shop", Reason: "solve the CAPTCHA", URL: "https://app.example/login", Title: "Sign in", Window: true}
	for _, tt := range []struct {
		name    string
		answer  error
		display []string
		change  func(*brokerapi.HandoverParams)
		status  string
		code    wire.Code
		asked   bool
	}{
		{name: "done", status: "done", asked: true},
		{name: "declined", answer: presence.ErrDenied, status: "declined", asked: true},
		{name: "nobody answered", answer: presence.ErrTimeout, code: wire.CodePresenceTimeout, asked: true},
		{name: "no provider", answer: presence.ErrUnavailable, code: wire.CodePresenceUnavail, asked: true},
		{name: "no window where one could be shown", display: []string{"WAYLAND_DISPLAY=wayland-0"}, change: func(p *brokerapi.HandoverParams) { p.Window = false },
			code: wire.CodeNoWindow},
		{name: "no window and no display", change: func(p *brokerapi.HandoverParams) { p.Window = false }, status: "done", asked: true},
		{name: "no reason", change: func(p *brokerapi.HandoverParams) { p.Reason = "" }, code: wire.CodeInvalidArgument},
		{name: "a reason of two lines", change: func(p *brokerapi.HandoverParams) { p.Reason = "a\nb" }, code: wire.CodeInvalidArgument},
		{name: "a reason too long", change: func(p *brokerapi.HandoverParams) { p.Reason = strings.Repeat("x", brokerapi.MaxReason+1) }, code: wire.CodeInvalidArgument},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.srv.Window.Display = tt.display
			f.srv.HandoverTimeout = 90 * time.Second
			var wait time.Duration
			f.pres.decide = func(ctx context.Context, r presence.Request) error {
				wait = r.Wait
				return tt.answer
			}
			q := p
			if tt.change != nil {
				tt.change(&q)
			}
			var res brokerapi.HandoverResult
			err := f.client(t).Call(context.Background(), brokerapi.MethodHandover, q, &res)
			if code(err) != tt.code || res.Status != tt.status {
				t.Fatalf("handover = %+v, %v; want %q, %q", res, err, tt.status, tt.code)
			}
			if asked := f.pres.asked.Load() == 1; asked != tt.asked {
				t.Fatalf("person asked: %v, want %v", asked, tt.asked)
			}
			if tt.asked {
				r := f.pres.last.Load()
				if !r.Handover || r.Session != "shop" || r.Reason != q.Reason || r.Path != q.URL || r.Title != "Sign in" || r.NoWindow == q.Window || wait != 90*time.Second {
					t.Errorf("asked %+v (wait %v)", *r, wait)
				}
			}
			if f.store.secrets.Load() != 0 {
				t.Error("a hand-over read the vault")
			}
			recs := f.audit.records()
			if len(recs) != 1 || recs[0].Op != "handover" || recs[0].Session != "shop" {
				t.Fatalf("audit %+v", recs)
			}
			want := tt.status
			if tt.code != "" {
				want = "error"
			}
			if recs[0].Decision != want || recs[0].Code != string(tt.code) {
				t.Errorf("audited %q %q, want %q %q", recs[0].Decision, recs[0].Code, want, tt.code)
			}
		})
	}
}

// Only the host brokerd started may hand a session over (a script on broker.sock cannot make
// the person's prompt appear, or learn whether they are at the machine).
func TestHandoverOnlyFromTheHost(t *testing.T) {
	f := newFixture(t)
	c := f.connOf(t, 4000)
	r := raw(t, c, `{"id":1,"method":"handover","params":{"session":"default","reason":"x","window":true}}`+"\n")
	if r.Error == nil || r.Error.Code != wire.CodePeerNotHost || f.pres.asked.Load() != 0 {
		t.Fatalf("handover from a non-host: %+v (asked %d)", r, f.pres.asked.Load())
	}
}

// host.start gives the host a display only when a window is asked for (or the config's
// default), and refuses NO_DISPLAY when brokerd knows none: never a silent headless start.
func TestHostStartWindow(t *testing.T) {
	disp := []string{"WAYLAND_DISPLAY=wayland-0"}
	for _, tt := range []struct {
		name    string
		asked   bool
		def     bool
		display []string
		want    []string
		code    wire.Code
	}{
		{name: "headless", display: disp},
		{name: "asked", asked: true, display: disp, want: disp},
		{name: "the config's default", def: true, display: disp, want: disp},
		{name: "asked without a display", asked: true, code: wire.CodeNoDisplay},
		{name: "the config's default without a display", def: true, code: wire.CodeNoDisplay},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.srv.Window = WindowSetup{Default: tt.def, Display: tt.display}
			f.hosts.display = []string{"untouched"}
			err := f.client(t).Call(context.Background(), brokerapi.MethodHostStart, brokerapi.HostStartParams{Window: tt.asked}, nil)
			if code(err) != tt.code {
				t.Fatalf("host.start = %v, want %q", err, tt.code)
			}
			if tt.code == "" && !slices.Equal(f.hosts.display, tt.want) {
				t.Fatalf("the host was given display %q, want %q", f.hosts.display, tt.want)
			}
			if tt.code != "" && !slices.Equal(f.hosts.display, []string{"untouched"}) {
				t.Fatal("a host was started without the display it was asked for")
			}
		})
	}
}

// With the passphrase provider, Done is the person's passphrase, checked against a saved
// credential: anything else typed into the prompt is asked again, then declined; with nothing
// saved to check it against, nobody is asked.
func TestHandoverPassphrase(t *testing.T) {
	ctx := context.Background()
	f, sp := newSealedFixture(t)
	c := f.client(t)
	p := brokerapi.HandoverParams{Session: "default", Reason: "approve the sign-in on your phone", Window: true}
	var res brokerapi.HandoverResult
	if err := c.Call(ctx, brokerapi.MethodHandover, p, &res); code(err) != wire.CodePresenceUnavail || sp.asked() != 0 {
		t.Fatalf("with nothing saved: %+v %v (asked %d)", res, err, sp.asked())
	}
	sp.typing(passphrase, passphrase)
	if _, err := c.Add(ctx, "https://app.example", "admin@example", "staging-admin", []byte(canary)); err != nil {
		t.Fatal(err)
	}
	sp.typing("anything", "at all", "typed by someone else")
	if err := c.Call(ctx, brokerapi.MethodHandover, p, &res); err != nil || res.Status != "declined" {
		t.Fatalf("a wrong passphrase: %+v %v", res, err)
	}
	sp.typing(passphrase)
	if err := c.Call(ctx, brokerapi.MethodHandover, p, &res); err != nil || res.Status != "done" {
		t.Fatalf("the passphrase: %+v %v", res, err)
	}
	if r := sp.asks[len(sp.asks)-1]; !r.Handover || r.Reason != p.Reason || r.Save {
		t.Fatalf("asked %+v", r)
	}
}
