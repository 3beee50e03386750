package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// serve serves m over net.Pipe and returns a Client of it.
func serve(t *testing.T, m *rpc.Methods) *Client {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); (&rpc.Server{Handler: m.Serve}).ServeConn(ctx, b, rpc.Peer{PID: 1}) }()
	c := NewClient(a)
	t.Cleanup(func() { c.Close(); cancel(); <-done })
	return c
}

// TestTypedCalls: each verb sends its params type and decodes its result type.
func TestTypedCalls(t *testing.T) {
	m := &rpc.Methods{}
	rpc.Handle(m, MethodVisit, func(ctx context.Context, p VisitParams) (PageResult, error) {
		return PageResult{Session: p.Session, URL: p.URL, AuthRequired: &AuthRequired{Challenge: "c", Aliases: []string{"a"}}}, nil
	})
	rpc.Handle(m, MethodSessionList, func(ctx context.Context, _ struct{}) (SessionList, error) {
		return SessionList{Sessions: []SessionInfo{{Name: "default", Responsive: true}, {Name: "iso", Isolated: true}}}, nil
	})
	rpc.Handle(m, MethodSessionClose, func(ctx context.Context, p CloseParams) (SessionClosed, error) {
		return SessionClosed{Closed: p.Name}, nil
	})
	rpc.Handle(m, MethodCredentialsList, func(ctx context.Context, p CredentialsListParams) (CredentialList, error) {
		return CredentialList{}, nil // no credentials: [] not null
	})
	c := serve(t, m)
	ctx := context.Background()
	r, err := c.Visit(ctx, VisitParams{Session: "s", URL: "https://a.example/"})
	if err != nil || r.Session != "s" || r.URL != "https://a.example/" || r.AuthRequired == nil || r.AuthRequired.Challenge != "c" {
		t.Fatalf("%+v %v", r, err)
	}
	if si, err := c.Session(ctx, "iso"); err != nil || !si.Isolated {
		t.Fatalf("%+v %v", si, err)
	}
	if si, err := c.Session(ctx, ""); err != nil || si.Name != DefaultSession {
		t.Fatalf("%+v %v", si, err)
	}
	if _, err := c.Session(ctx, "nope"); wire.CodeOf(err) != wire.CodeSessionUnknown {
		t.Fatalf("%v", err)
	}
	if r, err := c.SessionClose(ctx, "iso"); err != nil || r.Closed != "iso" {
		t.Fatalf("%+v %v", r, err)
	}
	if l, err := c.CredentialsList(ctx, CredentialsListParams{Session: "iso"}); err != nil || l.Credentials == nil {
		t.Fatalf("%+v %v", l, err)
	}
	// The host's own errors arrive as they were answered.
	if _, err := c.Snapshot(ctx, "s"); wire.CodeOf(err) != wire.CodeUnknownMethod {
		t.Fatalf("%v", err)
	}
}

// TestSecretRequestsAreHandBuilt: Enroll and CredentialsAdd carry the secret in the frame
// the host decodes into the params type, and the caller's slice is left to the caller.
func TestSecretRequestsAreHandBuilt(t *testing.T) {
	m := &rpc.Methods{}
	var got []string
	rpc.Handle(m, MethodAuthEnroll, func(ctx context.Context, p EnrollParams) (EnrollResult, error) {
		got = append(got, p.Session+"/"+p.Account+"/"+string(p.Secret))
		return EnrollResult{Status: "authenticated", Token: "enr-x"}, nil
	})
	rpc.Handle(m, MethodCredentialsAdd, func(ctx context.Context, p CredentialsAddParams) (Credential, error) {
		got = append(got, p.Session+"/"+p.Origin+"/"+p.Account+"/"+p.Alias+"/"+string(p.Secret))
		if p.Alias == "taken" {
			return Credential{}, wire.Errorf(wire.CodeAliasExists, "taken")
		}
		return Credential{Origin: p.Origin, Alias: p.Alias}, nil
	})
	c := serve(t, m)
	ctx := context.Background()
	pw := []byte("pa\"ss\\wörd")
	if r, err := c.Enroll(ctx, "default", "me", pw); err != nil || r.Token != "enr-x" {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := c.CredentialsAdd(ctx, "iso", "https://a.example", "me", "al", nil, nil, pw); err != nil || r.Alias != "al" {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := c.CredentialsAdd(ctx, "iso", "https://a.example", "me", "taken", nil, nil, pw); wire.CodeOf(err) != wire.CodeAliasExists {
		t.Fatalf("%v", err)
	}
	if string(pw) != "pa\"ss\\wörd" {
		t.Fatal("the caller's secret was changed")
	}
	want := []string{"default/me/pa\"ss\\wörd", "iso/https://a.example/me/al/pa\"ss\\wörd", "iso/https://a.example/me/taken/pa\"ss\\wörd"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("host got %q", got)
	}
}

// TestSocketFailuresAreHostUnavailable: every failure of control.sock itself is
// HOST_UNAVAILABLE (ErrUnavailable), never BROKER_UNAVAILABLE: nothing listens, the host
// goes away mid-call, the caller's deadline passes first.
func TestSocketFailuresAreHostUnavailable(t *testing.T) {
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnavailable) || wire.From(err).Code != wire.CodeHostUnavail || strings.Contains(err.Error(), "broker") {
			t.Fatalf("%s: %v (%s)", what, err, wire.From(err).Code)
		}
	}
	a, b := net.Pipe()
	go func() {
		buf := make([]byte, 4096)
		b.Read(buf)
		b.Close()
	}()
	c := NewClient(a)
	_, err := c.Status(context.Background())
	check("gone mid-call", err)
	c.Close()
	_, err = c.Enroll(context.Background(), "s", "a", []byte("pw"))
	check("gone before a secret call", err)

	m := &rpc.Methods{}
	release := make(chan struct{}) // the host answers only after the caller gave up
	defer close(release)
	rpc.Handle(m, MethodWait, func(ctx context.Context, p WaitParams) (PageResult, error) {
		<-release
		return PageResult{}, nil
	})
	c = serve(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err = c.Wait(ctx, WaitParams{Text: "x"})
	check("deadline", err)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("%v", err)
	}

	a, b = net.Pipe()
	go func() {
		buf := make([]byte, 4096)
		b.Read(buf)
		b.Write([]byte(`{"id":1,"result":{"pid":"not a number"}}` + "\n"))
	}()
	c = NewClient(a)
	defer c.Close()
	_, err = c.Status(context.Background())
	check("a result of the wrong shape", err)
}

