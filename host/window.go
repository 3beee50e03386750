package host

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/internal/peercred"
	"github.com/headless-dev/headless/internal/wire"
)

// A visible browser (issue 45): 'headless start --window' (or "window": true in the config)
// has brokerd start the host with the person's display in its environment — the display its
// prompts appear on, never the agent's — and the browser shows a window per session there.
// Everything else is as without a window: the private DevTools pipe, the groups, the
// sandbox, the profile lock, every verb's checks.
//
//   - Wayland first: with WAYLAND_DISPLAY Chromium gets only that (and runs on Wayland, where
//     no other client reads its pixels or input); X11 (DISPLAY, XAUTHORITY) only where that is
//     all there is, and then every X client of the person's can read the windows and type
//     into them (SECURITY.md; the doctor warns).
//   - Each session of the durable profile is a window titled with the session's name: the
//     first one by --window-name at launch, the others by asking the running browser for a
//     new window of that name through its own process-singleton socket (the one way Chromium
//     gives a window a title of the caller's; no DevTools method does). The socket is the
//     browser's only if its kernel-reported peer is the browser's pid. An isolated session's
//     window (a browser context of its own, which that socket cannot open) keeps Chromium's
//     own title (the page's). A title is a label for the person, not an identity: any
//     program of theirs can open a window with any title.

// displayEnv is the browser's display from the host's environment (brokerd's choice): the
// platform and the variables Chromium gets. Wayland first; X11 gets its authority file
// (XAUTHORITY, else the person's ~/.Xauthority: Chromium's HOME is not theirs).
func displayEnv(getenv func(string) string) (platform string, env []string, err error) {
	if w := getenv("WAYLAND_DISPLAY"); w != "" {
		return "wayland", []string{"WAYLAND_DISPLAY=" + w}, nil
	}
	if d := getenv("DISPLAY"); d != "" {
		env = []string{"DISPLAY=" + d}
		xa := getenv("XAUTHORITY")
		if home := getenv("HOME"); xa == "" && home != "" {
			if _, err := os.Stat(filepath.Join(home, ".Xauthority")); err == nil {
				xa = filepath.Join(home, ".Xauthority")
			}
		}
		if xa != "" {
			env = append(env, "XAUTHORITY="+xa)
		}
		return "x11", env, nil
	}
	return "", nil, wire.Errorf(wire.CodeNoDisplay, "the host was asked for a window and has no display (neither WAYLAND_DISPLAY nor DISPLAY); Chromium was not launched")
}

// windowWait bounds the wait for a titled window to open.
const windowWait = 30 * time.Second

// titledWindow asks browser b for a new window of the durable profile titled name, through the
// browser's process-singleton socket, and returns its page target ("" when it could not: the
// caller opens an untitled window instead, and the log says why). The window's first page is
// a data: URL of a random marker, by which the host finds its target.
func (h *Host) titledWindow(ctx context.Context, b *cdp.Browser, name string) string {
	id, err := h.singletonWindow(ctx, b, name)
	if err != nil {
		h.o.Log.Warn("no titled window: opening an untitled one", "session", name, "err", err)
	}
	return id
}

func (h *Host) singletonWindow(ctx context.Context, b *cdp.Browser, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, windowWait)
	defer cancel()
	marker := "data:,headless-window-" + rand.Text()
	found := make(chan string, 1)
	unsub := b.Subscribe(func(ev cdp.Event) {
		if ev.SessionID != "" || (ev.Method != "Target.targetCreated" && ev.Method != "Target.targetInfoChanged") {
			return
		}
		var p struct {
			Info struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
				URL      string `json:"url"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && p.Info.Type == "page" && p.Info.URL == marker {
			select {
			case found <- p.Info.TargetID:
			default:
			}
		}
	})
	defer unsub()
	sock, err := os.Readlink(filepath.Join(h.prof.Dir(), "SingletonSocket"))
	if err != nil {
		return "", fmt.Errorf("the browser's singleton socket: %w", err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return "", fmt.Errorf("the browser's singleton socket: %w", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	// The socket is the user's file: only one the browser itself listens on is told anything.
	if cred, err := peercred.Get(c); err != nil || cred.PID != b.PID() {
		return "", fmt.Errorf("the singleton socket %s is not the browser's (peer pid %d, browser pid %d, %v)", sock, cred.PID, b.PID(), err)
	}
	// Chromium's message: START, the working directory, then a command line, NUL-separated;
	// it answers ACK once it has acted on it.
	msg := "START\x00/\x00" + strings.Join([]string{h.o.Chromium, "--new-window", "--window-name=" + name, marker}, "\x00")
	if _, err := io.WriteString(c, msg); err != nil {
		return "", fmt.Errorf("ask the browser for a window: %w", err)
	}
	c.(*net.UnixConn).CloseWrite()
	ack, _ := io.ReadAll(io.LimitReader(c, 16))
	if string(ack) != "ACK" {
		return "", fmt.Errorf("the browser answered %q to a new window", ack)
	}
	select {
	case id := <-found:
		return id, nil
	case <-ctx.Done():
		return "", fmt.Errorf("the browser's new window did not appear: %w", ctx.Err())
	}
}
