package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
	"github.com/headless-dev/headless/internal/xdg"
)

// world is the outside world of one CLI run, all fakes: a browser host on control.sock and a
// brokerd on broker.sock (each a method table served over net.Pipe, or nil: not running), the
// terminal, signals and processes. Nothing here starts a process or touches a real socket.
type world struct {
	t      *testing.T
	host   *rpc.Methods // nil: no host runs
	broker *rpc.Methods // nil: no brokerd runs
	// autostart: Env.Broker starts a brokerd (this table) when none runs, as BrokerDialer does.
	autostart *rpc.Methods
	tty       *fakeTTY // nil: no controlling terminal
	terminal  bool     // stderr is a terminal

	mu       sync.Mutex
	calls    []call // every request either fake received, in order
	signals  []int  // pids signalled
	alive    map[int]bool
	started  int // brokerds auto-started
	cleared  int // ClearStopped calls
	stdout   bytes.Buffer
	stderr   bytes.Buffer
	hostDial int // how often control.sock was dialled
}

// call is one request a fake received.
type call struct {
	socket, method string
	params         json.RawMessage
}

func newWorld(t *testing.T) *world {
	return &world{t: t, alive: map[int]bool{}}
}

// serve connects a client to a fake's method table over net.Pipe.
func (w *world) serve(socket string, m *rpc.Methods) net.Conn {
	client, server := net.Pipe()
	srv := &rpc.Server{Handler: func(ctx context.Context, peer rpc.Peer, req wire.Request) []byte {
		w.mu.Lock()
		w.calls = append(w.calls, call{socket, req.Method, append(json.RawMessage(nil), req.Params...)})
		w.mu.Unlock()
		return m.Serve(ctx, peer, req)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.ServeConn(ctx, server, rpc.Peer{UID: 1000, PID: 4242}) }()
	w.t.Cleanup(func() { cancel(); client.Close(); <-done })
	return client
}

func (w *world) env() Env {
	dialBroker := func(ctx context.Context) (*brokerapi.Client, error) {
		w.mu.Lock()
		m := w.broker
		w.mu.Unlock()
		if m == nil {
			return nil, fmt.Errorf("%w: dial unix broker.sock: connect: no such file or directory", brokerapi.ErrUnreachable)
		}
		return brokerapi.NewClient(w.serve("broker", m)), nil
	}
	return Env{
		Stdout: &w.stdout,
		Stderr: &w.stderr,
		Getenv: func(string) string { return "" },
		Layout: xdg.New(func(k string) string {
			return map[string]string{"XDG_RUNTIME_DIR": "/nonexistent/run", "HOME": "/nonexistent/home"}[k]
		}, 1000),
		OpenTTY: func() (TTY, error) {
			if w.tty == nil {
				return nil, errors.New("open /dev/tty: no such device or address")
			}
			return w.tty, nil
		},
		Broker: func(ctx context.Context) (*brokerapi.Client, error) {
			if c, err := dialBroker(ctx); err == nil {
				return c, nil
			}
			w.mu.Lock()
			if w.autostart == nil {
				w.mu.Unlock()
				return nil, wire.Errorf(wire.CodeBrokerUnavail, "brokerd is not running and was not found next to headless or on PATH")
			}
			w.broker, w.started = w.autostart, w.started+1
			w.mu.Unlock()
			return dialBroker(ctx)
		},
		DialBroker: dialBroker,
		DialControl: func(ctx context.Context) (*control.Client, error) {
			w.mu.Lock()
			m := w.host
			w.hostDial++
			w.mu.Unlock()
			if m == nil {
				return nil, fmt.Errorf("%w: dial unix control.sock: connect: no such file or directory", control.ErrUnavailable)
			}
			return control.NewClient(w.serve("host", m)), nil
		},
		StderrIsTerminal: func() bool { return w.terminal },
		Signal: func(pid int, sig syscall.Signal) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.signals = append(w.signals, pid)
			delete(w.alive, pid)
			return nil
		},
		Alive: func(pid int) bool {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.alive[pid]
		},
		ClearStopped: func(xdg.Layout) (control.ClearResult, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.cleared++
			return control.ClearResult{Cleared: true, Profile: "/nonexistent/profile"}, nil
		},
	}
}

