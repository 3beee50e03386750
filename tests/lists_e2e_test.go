//go:build linux

package tests

// Issue 44, points 3 and 4, against real Chromium: a file a person added (approved at the
// presence prompt) reaches a page's file input and its server byte for byte, and nothing else
// can be uploaded; downloads are denied and say so; console and network lists, their one
// pagination, their bounds under a flood, and a released password never shown in them.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// listsSite is the tests' site: a form with a file input whose server records what it gets,
// pages that log and request, a download, and (signed in) a password the page can fetch.
type listsSite struct {
	*httptest.Server
	siteBook
	got []received // guarded by siteBook.mu
}

type received struct {
	Name string
	Body []byte
}

func (s *listsSite) received() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

func newListsSite(t testing.TB) *listsSite {
	s := &listsSite{siteBook: newSiteBook(http.Cookie{Name: "sid"})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /upload", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Upload", "", `<h1>Send a report</h1>
<form method="post" action="/upload" enctype="multipart/form-data">
 <label>Attachment <input type="file" name="f"></label>
 <label>Note <input type="text" name="note"></label>
 <button type="submit">Send</button>
</form>`)
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		f, h, err := r.FormFile("f")
		if err != nil {
			htmlPage(w, "Nothing", "", "<p>no file: "+html.EscapeString(err.Error())+"</p>")
			return
		}
		b, _ := io.ReadAll(io.LimitReader(f, 64<<20))
		s.mu.Lock()
		s.got = append(s.got, received{h.Filename, b})
		s.mu.Unlock()
		htmlPage(w, "Received", "", fmt.Sprintf("<p>Received %d bytes</p>", len(b)))
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "tracking", Value: "COOKIECANARY", Path: "/"})
		htmlPage(w, "App", "", `<h1>App</h1><img src="/missing.png" alt="">
<script>
console.log("hello", 42, {a: 1});
console.info("info line");
console.warn("careful");
console.error("it broke");
console.debug("details");
fetch("/api/items?page=2", {method: "POST", headers: {"X-Canary": "HDRCANARY", "Content-Type": "text/plain"}, body: "BODYCANARY"})
  .then(function (r) { return r.text(); }).then(function () { console.log("posted"); });
setTimeout(function () { throw new Error("boom"); }, 10);
</script>`)
	})
	mux.HandleFunc("POST /api/items", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		w.Header().Set("X-Response-Canary", "RESPCANARY")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"secret":"RESPBODYCANARY"}`)
	})
	mux.HandleFunc("GET /many", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Many", "", `<h1>Many</h1><script>for (var i = 0; i < 30; i++) console.log("line " + i);</script>`)
	})
	mux.HandleFunc("GET /later", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Later", "", `<h1>Later</h1><script>console.log("a line of another document");</script>`)
	})
	mux.HandleFunc("GET /flood", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Flood", "", `<h1>Flood</h1><script>
for (var i = 0; i < 20000; i++) console.log("flood " + i + " " + "x".repeat(200));
for (var j = 0; j < 800; j++) fetch("/ping?n=" + j);
console.log("big " + "y".repeat(3 << 20));
</script>`)
	})
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /dl", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="lists-download.txt"`)
		fmt.Fprint(w, "a download's body")
	})
	mux.HandleFunc("GET /dlpage", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Downloads", "", `<a href="/dl">Get the file</a>`)
	})
	// Sign-in, and pages of the signed-in account that read its password without it ever
	// being in their document: into the console, and into a URL.
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "Sign in", "", signInForm("Sign in", "/login", ""))
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if !s.check(r.PostForm.Get("username"), r.PostForm.Get("password")) {
			htmlPage(w, "Sign in", "", signInForm("Sign in", "/login", alertHTML))
			return
		}
		s.signIn(w, r.PostForm.Get("username"))
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, "Home", "", "<h1>Welcome home</h1>") })
	mux.HandleFunc("GET /pw.txt", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		pw := s.accounts[s.accountLocked(r)]
		s.mu.Unlock()
		fmt.Fprint(w, pw)
	})
	for path, use := range map[string]string{
		"/leak-console":      `console.log("the password: " + pw);`,
		"/leak-console-long": `console.log("x".repeat(3000) + pw);`,
		"/leak-url":          `fetch("/ping?p=" + encodeURIComponent(pw));`,
		"/leak-url-long":     `fetch("/ping?pad=" + "z".repeat(5000) + pw);`,
	} {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			htmlPage(w, "Leak", "", `<h1>Account</h1><p id="done">loading</p><script>
fetch("/pw.txt").then(function (r) { return r.text(); }).then(function (pw) { `+use+` document.getElementById("done").textContent = "done"; });
</script>`)
		})
	}
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// storeDir is the env's file store.
func (e *env) storeDir() string { return filepath.Join(e.runDir(), "artifacts", "files") }