// TestPageVerbCalls: back, select, hover, scroll, wait and screenshot send their params types
// and decode their result types; a select result never has a null "selected".
func TestPageVerbCalls(t *testing.T) {
	m := &rpc.Methods{}
	var got []any
	rpc.Handle(m, MethodBack, func(ctx context.Context, p SessionParams) (PageResult, error) {
		got = append(got, p)
		return PageResult{Session: p.Session, URL: "https://a.example/1"}, nil
	})
	rpc.Handle(m, MethodSelect, func(ctx context.Context, p SelectParams) (SelectResult, error) {
		got = append(got, p)
		return SelectResult{PageResult: PageResult{Session: p.Session}, Ref: p.Ref}, nil // Selected nil
	})
	rpc.Handle(m, MethodHover, func(ctx context.Context, p RefParams) (HoverResult, error) {
		got = append(got, p)
		return HoverResult{Session: p.Session, Ref: p.Ref, Hovered: true}, nil
	})
	rpc.Handle(m, MethodScroll, func(ctx context.Context, p ScrollParams) (ScrollResult, error) {
		got = append(got, p)
		return ScrollResult{Session: p.Session, Ref: p.Ref, ScrollY: p.By}, nil
	})
	rpc.Handle(m, MethodWait, func(ctx context.Context, p WaitParams) (PageResult, error) {
		got = append(got, p)
		return PageResult{Session: p.Session}, nil
	})
	rpc.Handle(m, MethodScreenshot, func(ctx context.Context, p ScreenshotParams) (ScreenshotResult, error) {
		got = append(got, p)
		return ScreenshotResult{Session: p.Session, Width: 3, Height: 4, Truncated: p.FullPage}, nil
	})
	c := serve(t, m)
	ctx := context.Background()
	if r, err := c.Back(ctx, "s"); err != nil || r.URL != "https://a.example/1" {
		t.Fatalf("back: %+v %v", r, err)
	}
	if r, err := c.Select(ctx, SelectParams{Session: "s", Ref: "e1", Values: []string{"a", "b"}}); err != nil || r.Ref != "e1" || r.Selected == nil {
		t.Fatalf("select: %+v %v", r, err)
	}
	if r, err := c.Hover(ctx, RefParams{Session: "s", Ref: "e2"}); err != nil || !r.Hovered {
		t.Fatalf("hover: %+v %v", r, err)
	}
	if r, err := c.Scroll(ctx, ScrollParams{Session: "s", Ref: "e3", By: -40}); err != nil || r.ScrollY != -40 || r.Ref != "e3" {
		t.Fatalf("scroll: %+v %v", r, err)
	}
	if _, err := c.Wait(ctx, WaitParams{Session: "s", Gone: "x", Ref: "e4"}); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Screenshot(ctx, ScreenshotParams{Session: "s", FullPage: true}); err != nil || r.Width != 3 || r.Height != 4 || !r.Truncated {
		t.Fatalf("screenshot: %+v %v", r, err)
	}
	want := []any{
		SessionParams{Session: "s"},
		SelectParams{Session: "s", Ref: "e1", Values: []string{"a", "b"}},
		RefParams{Session: "s", Ref: "e2"},
		ScrollParams{Session: "s", Ref: "e3", By: -40},
		WaitParams{Session: "s", Gone: "x", Ref: "e4"},
		ScreenshotParams{Session: "s", FullPage: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the host got %v, want %v", got, want)
	}
}