// run runs the CLI with args in w and returns its exit status.
func (w *world) run(args ...string) int {
	return w.runCtx(context.Background(), args...)
}

func (w *world) runCtx(ctx context.Context, args ...string) int {
	w.t.Helper()
	w.stdout.Reset()
	w.stderr.Reset()
	w.mu.Lock()
	w.calls = nil
	w.mu.Unlock()
	return Run(ctx, args, w.env())
}

// received returns the requests socket got for method.
func (w *world) received(socket, method string) []json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []json.RawMessage
	for _, c := range w.calls {
		if c.socket == socket && c.method == method {
			out = append(out, c.params)
		}
	}
	return out
}

// methods received on socket, in order.
func (w *world) methods(socket string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.calls {
		if c.socket == socket {
			out = append(out, c.method)
		}
	}
	return out
}

// jsonOut decodes stdout as exactly one JSON object.
func (w *world) jsonOut() map[string]any {
	w.t.Helper()
	out := w.stdout.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		w.t.Fatalf("stdout is not one line: %q", out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		w.t.Fatalf("stdout is not a JSON object: %v: %q", err, out)
	}
	return m
}

// errOut is the {"error":…} object on stdout.
func (w *world) errOut() (code, message, hint string) {
	w.t.Helper()
	m := w.jsonOut()
	e, ok := m["error"].(map[string]any)
	if !ok || len(m) != 1 {
		w.t.Fatalf("not an error object: %v", m)
	}
	code, _ = e["code"].(string)
	message, _ = e["message"].(string)
	hint, _ = e["hint"].(string)
	if code == "" || message == "" || hint == "" {
		w.t.Fatalf("error without code, message or hint: %v", e)
	}
	return code, message, hint
}

