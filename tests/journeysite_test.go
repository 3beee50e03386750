//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
)

// The journey pages of the login site (loginsite_test.go), on its main origin:
//
//	GET  /shop           signed in: "Stock: N" (10 per account at first), a quantity field, a
//	                     colour select, a gift-wrap checkbox, Reserve (script: POST
//	                     /api/reserve, then "Reserved" or "Not enough stock" in #status and the
//	                     new stock), a disabled Cancel, a "Help" label that shows a tooltip on
//	                     hover, a tall spacer and a footer; the theme the page sees
//	                     (prefers-color-scheme) in #theme and its viewport width in #vw; a
//	                     100x40 CSS-pixel box #box (its reported width shows the zoom).
//	                     Signed out: "Not signed in" and a link to /login.
//	POST /api/reserve    {"quantity": N} for the signed-in account
//	GET  /secret-fields  a form with a password field, a one-time code and a field named
//	                     like a passcode, none of them a sign-in form's
//	GET  /list           five items, two of them marked done
func (ls *loginSite) journeyRoutes(mux *http.ServeMux) {
	stockOf := func(account string) int {
		ls.mu.Lock()
		defer ls.mu.Unlock()
		if ls.stock == nil {
			ls.stock = map[string]int{}
		}
		if _, ok := ls.stock[account]; !ok {
			ls.stock[account] = 10
		}
		return ls.stock[account]
	}
	mux.HandleFunc("GET /shop", func(w http.ResponseWriter, r *http.Request) {
		a := ls.account(r)
		if a == "" {
			lsPage(w, "Shop", `<h1>Not signed in</h1><a href="/login">Sign in</a>`)
			return
		}
		lsPage(w, "Shop", `<style>
@media (prefers-color-scheme: dark) { body { background: #111; color: #eee } }
#box { width: 100px; height: 40px; background: #8a8 }
#tooltip[hidden] { display: none }
</style>
<h1>Shop</h1><p>Signed in as `+html.EscapeString(a)+`</p>
<p id="stock">Stock: `+fmt.Sprint(stockOf(a))+`</p>
<p id="theme"></p><p id="vw"></p>
<form id="reserve" action="/reserve" method="post" onsubmit="return false">
 <label>Quantity <input type="number" name="quantity" id="quantity" min="1"></label>
 <label>Colour <select name="colour" id="colour"><option>Red</option><option value="b">Blue</option></select></label>
 <label><input type="checkbox" name="gift" id="gift"> Gift wrap</label>
 <button type="button" id="reserve-btn">Reserve</button>
 <button type="button" disabled>Cancel</button>
</form>
<p id="status" role="status"></p>
<div id="box">Box</div>
<p id="help">Help</p><div id="tooltip" hidden>Reservations hold for ten minutes</div>
<div style="height: 3000px"></div>
<p id="footer">Footer <a href="/list?page=1">All lists</a></p>
<script>
document.getElementById("theme").textContent = matchMedia("(prefers-color-scheme: dark)").matches ? "theme dark" : "theme light";
document.getElementById("vw").textContent = "width " + window.innerWidth;
document.getElementById("help").addEventListener("mouseover", function () { document.getElementById("tooltip").hidden = false; });
</script>`+reserveScript("reserve-btn"))
	})
	mux.HandleFunc("POST /api/reserve", func(w http.ResponseWriter, r *http.Request) {
		a := ls.account(r)
		var in struct {
			Quantity int `json:"quantity"`
		}
		json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		if a == "" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"ok":false,"stock":0}`)
			return
		}
		left := stockOf(a)
		ok := in.Quantity > 0 && in.Quantity <= left
		ls.mu.Lock()
		if ok {
			ls.stock[a] -= in.Quantity
		}
		left = ls.stock[a]
		ls.mu.Unlock()
		fmt.Fprintf(w, `{"ok":%v,"stock":%d}`, ok, left)
	})
	mux.HandleFunc("GET /secret-fields", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "Settings", `<h1>Settings</h1>
<form method="post" action="/settings">
 <label>Display name <input type="text" name="display" id="display"></label>
 <label>Signing key <input type="password" name="signing" id="signing"></label>
 <label>Code <input type="text" name="code" id="code" autocomplete="one-time-code"></label>
 <label>Door <input type="text" name="door_passcode" id="door"></label>
 <button type="submit">Save</button>
</form>`)
	})
	mux.HandleFunc("GET /list", func(w http.ResponseWriter, r *http.Request) {
		lsPage(w, "List", `<h1>List</h1><ul>
<li class="done">One</li><li>Two</li><li class="done">Three</li><li>Four</li><li>Five</li></ul>`)
	})
}