type fileEntry struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	Present bool   `json:"present"`
}

func TestUploadOfAPersonsFile(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := newListsSite(t)
	pin, pinLog := presencetest.FakePinentry(t, "switch") // approves unless pinLog+".deny" exists
	lsPresence(e, pin, 5)
	e.start(t)

	// A file of the person's, with every byte value in it.
	body := make([]byte, 70000)
	rand.Read(body)
	copy(body, "%PDF-1.7\x00\xff")
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])
	src := filepath.Join(t.TempDir(), "Quarterly report.pdf")
	if err := os.WriteFile(src, body, 0o600); err != nil {
		t.Fatal(err)
	}

	// Without approval nothing is added: the store holds nothing, brokerd lists nothing.
	os.WriteFile(pinLog+".deny", nil, 0o600)
	before := len(presencetest.Prompts(t, pinLog))
	e.fails(t, "PRESENCE_DENIED", "files", "add", src, "--name", "report.pdf")
	os.Remove(pinLog + ".deny")
	if ents, _ := os.ReadDir(e.storeDir()); len(ents) != 0 {
		t.Fatalf("a denied add left %v in the store", ents)
	}
	var list struct{ Files []fileEntry }
	e.ok(t, &list, "files", "list")
	if len(list.Files) != 0 {
		t.Fatalf("a denied add is listed: %+v", list)
	}
	prompts := presencetest.Prompts(t, pinLog)
	if len(prompts) != before+1 {
		t.Fatalf("the person was asked %d times", len(prompts)-before)
	}
	for _, want := range []string{"report.pdf", "70000 bytes", digest, "Quarterly report.pdf", "any page"} {
		if !strings.Contains(prompts[len(prompts)-1], want) {
			t.Errorf("the prompt does not say %q: %q", want, prompts[len(prompts)-1])
		}
	}

	// Approved: the store holds exactly those bytes, private.
	var added struct{ Added fileEntry }
	e.ok(t, &added, "files", "add", src, "--name", "report.pdf")
	if added.Added.Name != "report.pdf" || added.Added.Bytes != int64(len(body)) || added.Added.SHA256 != digest {
		t.Fatalf("files add: %+v", added)
	}
	stored, err := os.ReadFile(filepath.Join(e.storeDir(), "report.pdf"))
	if err != nil || string(stored) != string(body) {
		t.Fatalf("the store's copy differs (%v)", err)
	}
	for path, mode := range map[string]os.FileMode{e.storeDir(): 0o700, filepath.Join(e.storeDir(), "report.pdf"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want %v", path, fi.Mode().Perm(), err, mode)
		}
	}
	e.ok(t, &list, "files", "list")
	if len(list.Files) != 1 || list.Files[0].Name != "report.pdf" || !list.Files[0].Present || list.Files[0].SHA256 != digest {
		t.Fatalf("files list: %+v", list)
	}
	var decisions []string
	for _, a := range e.audit(t) {
		if strings.HasPrefix(a.Op, "file_") {
			decisions = append(decisions, a.Op+" "+a.Decision+" "+a.Code)
		}
	}
	if strings.Join(decisions, ", ") != "file_add deny PRESENCE_DENIED, file_add allow " {
		t.Errorf("the audit log's file records: %q", decisions)
	}

	// Attached to a real page's file input; its server receives exactly the bytes.
	e.ok(t, nil, "visit", srv.URL+"/upload")
	o := e.snap(t)
	input, note := o.ref(t, "input", "Attachment"), o.ref(t, "input", "Note")
	var up struct {
		Session, Ref, Name, SHA256 string
		Bytes                      int64
		Uploaded                   bool
	}
	e.ok(t, &up, "upload", input, "report.pdf")
	if !up.Uploaded || up.Bytes != int64(len(body)) || up.SHA256 != digest || up.Name != "report.pdf" || up.Ref != input {
		t.Fatalf("upload: %+v", up)
	}
	e.ok(t, nil, "click", o.ref(t, "button", "Send"))
	got := srv.received()
	if len(got) != 1 || got[0].Name != "report.pdf" || string(got[0].Body) != string(body) {
		t.Fatalf("the site received %d files (%+v)", len(got), func() []string {
			var s []string
			for _, g := range got {
				s = append(s, fmt.Sprintf("%s %d bytes", g.Name, len(g.Body)))
			}
			return s
		}())
	}

	// Nothing the person did not add can be uploaded.
	e.ok(t, nil, "visit", srv.URL+"/upload")
	o = e.snap(t)
	input, note = o.ref(t, "input", "Attachment"), o.ref(t, "input", "Note")
	outside := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(outside, []byte("a private key of the user's"), 0o600)
	for _, name := range []string{"../report.pdf", "..", ".", "/etc/passwd", outside, "files/report.pdf", ".hidden", "a\nb"} {
		e.fails(t, "INVALID_ARGUMENT", "upload", input, name)
	}
	// Put in the store by a process of the user, not added by the person: a copy, a link.
	os.WriteFile(filepath.Join(e.storeDir(), "planted.txt"), []byte("not the person's"), 0o600)
	os.Symlink(outside, filepath.Join(e.storeDir(), "key"))
	for _, name := range []string{"planted.txt", "key", "id_ed25519", "missing.pdf"} {
		m := e.errMessage(t, "FILE_UNKNOWN", "upload", input, name)
		if !strings.Contains(m, "report.pdf") {
			t.Errorf("FILE_UNKNOWN does not name the files the person added: %q", m)
		}
	}
	// The approved name, its file replaced: by a link to a file outside, by other bytes.
	approved := filepath.Join(e.storeDir(), "report.pdf")
	os.Rename(approved, approved+".kept")
	os.Symlink(outside, approved)
	e.fails(t, "FILE_CHANGED", "upload", input, "report.pdf")
	os.Remove(approved)
	changed := append([]byte(nil), body...)
	changed[100] ^= 1
	os.WriteFile(approved, changed, 0o600)
	e.fails(t, "FILE_CHANGED", "upload", input, "report.pdf")
	os.Rename(approved+".kept", approved)
	// Not a file input.
	e.fails(t, "NOT_A_FILE_INPUT", "upload", note, "report.pdf")
	e.ok(t, nil, "click", o.ref(t, "button", "Send"))
	if got := srv.received(); len(got) != 1 {
		t.Fatalf("a refused upload reached the site: %d files", len(got))
	}

	// Over MCP: no tool takes a path; fill's upload names a file the person added.
	c := e.mcpConnect(t, "lists-test")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.call(t, ctx, "visit", map[string]any{"url": srv.URL + "/upload"}, nil)
	res := c.call(t, ctx, "snapshot", map[string]any{}, nil)
	mcpInput := ""
	for _, line := range strings.Split(text(res), "\n") {
		if strings.Contains(line, "Attachment") {
			mcpInput, _, _ = strings.Cut(line, " ")
		}
	}
	if mcpInput == "" {
		t.Fatalf("no file input in the MCP outline: %s", text(res))
	}
	c.callErr(t, ctx, "fill", map[string]any{"ref": mcpInput, "upload": "../report.pdf"}, "INVALID_ARGUMENT")
	c.callErr(t, ctx, "fill", map[string]any{"ref": mcpInput, "upload": "planted.txt"}, "FILE_UNKNOWN")
	c.callErr(t, ctx, "fill", map[string]any{"ref": mcpInput, "upload": "report.pdf", "text": "x"}, "INVALID_ARGUMENT")
	var filled struct {
		Upload, SHA256 string
		Bytes          int64
		Filled         bool
	}
	c.call(t, ctx, "fill", map[string]any{"ref": mcpInput, "upload": "report.pdf"}, &filled)
	if !filled.Filled || filled.Upload != "report.pdf" || filled.SHA256 != digest {
		t.Fatalf("fill with upload: %+v", filled)
	}

	// Removed: the approval and the file go.
	e.ok(t, nil, "files", "remove", "report.pdf")
	if _, err := os.Lstat(approved); !os.IsNotExist(err) {
		t.Fatalf("the removed file is still in the store: %v", err)
	}
	e.fails(t, "FILE_UNKNOWN", "upload", input, "report.pdf")
	e.fails(t, "FILE_UNKNOWN", "files", "remove", "report.pdf")
}

