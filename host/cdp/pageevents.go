package cdp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What reaches the host of a page's console messages and requests, for 'console list' and
// 'network list' (host/pagelog.go). The reader turns each event of the kinds below into an
// event of its own method (ConsoleEvent, NetworkEvent) whose Params are only these fields:
//
//   - a console message (Runtime.consoleAPICalled, Runtime.exceptionThrown): its level and its
//     text — each argument's value or the browser's one-line description of it (never an
//     object's properties, which the browser previews) — at most MaxEventText bytes;
//   - a request (Network.requestWillBeSent, responseReceived, loadingFinished, loadingFailed):
//     its id, loader, method, URL (at most MaxEventText bytes), resource type, status, encoded
//     size, error and times. Never a header, a body or post data (which the Network domain is
//     asked to keep under one byte: host/sessions.go), a cookie or an initiator.
//
// A message of these kinds larger than MaxEvent (a page can log megabytes, or request a URL as
// long) is skipped as it is read, never held: the host learns only that one was dropped.

// The events the reader makes.
const (
	ConsoleEvent = "headless.console" // Params: Console
	NetworkEvent = "headless.request" // Params: Request
)

// Bounds.
const (
	// MaxEvent bounds a console or request event read from the browser; a larger one is
	// skipped unread (Dropped).
	MaxEvent = 1 << 20
	// MaxEventText bounds a console text or a URL passed to the host (Cut beyond).
	MaxEventText = 64 << 10
)

// Console is a console message of a page.
type Console struct {
	Level   string  `json:"level,omitempty"` // error, warning, info, log, debug
	Text    string  `json:"text,omitempty"`
	Cut     bool    `json:"cut,omitempty"`     // Text was longer
	Time    float64 `json:"time,omitempty"`    // ms since the epoch
	Dropped bool    `json:"dropped,omitempty"` // over MaxEvent: not read
}

// Request is an event of a page's request. Kind says which: "start" (Network.requestWillBeSent;
// a redirect's start carries the hop's Status with Redirect), "response", "end" or "fail".
type Request struct {
	Kind     string  `json:"kind,omitempty"`
	ID       string  `json:"id,omitempty"`
	Loader   string  `json:"loader,omitempty"`
	Frame    string  `json:"frame,omitempty"`
	Method   string  `json:"method,omitempty"`
	URL      string  `json:"url,omitempty"`
	Cut      bool    `json:"cut,omitempty"`
	Type     string  `json:"type,omitempty"`
	Status   int     `json:"status,omitempty"`
	Redirect bool    `json:"redirect,omitempty"`
	Bytes    int64   `json:"bytes,omitempty"`
	Error    string  `json:"error,omitempty"`
	Time     float64 `json:"time,omitempty"` // the browser's monotonic clock, seconds
	Wall     float64 `json:"wall,omitempty"` // seconds since the epoch, at the start
	Dropped  bool    `json:"dropped,omitempty"`
}

// boundedEvents are the methods whose messages are read at most MaxEvent bytes.
var boundedEvents = []string{"Runtime.consoleAPICalled", "Runtime.exceptionThrown",
	RequestStarted, "Network.responseReceived", RequestEnded, RequestFailed}

// boundedPrefix reports the method of a message that begins with one of boundedEvents (the
// browser writes an event's method first).
func boundedPrefix(b []byte) (string, bool) {
	for _, m := range boundedEvents {
		if bytes.HasPrefix(b, []byte(`{"method":"`+m+`"`)) {
			return m, true
		}
	}
	return "", false
}

// droppedEvent is the event the host gets for a message of method skipped for its size; tail
// is the message's last bytes, where the browser writes its session id.
func droppedEvent(method string, tail []byte) (Event, bool) {
	i := bytes.LastIndex(tail, []byte(`"sessionId":"`))
	if i < 0 {
		return Event{}, false
	}
	sid, _, ok := bytes.Cut(tail[i+len(`"sessionId":"`):], []byte(`"`))
	if !ok || len(sid) == 0 || len(sid) > 64 {
		return Event{}, false
	}
	if strings.HasPrefix(method, "Runtime.") {
		p, _ := json.Marshal(Console{Dropped: true})
		return Event{SessionID: string(sid), Method: ConsoleEvent, Params: p}, true
	}
	p, _ := json.Marshal(Request{Dropped: true})
	return Event{SessionID: string(sid), Method: NetworkEvent, Params: p}, true
}

// consoleEvent is m as the host sees a console message.
func consoleEvent(m message) (Event, bool) {
	if m.SessionID == "" {
		return Event{}, false
	}
	var c Console
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type      string         `json:"type"`
			Args      []remoteObject `json:"args"`
			Timestamp float64        `json:"timestamp"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return Event{}, false
		}
		c.Level, c.Time = consoleLevel(p.Type), p.Timestamp
		c.Text, c.Cut = formatArgs(p.Args)
	case "Runtime.exceptionThrown":
		var p struct {
			Timestamp float64 `json:"timestamp"`
			Details   struct {
				Text      string       `json:"text"`
				Exception remoteObject `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return Event{}, false
		}
		var t textBuf
		t.add(p.Details.Text)
		if d := p.Details.Exception.text(); d != "" {
			t.add(" ")
			t.add(d)
		}
		c.Level, c.Time, c.Text, c.Cut = "error", p.Timestamp, t.String(), t.cut
	default:
		return Event{}, false
	}
	b, _ := json.Marshal(c)
	return Event{SessionID: m.SessionID, Method: ConsoleEvent, Params: b}, true
}

