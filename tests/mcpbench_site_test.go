//go:build linux

package tests

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// mcpBenchSite is the site of BenchmarkMCP (tests/mcp_bench_test.go): pages shaped like a real
// web app's, the same for both MCP servers. Every page takes ?who=X (a letter naming the server
// driving it), so the site can count, per server, what really happened in the browser.
//
//	GET /login              a sign-in form (email, password, remember me, submit, two links)
//	GET /app                an admin console: header nav and search, a filter form, a table of
//	                        15 projects (a link and two buttons each), pagination, a create
//	                        form, a footer: about 70 interactive elements. "Sort by name"
//	                        reverses the rows in the page, with no request.
//	GET /app/project/{n}    a project's page (where a project link leads)
type mcpBenchSite struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int // "who path" → requests
}

var mcpBenchProjects = []struct{ name, owner, status, updated string }{
	{"Atlas", "alice@example.test", "Active", "2 hours ago"},
	{"Borealis", "bob@example.test", "Active", "yesterday"},
	{"Cobalt", "carol@example.test", "Paused", "3 days ago"},
	{"Delta", "dave@example.test", "Active", "4 days ago"},
	{"Ember", "erin@example.test", "Archived", "last week"},
	{"Fjord", "frank@example.test", "Active", "last week"},
	{"Granite", "grace@example.test", "Needs review", "2 weeks ago"},
	{"Harbor", "heidi@example.test", "Active", "2 weeks ago"},
	{"Indigo", "ivan@example.test", "Paused", "3 weeks ago"},
	{"Juniper", "judy@example.test", "Active", "last month"},
	{"Kestrel", "mallory@example.test", "Needs review", "last month"},
	{"Lumen", "niaj@example.test", "Active", "2 months ago"},
	{"Meridian", "olivia@example.test", "Archived", "2 months ago"},
	{"Nimbus", "peggy@example.test", "Active", "3 months ago"},
	{"Onyx", "rupert@example.test", "Needs review", "4 months ago"},
}

func newMCPBenchSite(t testing.TB) *mcpBenchSite {
	s := &mcpBenchSite{counts: map[string]int{}}
	who := func(r *http.Request) string { return r.URL.Query().Get("who") }
	count := func(r *http.Request, what string) {
		s.mu.Lock()
		s.counts[who(r)+" "+what]++
		s.mu.Unlock()
	}
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>body{font-family:sans-serif;margin:0} header,main,footer{padding:8px 16px} nav a{margin-right:8px}
table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:4px 8px} .pill{border-radius:8px;background:#eef;padding:0 6px}</style>
</head><body>%s</body></html>`, html.EscapeString(title), body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		count(r, "/login")
		page(w, "Sign in · Acme Console", `<main>
<h1>Sign in to Acme Console</h1>
<p>Use your work account.</p>
<form method="post" action="/login">
 <label>Email <input type="email" name="username" autocomplete="username" required></label>
 <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
 <label><input type="checkbox" name="remember"> Remember me</label>
 <button type="submit">Sign in</button>
</form>
<p><a href="/forgot">Forgot your password?</a> · <a href="/signup">Create an account</a></p>
</main>`)
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		count(r, "/app")
		q := "?who=" + url.QueryEscape(who(r))
		var b strings.Builder
		b.WriteString(`<header><a href="/app` + q + `"><strong>Acme Console</strong></a>
<nav aria-label="Main">`)
		for _, n := range []string{"Dashboard", "Projects", "Issues", "Team", "Reports", "Billing", "Settings"} {
			fmt.Fprintf(&b, `<a href="/app%s&amp;tab=%s">%s</a>`, q, strings.ToLower(n), n)
		}
		b.WriteString(`</nav>
<form role="search" action="/app" method="get"><label>Search <input type="search" name="q" placeholder="Search projects"></label> <button type="submit">Search</button></form>
<a href="/app/profile` + q + `">alice@example.test</a> <a href="/logout` + q + `">Sign out</a>
</header>
<main>
<h1>Projects</h1>
<p id="summary">15 projects · 3 need review · updated just now</p>
<form id="filters" onsubmit="return false">
 <label>Status <select name="status"><option>All</option><option>Active</option><option>Paused</option><option>Needs review</option><option>Archived</option></select></label>
 <label>Owner <input name="owner" placeholder="anyone"></label>
 <label><input type="checkbox" name="mine"> Only mine</label>
 <button type="button" id="sort">Sort by name</button>
</form>
<table><caption>All projects</caption>
<thead><tr><th>Name</th><th>Owner</th><th>Status</th><th>Updated</th><th>Actions</th></tr></thead>
<tbody id="rows">`)
		for i, p := range mcpBenchProjects {
			fmt.Fprintf(&b, `<tr><td><a href="/app/project/%d%s">Project %s</a></td><td>%s</td><td><span class="pill">%s</span></td><td>%s</td><td><button type="button">Edit</button> <button type="button">Archive</button></td></tr>
`, i+1, q, p.name, p.owner, p.status, p.updated)
		}
		b.WriteString(`</tbody></table>
<nav aria-label="Pagination"><button type="button" disabled>Previous</button> <span>Page 1 of 3</span> <button type="button">Next</button></nav>
<section><h2>New project</h2>
<form method="post" action="/app/new">
 <label>Name <input name="name" required></label>
 <label>Description <textarea name="description" rows="2"></textarea></label>
 <label>Visibility <select name="visibility"><option>Private</option><option>Internal</option><option>Public</option></select></label>
 <button type="submit">Create project</button>
</form></section>
</main>
<footer><a href="/docs">Documentation</a> · <a href="/status">Status</a> · <a href="/privacy">Privacy</a> · <span>© Acme</span></footer>
<script>
document.getElementById("sort").addEventListener("click", function () {
  var rows = document.getElementById("rows");
  Array.from(rows.children).reverse().forEach(function (tr) { rows.appendChild(tr); });
});
</script>`)
		page(w, "Projects · Acme Console", b.String())
	})
	mux.HandleFunc("GET /app/project/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n < 1 || n > len(mcpBenchProjects) {
			http.NotFound(w, r)
			return
		}
		count(r, "/app/project")
		p := mcpBenchProjects[n-1]
		page(w, "Project "+p.name+" · Acme Console", fmt.Sprintf(`<main><p><a href="/app?who=%s">All projects</a></p>
<h1>Project %s</h1><dl><dt>Owner</dt><dd>%s</dd><dt>Status</dt><dd>%s</dd><dt>Updated</dt><dd>%s</dd></dl>
<button type="button">Edit</button></main>`, url.QueryEscape(who(r)), p.name, p.owner, p.status, p.updated))
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Count returns how many times who requested what ("/login", "/app", "/app/project").
func (s *mcpBenchSite) Count(who, what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[who+" "+what]
}