func TestDownloadsDenied(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := newListsSite(t)
	e.start(t)
	m := e.errMessage(t, "DOWNLOAD_DENIED", "visit", srv.URL+"/dl")
	if !strings.Contains(m, "lists-download.txt") || !strings.Contains(m, srv.URL) {
		t.Errorf("the visit's DOWNLOAD_DENIED does not name the file and its origin: %q", m)
	}
	e.ok(t, nil, "visit", srv.URL+"/dlpage")
	o := e.snap(t)
	e.fails(t, "DOWNLOAD_DENIED", "click", o.ref(t, "link", "Get the file"))
	// In an isolated session's own browser context too.
	e.ok(t, nil, "session", "create", "iso", "--isolated")
	e.fails(t, "DOWNLOAD_DENIED", "visit", srv.URL+"/dl", "--session", "iso")
	e.ok(t, nil, "stop")
	filepath.Walk(e.root, func(path string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), "lists-download") {
			t.Errorf("a denied download was written: %s", path)
		}
		return nil
	})
}

type consoleListed struct {
	Session   string
	Untrusted bool
	Total     int
	Dropped   int
	Next      string
	Stopped   string
	Messages  []struct{ Level, Text string }
}

type networkListed struct {
	Session   string
	Untrusted bool
	Total     int
	Dropped   int
	Next      string
	Requests  []listedRequest
}

