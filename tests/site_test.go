//go:build linux

package tests

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// site is the local test site the browser tests visit: served by the test process itself on
// 127.0.0.1 (http is allowed for loopback).
func site(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Home</title><h1>Welcome</h1>
<a href="/next">Next page</a>
<form action="/submitted" method="post">
 <label>User <input name="user" id="user"></label>
 <label>Password <input type="password" name="pw" value="prefilled-pw-canary"></label>
 <button>Sign in</button>
</form>`)
	})
	mux.HandleFunc("/next", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Next</title><h2>Second page</h2><input id="q" name="q"><p>ready</p>`)
	})
	mux.HandleFunc("/submitted", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		fmt.Fprintf(w, `<!doctype html><title>Submitted</title><p>user=%s</p>`, html.EscapeString(r.PostForm.Get("user")))
	})
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("v")
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: v, Path: "/", MaxAge: 86400})
		fmt.Fprintf(w, `<!doctype html><title>Set</title><p id="done">set</p>
<script>localStorage.setItem("ls", %q);</script>`, v)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		v := "none"
		if err == nil {
			v = c.Value
		}
		fmt.Fprintf(w, `<!doctype html><title>Echo</title><p>cookie=%s</p><p id="ls">storage=?</p>
<script>document.getElementById("ls").textContent = "storage=" + (localStorage.getItem("ls") || "none");</script>`, html.EscapeString(v))
	})
	// The pages of the page verbs (verbs_e2e_test.go).
	mux.HandleFunc("/choose", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Choose</title><h1>Choose</h1>
<label>Colour <select id="colour" name="colour">
 <option value="">Pick one</option><option value="r">Red</option><option value="g">Green</option>
 <option value="b" disabled>Blue</option><option value="Green">Lime</option>
</select></label>
<label>Toppings <select id="top" name="top" multiple size="4">
 <optgroup label="Classic"><option value="ch">Cheese</option><option value="ol" label="Olives">olive (black)</option></optgroup>
 <option value="mu" selected>Mushroom</option><option value="x" hidden>Secret menu</option>
</select></label>
<label>Frozen <select name="frozen" disabled><option>Only</option></select></label>
<label>Go to <select name="go" onchange="location.href = '/next'"><option value="stay">Here</option><option value="next">Next page</option></select></label>
<label>Note <input name="note"></label>
<p id="log">events:</p>
<script>
for (const id of ["colour", "top"]) {
  for (const type of ["input", "change"]) {
    document.getElementById(id).addEventListener(type, function (ev) {
      const sel = Array.from(ev.target.selectedOptions).map(function (o) { return o.value; }).join("+");
      document.getElementById("log").textContent += " " + id + "." + type + "=" + sel;
    });
  }
}
</script>`)
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Long</title><style>body { margin: 0 } .gap { height: 3000px }</style>
<h1>Top of the long page</h1><a href="#part2">Part 2</a>
<div class="gap"></div>
<h2 id="part2">Part 2</h2>
<button id="box" style="display:block; width:120px; height:80px; margin:0; padding:0; border:0; background:rgb(255,0,0); color:rgb(255,0,0)">Red box</button>
<div id="pane" style="height:100px; overflow:auto"><p>Pane top</p><div style="height:2000px"></div><p>Pane bottom</p></div>
<div class="gap"></div>
<button>Bottom button</button>`)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Huge</title><style>body { margin: 0 }</style><h1>Huge</h1><div style="height:40000px"></div><p>End</p>`)
	})
	mux.HandleFunc("/hover", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hover</title>
<button id="eye" onmouseover="document.getElementById('tip').style.display = 'block'; document.getElementById('flash').style.visibility = 'hidden'"
 onmouseout="document.getElementById('tip').style.display = 'none'; document.getElementById('flash').style.visibility = 'visible'">Hover me</button>
<p id="tip" style="display:none; position:absolute; top:0; right:0; margin:0">Revealed on hover</p>
<p id="flash">Hidden while hovering</p>
<p id="later" style="height:0; overflow:hidden; margin:0">Shown later</p>
<button onclick="setTimeout(function () { document.getElementById('later').style.height = 'auto'; document.getElementById('spin').remove(); }, 700)">Load</button>
<p id="spin">Loading the panel</p>
<label>Search <input id="q" name="q" onkeydown="if (event.key === 'Enter') { document.getElementById('hit').textContent = 'searched ' + this.value; }"></label>
<p id="hit">not searched</p>`)
	})
	// /late: actions whose effect lands only when the requests they start have answered
	// (/slow answers after 700 ms: more than the 400 ms a click once waited, fixed).
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(700 * time.Millisecond):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, r.URL.Query().Get("say"))
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		// A request that does not end while a click could wait for it (the server's Close
		// waits for its handlers: it ends by itself after 5 s).
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	// /unfinished: a page whose document ends 5 s after it began (visit --timeout).
	mux.HandleFunc("/unfinished", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Unfinished</title><p>still loading`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		fmt.Fprint(w, `</p>`)
	})
	mux.HandleFunc("/late", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Late</title>
<script>
function say(id, text) { document.getElementById(id).textContent = text; }
function slow(word) { return fetch('/slow?say=' + word).then(function (r) { return r.text(); }); }
</script>
<button onclick="slow('answer-arrived').then(function (t) { say('one', t); })">Fetch</button>
<p id="one">no answer</p>
<button onclick="slow('first').then(function () { return slow('second-arrived'); }).then(function (t) { say('two', t); })">Chain</button>
<p id="two">no chain</p>
<button onclick="new EventSource('/stream'); say('three', 'streaming')">Stream</button>
<p id="three">no stream</p>
<label>Find <input id="f" onkeydown="if (event.key === 'Enter') { slow('found-' + this.value).then(function (t) { say('four', t); }); }"></label>
<p id="four">not found</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
