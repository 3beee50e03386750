//go:build linux

package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// swSite is a site whose own page registers a service worker that answers /probe itself (and
// sees every request of the pages it controls, as one planted in the profile would).
type swSite struct {
	srv    *httptest.Server
	probes atomic.Int32
}

func newSWSite(t *testing.T) *swSite {
	s := &swSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `self.addEventListener('install', e => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', e => {
  if (new URL(e.request.url).pathname === '/probe') {
    e.respondWith(new Response('<title>probe</title><h1>from the service worker</h1>', {headers: {'Content-Type': 'text/html'}}));
  }
});`)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>register</title><p id="s">registering</p><script>
navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(reg => {
  document.getElementById('s').textContent = 'worker ' + reg.active.state;
});</script>`)
	})
	mux.HandleFunc("/probe", func(w http.ResponseWriter, r *http.Request) {
		s.probes.Add(1)
		fmt.Fprint(w, `<!doctype html><title>probe</title><h1>from the network</h1>`)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// TestServiceWorkersBypassed: a service worker of a site's origin — one the site registered,
// or one planted in the durable profile, which any process of the user can do (red-team round
// 6c planted one that read a sign-in's POST, password included) — sees none of the requests of
// the pages the host drives: with a worker active for the origin, its page still loads from
// the network.
func TestServiceWorkersBypassed(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	site := newSWSite(t)
	e.start(t)
	lsVisit(t, e, site.srv.URL+"/register")
	if r := e.run("", "headless", "wait", "--text", "worker activ", "--timeout", "15s"); r.code != 0 {
		t.Fatalf("the site's worker never became active: %s", e.run("", "headless", "snapshot").stdout)
	}
	lsVisit(t, e, site.srv.URL+"/probe")
	snap := e.run("", "headless", "snapshot")
	if !strings.Contains(snap.stdout, "from the network") || strings.Contains(snap.stdout, "from the service worker") || site.probes.Load() != 1 {
		t.Fatalf("with a service worker active for the origin, /probe was answered by it (network hits %d):\n%s", site.probes.Load(), snap.stdout)
	}
	e.run("", "headless", "stop")
}
