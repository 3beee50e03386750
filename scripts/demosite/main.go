// Command demosite is the local test site of scripts/demo.sh: a tiny sign-in site on
// 127.0.0.1 that a person creates an account on, and that headless then signs in to by alias.
//
// Where the site's password comes from. The demo must not hand the password to the site through
// its arguments or environment (both are readable in /proc, and the demo's point is that the
// password travels through no such channel). So the site does what a real site does at account
// creation: it asks the person. At start it opens the terminal (/dev/tty) itself and reads the
// password twice with echo off, exactly as headless's own `credentials add` does. The person
// thus types the password once for the site (sign-up) and once into headless (saving it in the
// keyring, like a password manager), and the two learn it independently: the site's verdict
// ("Welcome" or "Invalid credentials") is a real check, not something headless told it.
//
// The site keeps the password in memory only, in plain text, because it is also the demo's
// leak witness: on SIGUSR1 it searches the directories named by -sweep for the password (raw,
// base64, hex, URL-encoded) and writes the hit counts to -report. A real site would keep only a
// hash; nothing here ever writes the password or its length to a file, a log or a socket.
//
// Pages: /login (username + password, posting to /login; a right password sets a session
// cookie and redirects to /home, a wrong one shows the form again with role=alert "Invalid
// credentials"), /home ("Welcome ACCOUNT" when signed in, else a redirect to /login), /logout.
// When it listens, it writes its base URL to -ready (the demo waits for that file).
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	account := flag.String("account", "demo@example.test", "the site's one account")
	ready := flag.String("ready", "", "write the base URL to this file once listening")
	report := flag.String("report", "", "write the leak sweep report to this file on SIGUSR1")
	var sweep multiFlag
	flag.Var(&sweep, "sweep", "directory to search for the password on SIGUSR1 (repeatable)")
	flag.Parse()
	log.SetFlags(log.Ltime)
	log.SetPrefix("demosite: ")

	pw, err := signUp(*account)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demosite:", err)
		os.Exit(1)
	}
	s := &site{account: *account, password: pw, sessions: map[string]bool{}}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	if *ready != "" {
		if err := writeFile(*ready, base+"\n"); err != nil {
			log.Fatal(err)
		}
	}
	log.Printf("listening on %s, account %s", base, *account)

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for sig := range sigs {
			if sig != syscall.SIGUSR1 {
				s.mu.Lock()
				clear(s.password)
				s.mu.Unlock()
				log.Printf("stopping (%v)", sig)
				os.Exit(0)
			}
			out := s.sweep(sweep)
			if *report != "" {
				if err := writeFile(*report, out); err != nil {
					log.Print(err)
				}
			}
		}
	}()
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(l))
}

// writeFile writes content to path atomically (the demo polls for it).
func writeFile(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// signUp asks the person at the terminal for the account's password, twice, echo off.
func signUp(account string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("the demo site reads its password from your terminal: %w", err)
	}
	defer tty.Close()
	fmt.Fprintf(tty, "The demo site is creating the account %s.\n", account)
	for {
		pw, err := readSecret(tty, "Choose its password (at least 8 characters; echo is off): ")
		if err != nil {
			return nil, err
		}
		if len(pw) < 8 {
			clear(pw)
			fmt.Fprintln(tty, "Too short: at least 8 characters, please.")
			continue
		}
		again, err := readSecret(tty, "Repeat it: ")
		if err != nil {
			clear(pw)
			return nil, err
		}
		same := subtle.ConstantTimeCompare(pw, again) == 1
		clear(again)
		if same {
			fmt.Fprintln(tty, "Account created on the demo site.")
			return pw, nil
		}
		clear(pw)
		fmt.Fprintln(tty, "The two entries differ; again, please.")
	}
}

// readSecret reads one line from the terminal with echo off ("stty -echo" on the terminal
// itself, so the site needs nothing beyond the standard library), restoring echo afterwards,
// also when the person presses Ctrl-C.
func readSecret(tty *os.File, prompt string) ([]byte, error) {
	stty := func(arg string) error {
		c := exec.Command("stty", arg)
		c.Stdin = tty
		return c.Run()
	}
	fmt.Fprint(tty, prompt)
	if err := stty("-echo"); err != nil {
		return nil, fmt.Errorf("turn terminal echo off: %w", err)
	}
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case <-intr:
			stty("echo")
			fmt.Fprintln(tty)
			os.Exit(130)
		case <-done:
		}
	}()
	line, err := bufio.NewReaderSize(tty, 1024).ReadSlice('\n')
	// Copy out of the reader's buffer, then wipe the buffer.
	pw := bytes.Clone(bytes.TrimRight(line, "\r\n"))
	clear(line)
	close(done)
	signal.Stop(intr)
	stty("echo")
	fmt.Fprintln(tty)
	if err != nil && !errors.Is(err, io.EOF) {
		clear(pw)
		return nil, err
	}
	return pw, nil
}