// fakeHost is a host with the sessions named (isolated ones marked with a leading '*') and
// handlers for the verbs tests use; tests add or replace methods on the table it returns.
func fakeHost(sessions ...string) *rpc.Methods {
	t := &rpc.Methods{}
	var infos []control.SessionInfo
	for _, s := range append([]string{"default"}, sessions...) {
		name, iso := strings.CutPrefix(s, "*")
		infos = append(infos, control.SessionInfo{Name: name, Isolated: iso, URL: "about:blank", Responsive: true})
	}
	rpc.Handle(t, control.MethodSessionList, func(ctx context.Context, _ struct{}) (control.SessionList, error) {
		return control.SessionList{Sessions: infos}, nil
	})
	rpc.Handle(t, control.MethodStatus, func(ctx context.Context, _ struct{}) (control.Status, error) {
		return control.Status{PID: 300, Version: "test", Chromium: "Chrome/1", BrowserPID: 301, Profile: "/p", LockOwner: 300, Sessions: len(infos)}, nil
	})
	rpc.Handle(t, control.MethodShutdown, func(ctx context.Context, _ struct{}) (control.ShutdownResult, error) {
		return control.ShutdownResult{PID: 300}, nil
	})
	page := func(session, url string) control.PageResult {
		if session == "" {
			session = "default"
		}
		return control.PageResult{Session: session, URL: url, Title: "T"}
	}
	rpc.Handle(t, control.MethodVisit, func(ctx context.Context, p control.VisitParams) (control.PageResult, error) {
		return page(p.Session, p.URL), nil
	})
	rpc.Handle(t, control.MethodClick, func(ctx context.Context, p control.RefParams) (control.PageResult, error) {
		return page(p.Session, "https://a.example/"), nil
	})
	rpc.Handle(t, control.MethodPress, func(ctx context.Context, p control.PressParams) (control.PageResult, error) {
		return page(p.Session, "https://a.example/"), nil
	})
	rpc.Handle(t, control.MethodWait, func(ctx context.Context, p control.WaitParams) (control.PageResult, error) {
		return page(p.Session, "https://a.example/"), nil
	})
	rpc.Handle(t, control.MethodBack, func(ctx context.Context, p control.SessionParams) (control.PageResult, error) {
		return page(p.Session, "https://a.example/before"), nil
	})
	rpc.Handle(t, control.MethodSelect, func(ctx context.Context, p control.SelectParams) (control.SelectResult, error) {
		return control.SelectResult{PageResult: page(p.Session, "https://a.example/"), Ref: p.Ref, Selected: p.Values}, nil
	})
	rpc.Handle(t, control.MethodHover, func(ctx context.Context, p control.RefParams) (control.HoverResult, error) {
		return control.HoverResult{Session: page(p.Session, "").Session, Ref: p.Ref, Hovered: true}, nil
	})
	rpc.Handle(t, control.MethodScroll, func(ctx context.Context, p control.ScrollParams) (control.ScrollResult, error) {
		return control.ScrollResult{Session: page(p.Session, "").Session, Ref: p.Ref, ScrollY: 600, ViewportWidth: 800, ViewportHeight: 600, ContentWidth: 800, ContentHeight: 5000}, nil
	})
	rpc.Handle(t, control.MethodScreenshot, func(ctx context.Context, p control.ScreenshotParams) (control.ScreenshotResult, error) {
		return control.ScreenshotResult{Session: page(p.Session, "").Session, Path: "/p/s.png", SHA256: "ab", Bytes: 10, Width: 800, Height: 16384, Truncated: p.FullPage}, nil
	})
	rpc.Handle(t, control.MethodFill, func(ctx context.Context, p control.FillParams) (control.FillResult, error) {
		return control.FillResult{Session: p.Session, Ref: p.Ref, Filled: true}, nil
	})
	rpc.Handle(t, control.MethodCredentialsList, func(ctx context.Context, p control.CredentialsListParams) (control.CredentialList, error) {
		return control.CredentialList{Credentials: []control.Credential{{Origin: "https://a.example", Account: "iso@a", Alias: "iso-alias", Created: time.Unix(0, 0)}}}, nil
	})
	return t
}

// fakeBroker is a brokerd with one vault credential.
func fakeBroker(pid int, started string) *rpc.Methods {
	t := &rpc.Methods{}
	rpc.Handle(t, brokerapi.MethodVersion, func(ctx context.Context, _ struct{}) (brokerapi.VersionResult, error) {
		return brokerapi.VersionResult{Version: "test", PID: pid, Presence: "pinentry", Started: started}, nil
	})
	rpc.Handle(t, brokerapi.MethodCredentialsList, func(ctx context.Context, p brokerapi.ListParams) (brokerapi.ListResult, error) {
		return brokerapi.ListResult{Credentials: []brokerapi.Credential{{Origin: "https://a.example", Account: "vault@a", Alias: "vault-alias", Created: time.Unix(0, 0)}}}, nil
	})
	rpc.Handle(t, brokerapi.MethodHostStart, func(ctx context.Context, _ struct{}) (brokerapi.HostStartResult, error) {
		return brokerapi.HostStartResult{Status: "started", Ready: json.RawMessage(`{"pid":300,"profile":"/p","chromium":"Chrome/1"}`)}, nil
	})
	return t
}

// fakeTTY answers prompts from a script and records them.
type fakeTTY struct {
	mu      sync.Mutex
	answers []string
	prompts []string
}

func (f *fakeTTY) next(prompt string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, prompt)
	if len(f.answers) == 0 {
		return "", errTTYCancelled
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

func (f *fakeTTY) Secret(prompt string, max int) ([]byte, error) {
	a, err := f.next(prompt)
	return []byte(a), err
}

func (f *fakeTTY) Line(prompt string, max int) (string, error) { return f.next(prompt) }
func (f *fakeTTY) Close() error                                { return nil }
