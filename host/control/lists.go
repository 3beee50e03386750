package control

import (
	"context"
	"time"
)

// Uploads of a person's files, and the page's console messages and requests (issue 44).
const (
	MethodUpload      = "upload"       // UploadParams → UploadResult
	MethodConsoleList = "console.list" // ConsoleParams → ConsoleList
	MethodNetworkList = "network.list" // NetworkParams → NetworkList
)

// UploadParams is upload: the file of the person's store named Name (a basename the person
// added with 'headless files add', never a path) is attached to the file input of Ref.
type UploadParams struct {
	Session string `json:"session,omitempty"`
	Ref     string `json:"ref"`
	Name    string `json:"name"`
}

// UploadResult answers upload: the file attached, as the person approved it.
type UploadResult struct {
	Session  string `json:"session"`
	Ref      string `json:"ref"`
	Name     string `json:"name"`
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256"`
	Uploaded bool   `json:"uploaded"`
}

// PageParams is the pagination of console.list and network.list: at most Limit entries (1 to
// MaxListLimit; 0: DefaultListLimit) from the first one the filters keep, or, with Cursor (the
// Next of an earlier answer for the same session, list and filters), from the one after that
// answer's last.
type PageParams struct {
	Session string `json:"session,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

// Bounds of a list's page and its cursors.
const (
	DefaultListLimit = 50
	MaxListLimit     = 250
	MaxCursors       = 512             // live cursors of the host, every session's and list's
	CursorTTL        = 5 * time.Minute // a cursor's life
)

// ConsoleParams is console.list. Level keeps only the messages of that level: error, warning,
// info, log or debug.
type ConsoleParams struct {
	PageParams
	Level string `json:"level,omitempty"`
}

// NetworkParams is network.list. Type keeps only the requests of that resource type (document,
// stylesheet, image, media, font, script, xhr, fetch, eventsource, websocket, manifest, ping,
// preflight, other: as Chromium names them, any case); Failed only those that failed or were
// answered with a status of 400 or more.
type NetworkParams struct {
	PageParams
	Type   string `json:"type,omitempty"`
	Failed bool   `json:"failed,omitempty"`
}

// ConsoleMessage is a message the page logged (console.log and the like, or an uncaught
// exception: level error). Text is the page's: untrusted, at most MaxLogText bytes (Cut: it was
// longer).
type ConsoleMessage struct {
	Level string    `json:"level"`
	Text  string    `json:"text"`
	Time  time.Time `json:"time"`
	Cut   bool      `json:"cut,omitempty"`
}

// NetworkRequest is a request of the page: never a header or a body. Status is 0 until a
// response (or for one that failed: Error); Bytes is what it took on the wire, once finished;
// DurationMS from its start to its end (absent while Pending). URL is at most MaxLogURL bytes
// (Cut: it was longer).
type NetworkRequest struct {
	Method     string    `json:"method"`
	URL        string    `json:"url"`
	Type       string    `json:"type"`
	Status     int       `json:"status,omitempty"`
	Error      string    `json:"error,omitempty"`
	Bytes      int64     `json:"bytes,omitempty"`
	Start      time.Time `json:"start"`
	DurationMS int64     `json:"duration_ms,omitempty"`
	Pending    bool      `json:"pending,omitempty"`
	Cut        bool      `json:"cut,omitempty"`
}

// Bounds of the lists, per page of a session (a new document starts them again).
const (
	MaxLogEntries = 500  // messages, and requests, the host keeps (the oldest go: Dropped)
	MaxLogText    = 1024 // bytes of a message's text
	MaxLogURL     = 2048 // bytes of a request's URL
	MaxLogFlood   = 5000 // messages of one document after which the host stops reading them
)

// ListPage is what both lists answer besides their entries: the page's content is untrusted;
// Total is how many entries the filters keep now; Dropped how many the host did not keep
// (beyond MaxLogEntries, or a message over 1 MiB); Next the cursor of the next page (absent at
// the end); Stopped why the host stopped reading the page's messages (a flood), if it did.
type ListPage struct {
	Session   string `json:"session"`
	Untrusted bool   `json:"untrusted"`
	Total     int    `json:"total"`
	Dropped   int    `json:"dropped,omitempty"`
	Next      string `json:"next,omitempty"`
	Stopped   string `json:"stopped,omitempty"`
}

// ConsoleList answers console.list: the messages of the session's page since its document
// loaded, oldest first.
type ConsoleList struct {
	ListPage
	Messages []ConsoleMessage `json:"messages"`
}

// NetworkList answers network.list: the requests of the session's page since its document
// began to load (its own request first), in the order they started.
type NetworkList struct {
	ListPage
	Requests []NetworkRequest `json:"requests"`
}

// Upload attaches a file of the person's store to a file input.
func (c *Client) Upload(ctx context.Context, p UploadParams) (UploadResult, error) {
	return call[UploadResult](ctx, c, MethodUpload, p)
}

// ConsoleList is a page of the session's console messages.
func (c *Client) ConsoleList(ctx context.Context, p ConsoleParams) (ConsoleList, error) {
	return call[ConsoleList](ctx, c, MethodConsoleList, p)
}

// NetworkList is a page of the session's requests.
func (c *Client) NetworkList(ctx context.Context, p NetworkParams) (NetworkList, error) {
	return call[NetworkList](ctx, c, MethodNetworkList, p)
}