type site struct {
	account  string
	mu       sync.Mutex
	password []byte
	sessions map[string]bool
	signIns  int // successful sign-ins: the site really received the right password
}

func (s *site) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if s.signedIn(r) {
			http.Redirect(w, r, "/home", http.StatusSeeOther)
			return
		}
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		s.loginPage(w, "")
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		user := r.PostForm.Get("username")
		pw := []byte(r.PostForm.Get("password"))
		s.mu.Lock()
		ok := user == s.account && subtle.ConstantTimeCompare(pw, s.password) == 1
		if ok {
			s.signIns++
		}
		s.mu.Unlock()
		clear(pw)
		if !ok {
			log.Printf("sign-in refused for %q: wrong account or password", user)
			w.WriteHeader(http.StatusUnauthorized)
			s.loginPage(w, "Invalid credentials")
			return
		}
		token := rand.Text()
		s.mu.Lock()
		s.sessions[token] = true
		s.mu.Unlock()
		log.Printf("sign-in accepted for %s: the password matched the one chosen at sign-up", user)
		http.SetCookie(w, &http.Cookie{Name: "demo_session", Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		if !s.signedIn(r) {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Home</title>
<h1>Welcome %s</h1>
<p>You are signed in to the demo site.</p>
<a href="/logout">Sign out</a>`, html.EscapeString(s.account))
	})
	mux.HandleFunc("GET /logout", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("demo_session"); err == nil {
			s.mu.Lock()
			delete(s.sessions, c.Value)
			s.mu.Unlock()
		}
		http.SetCookie(w, &http.Cookie{Name: "demo_session", Value: "", Path: "/", MaxAge: -1})
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
	return mux
}

func (s *site) signedIn(r *http.Request) bool {
	c, err := r.Cookie("demo_session")
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

func (s *site) loginPage(w http.ResponseWriter, alert string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	msg := ""
	if alert != "" {
		msg = `<p role="alert">` + html.EscapeString(alert) + `</p>`
	}
	fmt.Fprintf(w, `<!doctype html><title>Sign in</title>
<h1>Sign in to the demo site</h1>
%s
<form action="/login" method="post">
 <label>Email <input type="email" name="username" autocomplete="username"></label>
 <label>Password <input type="password" name="password" autocomplete="current-password"></label>
 <button type="submit">Sign in</button>
</form>`, msg)
}

// sweep searches every regular file under dirs for the password in the encodings a leak would
// take, and returns a report that never contains the password or its length.
func (s *site) sweep(dirs []string) string {
	s.mu.Lock()
	pw := bytes.Clone(s.password)
	signIns := s.signIns
	s.mu.Unlock()
	defer clear(pw)
	needles := map[string][]byte{"raw": pw}
	add := func(name, v string) {
		for _, n := range needles {
			if string(n) == v {
				return
			}
		}
		needles[name] = []byte(v)
	}
	add("base64", base64.StdEncoding.EncodeToString(pw))
	add("base64 (unpadded)", base64.RawStdEncoding.EncodeToString(pw))
	add("base64url", base64.URLEncoding.EncodeToString(pw))
	add("base64url (unpadded)", base64.RawURLEncoding.EncodeToString(pw))
	add("hex", hex.EncodeToString(pw))
	add("HEX", strings.ToUpper(hex.EncodeToString(pw)))
	add("URL-encoded", url.QueryEscape(string(pw)))
	add("URL-encoded (path)", url.PathEscape(string(pw)))

	var b strings.Builder
	files, total := 0, int64(0)
	hits := map[string]int{}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintf(&b, "  could not read %s: %v\n", path, err)
				return nil
			}
			files++
			total += int64(len(data))
			for name, n := range needles {
				if c := bytes.Count(data, n); c > 0 {
					hits[path] += c
					fmt.Fprintf(&b, "  HIT: %s holds the password (%s) %d time(s)\n", path, name, c)
				}
			}
			clear(data)
			return nil
		})
	}
	sum := 0
	for _, c := range hits {
		sum += c
	}
	fmt.Fprintf(&b, "searched %d files (%d bytes) under %s\n", files, total, strings.Join(dirs, ", "))
	fmt.Fprintf(&b, "for the password as raw bytes, base64, base64url, hex and URL-encoded: %d hits\n", sum)
	if signIns > 0 {
		fmt.Fprintf(&b, "(not a vacuous search: the site itself received the right password in %d sign-in(s))\n", signIns)
	} else {
		fmt.Fprintln(&b, "(but the site's password never reached the site in this run, so 0 hits proves little here)")
	}
	return b.String()
}