type listedRequest struct {
	Method, URL, Type, Error string
	Status                   int
	Bytes                    int64
	Pending                  bool
}

func TestConsoleAndNetworkLists(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := newListsSite(t)
	e.start(t)

	e.ok(t, nil, "visit", srv.URL+"/app")
	e.ok(t, nil, "wait", "--text", "App", "--timeout", "10s")
	var cl consoleListed
	for i := 0; i < 100; i++ { // the page's fetch and its throw come a moment after the load
		e.ok(t, &cl, "console", "list")
		if cl.Total >= 7 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var lines []string
	for _, m := range cl.Messages {
		lines = append(lines, m.Level+" "+m.Text)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"log hello 42 Object", "info info line", "warning careful", "error it broke", "debug details", "log posted", "error Uncaught Error: boom"} {
		if !strings.Contains(all, want) {
			t.Errorf("console list lacks %q:\n%s", want, all)
		}
	}
	if !cl.Untrusted || cl.Session != "default" {
		t.Errorf("console list: %+v", cl)
	}
	e.ok(t, &cl, "console", "list", "--level", "error")
	if cl.Total != 2 || len(cl.Messages) != 2 {
		t.Errorf("--level error: %+v", cl)
	}

	var nl networkListed
	r := e.run("", "headless", "network", "list", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &nl); r.code != 0 || err != nil {
		t.Fatalf("network list: %+v", r)
	}
	for _, canary := range []string{"HDRCANARY", "BODYCANARY", "COOKIECANARY", "RESPCANARY", "RESPBODYCANARY"} {
		if strings.Contains(r.stdout+r.stderr, canary) {
			t.Errorf("network list shows a header or a body (%s): %s", canary, r.stdout)
		}
	}
	find := func(suffix string) (m string, status int, typ string) {
		for _, q := range nl.Requests {
			if strings.HasSuffix(q.URL, suffix) {
				return q.Method, q.Status, q.Type
			}
		}
		t.Errorf("network list lacks %s: %+v", suffix, nl.Requests)
		return "", 0, ""
	}
	if m, st, typ := find("/app"); m != "GET" || st != 200 || typ != "Document" {
		t.Errorf("the document: %s %d %s", m, st, typ)
	}
	if m, st, typ := find("/api/items?page=2"); m != "POST" || st != 201 || typ != "Fetch" {
		t.Errorf("the fetch: %s %d %s", m, st, typ)
	}
	if _, st, typ := find("/missing.png"); st != 404 || typ != "Image" {
		t.Errorf("the image: %d %s", st, typ)
	}
	if !strings.HasSuffix(nl.Requests[0].URL, "/app") {
		t.Errorf("the list does not begin with the document's own request: %+v", nl.Requests[0])
	}
	// (The browser's own request for the site's icon, when it was made, is the page's too.)
	e.ok(t, &nl, "network", "list", "--failed")
	if nl.Requests = slices.DeleteFunc(nl.Requests, func(r listedRequest) bool { return strings.HasSuffix(r.URL, "/favicon.ico") }); len(nl.Requests) != 1 || !strings.HasSuffix(nl.Requests[0].URL, "/missing.png") {
		t.Errorf("--failed: %+v", nl)
	}
	e.ok(t, &nl, "network", "list", "--type", "FETCH")
	if nl.Total != 1 {
		t.Errorf("--type FETCH: %+v", nl)
	}
	e.fails(t, "INVALID_ARGUMENT", "network", "list", "--type", "bogus")
	e.fails(t, "INVALID_ARGUMENT", "console", "list", "--level", "loud")
	e.fails(t, "INVALID_ARGUMENT", "console", "list", "--limit", "251")
	e.fails(t, "INVALID_ARGUMENT", "console", "list", "--limit=-1")

	// One pagination: pages of 10, then the end; a cursor of another list, filter or session
	// is invalid; after the page loads another document, stale.
	e.ok(t, nil, "visit", srv.URL+"/many")
	e.ok(t, nil, "wait", "--text", "Many", "--timeout", "10s")
	var seen []string
	cursor := ""
	var firstCursor string
	for page := 0; ; page++ {
		args := []string{"console", "list", "--limit", "10"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		e.ok(t, &cl, args...)
		for _, m := range cl.Messages {
			seen = append(seen, m.Text)
		}
		if page == 0 {
			firstCursor = cl.Next
		}
		if cl.Next == "" {
			break
		}
		if page > 5 {
			t.Fatalf("more than 6 pages of 30 messages: %d so far, the last page %+v", len(seen), cl)
		}
		cursor = cl.Next
	}
	if len(seen) != 30 || seen[0] != "line 0" || seen[29] != "line 29" {
		t.Fatalf("the pages held %d messages: %q", len(seen), seen)
	}
	e.fails(t, "PAGINATION_CURSOR_INVALID", "network", "list", "--cursor", firstCursor)
	e.fails(t, "PAGINATION_CURSOR_INVALID", "console", "list", "--cursor", firstCursor, "--level", "error")
	e.fails(t, "PAGINATION_CURSOR_INVALID", "console", "list", "--cursor", "c"+strings.Repeat("A", 26))
	e.ok(t, nil, "session", "create", "other")
	e.fails(t, "PAGINATION_CURSOR_INVALID", "console", "list", "--cursor", firstCursor, "--session", "other")
	e.ok(t, nil, "console", "list", "--cursor", firstCursor, "--limit", "10") // still live
	e.ok(t, nil, "visit", srv.URL+"/later")
	e.fails(t, "PAGINATION_CURSOR_STALE", "console", "list", "--cursor", firstCursor, "--limit", "10")

	// A flood of messages and requests: bounded; the console is no longer read; the browser
	// and the other sessions go on.
	e.ok(t, nil, "visit", srv.URL+"/flood", "--timeout", "2m")
	for i := 0; i < 300; i++ {
		e.ok(t, &cl, "console", "list", "--limit", "1")
		if cl.Stopped != "" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if cl.Stopped == "" || cl.Total > 500 || cl.Dropped == 0 {
		t.Errorf("after a flood: total %d, dropped %d, stopped %q", cl.Total, cl.Dropped, cl.Stopped)
	}
	e.ok(t, &nl, "network", "list", "--limit", "250")
	if nl.Total > 500 || len(nl.Requests) > 250 {
		t.Errorf("network list after a flood: total %d, %d listed", nl.Total, len(nl.Requests))
	}
	e.ok(t, nil, "visit", srv.URL+"/app", "--session", "other")
	e.ok(t, nil, "snapshot", "--session", "other")
	e.ok(t, nil, "snapshot")
	// The next document is read again.
	e.ok(t, nil, "visit", srv.URL+"/later")
	for i := 0; i < 100; i++ {
		e.ok(t, &cl, "console", "list")
		if cl.Total == 1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cl.Stopped != "" || cl.Total != 1 || cl.Messages[0].Text != "a line of another document" {
		t.Errorf("after the flood, the next document: %+v", cl)
	}
}

// TestListsNeverShowAReleasedPassword: after a real sign-in by alias, a page of the signed-in
// site reads the password (never into its document) and logs it, or puts it in a URL,
// beyond the lists' cuts too: no list, CLI or MCP, shows it; each answers with a code.
func TestListsNeverShowAReleasedPassword(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	srv := newListsSite(t)
	const account = "alice@example.test"
	pw := newCanary()
	srv.SetAccount(account, pw)
	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, srv.URL, "main", account, pw)
	e.start(t)
	needles := lsNeedles("password", pw)
	var mu sync.Mutex
	var outputs []string
	run := func(args ...string) result {
		t.Helper()
		r := e.run("", "headless", withJSON(args)...)
		mu.Lock()
		outputs = append(outputs, r.stdout+r.stderr)
		mu.Unlock()
		return r
	}
	lsVisit(t, e, srv.URL+"/login")
	lsLoginOK(t, e, "authenticated", "--alias", "main")
	c := e.mcpConnect(t, "lists-hostile")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, page := range []string{"/leak-console", "/leak-console-long", "/leak-url", "/leak-url-long"} {
		t.Run(page, func(t *testing.T) {
			r := run("visit", srv.URL+page)
			if r.code == 0 {
				// The page's script runs after its load: what it logged or requested is
				// listed, or refused, by then.
				run("wait", "--text", "done", "--timeout", "10s")
			}
			for _, args := range [][]string{{"console", "list"}, {"network", "list"}, {"console", "list", "--level", "log"}, {"network", "list", "--type", "fetch"}} {
				r := run(args...)
				if r.code == 0 {
					continue // the page is gone (discarded), or this list never held it
				}
				if code := errCode(t, r); code != "SECRET_ON_PAGE" && code != "SECRET_EGRESS" {
					t.Errorf("%v: %s", args, code)
				}
			}
			for _, tool := range []string{"console_list", "network_list"} {
				res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(res)
				mu.Lock()
				outputs = append(outputs, string(b))
				mu.Unlock()
			}
		})
	}
	// A list whose page held it was refused, the page discarded, and the echo audited.
	b, _ := os.ReadFile(filepath.Join(e.root, "data", "headless", "audit.jsonl"))
	if !strings.Contains(string(b), `"console list"`) {
		t.Errorf("no echo record of a refused console list in the audit log")
	}
	mu.Lock()
	defer mu.Unlock()
	hay := strings.Join(outputs, "\n") + e.allOutput()
	for _, n := range needles {
		if strings.Contains(hay, string(n.b)) {
			t.Errorf("LEAK: %s in an output", n.name)
		}
	}
}