// consoleLevel is the level of a console call's type.
func consoleLevel(t string) string {
	switch t {
	case "error", "assert":
		return "error"
	case "warning":
		return "warning"
	case "info":
		return "info"
	case "debug":
		return "debug"
	}
	return "log"
}

// remoteObject is what the host reads of a console argument.
type remoteObject struct {
	Type        string          `json:"type"`
	Subtype     string          `json:"subtype"`
	Value       json.RawMessage `json:"value"`
	Unserial    string          `json:"unserializableValue"`
	Description string          `json:"description"`
}

// text is o as a console shows it on one line: a string's value, a number's, or the
// browser's description (a function's first line only).
func (o remoteObject) text() string {
	switch {
	case o.Type == "string":
		var s string
		json.Unmarshal(o.Value, &s)
		return s
	case o.Type == "undefined":
		return "undefined"
	case o.Subtype == "null":
		return "null"
	case o.Unserial != "":
		return o.Unserial
	case o.Type == "function":
		first, _, _ := strings.Cut(o.Description, "\n")
		return first
	case o.Description != "":
		return o.Description
	case len(o.Value) > 0:
		return string(o.Value)
	}
	return o.Type
}

// formatArgs is a console call's text: the arguments joined by spaces, a first string's
// %s %d %i %f %o %O %c taking the next arguments, at most MaxEventText bytes.
func formatArgs(args []remoteObject) (string, bool) {
	var t textBuf
	rest := args
	if len(args) > 0 && args[0].Type == "string" {
		f := args[0].text()
		rest = args[1:]
		for len(f) > 0 {
			i := strings.IndexByte(f, '%')
			if i < 0 || i == len(f)-1 {
				t.add(f)
				break
			}
			t.add(f[:i])
			switch verb := f[i+1]; {
			case verb == '%':
				t.add("%")
			case strings.IndexByte("sdifoOc", verb) >= 0 && len(rest) > 0:
				if verb != 'c' { // %c styles: nothing of it is text
					s := rest[0].text()
					if verb == 'd' || verb == 'i' {
						if n, err := strconv.ParseFloat(s, 64); err == nil {
							s = strconv.FormatInt(int64(n), 10)
						}
					}
					t.add(s)
				}
				rest = rest[1:]
			default:
				t.add(f[i : i+2])
			}
			f = f[i+2:]
		}
	}
	for i, a := range rest {
		if i > 0 || len(args) > len(rest) {
			t.add(" ")
		}
		t.add(a.text())
	}
	return t.String(), t.cut
}

// textBuf builds a text of at most MaxEventText bytes, cut at a rune boundary.
type textBuf struct {
	b   strings.Builder
	cut bool
}

func (t *textBuf) add(s string) {
	if t.cut {
		return
	}
	room := MaxEventText - t.b.Len()
	if len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		s, t.cut = s[:room], true
	}
	t.b.WriteString(s)
}

func (t *textBuf) String() string { return t.b.String() }

// networkEvent is m as the host sees a request event for the network list.
func networkEvent(m message) (Event, bool) {
	if m.SessionID == "" {
		return Event{}, false
	}
	var p struct {
		RequestID string  `json:"requestId"`
		LoaderID  string  `json:"loaderId"`
		FrameID   string  `json:"frameId"`
		Type      string  `json:"type"`
		Timestamp float64 `json:"timestamp"`
		WallTime  float64 `json:"wallTime"`
		Request   struct {
			URL    string `json:"url"`
			Method string `json:"method"`
		} `json:"request"`
		Response struct {
			Status int `json:"status"`
		} `json:"response"`
		RedirectResponse *struct {
			Status int `json:"status"`
		} `json:"redirectResponse"`
		EncodedDataLength float64 `json:"encodedDataLength"`
		ErrorText         string  `json:"errorText"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.RequestID == "" || len(p.RequestID) > 64 {
		return Event{}, false
	}
	r := Request{ID: p.RequestID, Time: p.Timestamp, Type: clipWord(p.Type)}
	switch m.Method {
	case RequestStarted:
		var t textBuf
		t.add(p.Request.URL)
		r.Kind, r.Loader, r.Frame, r.Method, r.URL, r.Cut, r.Wall = "start", clipWord(p.LoaderID), clipWord(p.FrameID), clipWord(p.Request.Method), t.String(), t.cut, p.WallTime
		if p.RedirectResponse != nil {
			r.Redirect, r.Status = true, p.RedirectResponse.Status
		}
	case "Network.responseReceived":
		r.Kind, r.Status = "response", p.Response.Status
	case RequestEnded:
		r.Kind, r.Bytes = "end", int64(p.EncodedDataLength)
	case RequestFailed:
		r.Kind, r.Error = "fail", clipWord(p.ErrorText)
	default:
		return Event{}, false
	}
	b, _ := json.Marshal(r)
	return Event{SessionID: m.SessionID, Method: NetworkEvent, Params: b}, true
}

// clipWord bounds a short protocol value (a method, a type, an error name, an id).
func clipWord(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "")
	}
	return s
}
