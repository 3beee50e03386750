package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/snapshot"
)

// page is one captured corpus page, as stored in the capture directory (NAME.json.gz).
type page struct {
	File string          `json:"file"` // the corpus file name
	URL  string          `json:"url"`  // the origin URL it was served at
	Raw  json.RawMessage `json:"raw"`  // DOMSnapshot.captureSnapshot's result
	// Params are the captureSnapshot parameters it was captured with (absent in captures
	// older than this field), and Scripts whether the page's own inline scripts and event
	// handler attributes ran (as they do in the host and the end-to-end corpus test).
	Params  json.RawMessage `json:"params,omitempty"`
	Scripts bool            `json:"scripts,omitempty"`
}

var commentURL = regexp.MustCompile(`^\s*<!--[^>]*?(https?://[^\s<>"]+)`)

// pageURL is the page's original address (the HTML comment most files open with), else a
// made-up one on a site of its own named after the file.
func pageURL(name string, html []byte) string {
	head := html[:min(len(html), 2000)]
	if m := commentURL.FindSubmatch(head); m != nil {
		u, _, _ := strings.Cut(string(m[1]), "#") // a fragment would make it a same-document navigation
		return u
	}
	site := strings.TrimSuffix(name, ".html")
	if i := strings.IndexByte(site, '_'); i > 0 {
		site = site[:i]
	}
	site = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(site))
	return "https://" + site + ".example/" + name
}

// capture loads every corpus page in one headless Chromium at its original address: the
// document's request is answered with the file (Fetch.fulfillRequest), every other request
// fails before it leaves (no network, no external subresource). The corpus is rendered DOM
// with its scripts mostly stripped; what is left (a few inline scripts, onclick attributes)
// runs unless scripts is false, as it does in the host and in the end-to-end corpus test (an
// element with an onclick attribute is clickable only with scripts on). Each snapshot is
// written to out/NAME.json.gz.
func capture(ctx context.Context, corpus, out, only string, scripts bool) error {
	files, err := corpusFiles(corpus, only)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ddgeval-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := cdp.Launch(ctx, cdp.Options{
		Path:    "/usr/lib/chromium/chromium",
		Args:    []string{"--user-data-dir=" + filepath.Join(dir, "profile")},
		Env:     []string{"PATH=/usr/bin:/bin", "HOME=" + dir},
		TempDir: filepath.Join(dir, "tmp"),
	})
	if err != nil {
		return err
	}
	defer b.Kill()

	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank", "newWindow": true}, &t); err != nil {
		return err
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &a); err != nil {
		return err
	}
	sid := a.SessionID
	events := make(chan cdp.Event, 4096)
	defer b.Subscribe(func(ev cdp.Event) {
		if ev.SessionID == sid && ev.Method == "Page.javascriptDialogOpening" {
			// A page's own alert() would hold its load: dismissed (not from the subscriber,
			// which must not block).
			go b.Call(ctx, sid, "Page.handleJavaScriptDialog", map[string]any{"accept": false}, nil)
			return
		}
		if ev.SessionID == sid && (ev.Method == "Fetch.requestPaused" || ev.Method == "Page.loadEventFired") {
			select {
			case events <- ev:
			default: // a subscriber must not block; a lost request stays paused, harmlessly
			}
		}
	})()
	for _, c := range []struct {
		method string
		params any
	}{
		{"Page.enable", nil},
		{"Emulation.setScriptExecutionDisabled", map[string]any{"value": !scripts}},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": false}},
		{"Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*", "requestStage": "Request"}}}},
	} {
		if err := b.Call(ctx, sid, c.method, c.params, nil); err != nil {
			return fmt.Errorf("%s: %w", c.method, err)
		}
	}
	for k, name := range files {
		html, err := os.ReadFile(filepath.Join(corpus, name))
		if err != nil {
			return err
		}
		u := pageURL(name, html)
		raw, err := load(ctx, b, sid, events, u, html)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		json.NewEncoder(zw).Encode(page{File: name, URL: u, Raw: raw, Params: snapshot.CaptureParams(), Scripts: scripts})
		zw.Close()
		if err := os.WriteFile(filepath.Join(out, name+".json.gz"), buf.Bytes(), 0o600); err != nil {
			return err
		}
		if (k+1)%50 == 0 {
			fmt.Fprintf(os.Stderr, "captured %d/%d\n", k+1, len(files))
		}
	}
	fmt.Fprintf(os.Stderr, "captured %d pages into %s\n", len(files), out)
	return nil
}

// loadWait bounds the wait for a page's load event. With scripts on, every external script
// holds the parser until its request is failed, one CDP round trip each: on a busy machine a
// page with many takes seconds, and a snapshot taken before its load is of a page half parsed.
const loadWait = 30 * time.Second

// load navigates to u, answers the document request with html and fails every other
// request, waits for the load event (at most loadWait, else an error) and captures the
// snapshot.
func load(ctx context.Context, b *cdp.Browser, sid string, events chan cdp.Event, u string, html []byte) (json.RawMessage, error) {
	for len(events) > 0 {
		<-events
	}
	nav := make(chan error, 1)
	go func() { nav <- b.Call(ctx, sid, "Page.navigate", map[string]any{"url": u}, nil) }()
	served := false
	timeout := time.After(loadWait)
wait:
	for {
		select {
		case err := <-nav:
			if err != nil {
				return nil, err
			}
			nav = nil
		case ev := <-events:
			if ev.Method == "Page.loadEventFired" {
				if served {
					break wait
				}
				continue
			}
			var p struct {
				RequestID    string `json:"requestId"`
				ResourceType string `json:"resourceType"`
				Request      struct {
					URL string `json:"url"`
				} `json:"request"`
			}
			json.Unmarshal(ev.Params, &p)
			if !served && p.ResourceType == "Document" { // the navigation's own request (u, normalised)
				served = true
				err := b.Call(ctx, sid, "Fetch.fulfillRequest", map[string]any{
					"requestId":       p.RequestID,
					"responseCode":    200,
					"responseHeaders": []map[string]string{{"name": "Content-Type", "value": "text/html; charset=utf-8"}},
					"body":            base64.StdEncoding.EncodeToString(html),
				}, nil)
				if err != nil {
					return nil, err
				}
				continue
			}
			b.Call(ctx, sid, "Fetch.failRequest", map[string]any{"requestId": p.RequestID, "errorReason": "BlockedByClient"}, nil)
		case <-timeout:
			if !served {
				return nil, fmt.Errorf("the page was never requested")
			}
			return nil, fmt.Errorf("the page did not load within %v", loadWait)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var raw json.RawMessage
	err := b.Call(ctx, sid, "DOMSnapshot.captureSnapshot", snapshot.CaptureParams(), &raw)
	return raw, err
}

// corpusFiles lists the corpus's HTML files (only those whose name contains only, if set).
func corpusFiles(corpus, only string) ([]string, error) {
	ents, err := os.ReadDir(corpus)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".html") && strings.Contains(n, only) {
			out = append(out, n)
		}
	}
	return out, nil
}
