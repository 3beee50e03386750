package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/headless-dev/headless/internal/atomicfile"
)

// passwordPrefs turn Chromium's own password manager off. Checked against Chromium 156: with
// credentials_enable_service false, chrome://password-manager-internals logs "Saving disabled"
// and "Decision: DROP the password" for a submitted login form (the default logs "Decision:
// ASK the user" and "Show password prompt"), and chrome.settingsPrivate reports every pref
// below that Settings shows with the value written here.
var passwordPrefs = []struct {
	path  []string
	value bool
}{
	{[]string{"credentials_enable_service"}, false},                    // offer to save passwords
	{[]string{"credentials_enable_autosignin"}, false},                 // automatic sign-in with saved credentials
	{[]string{"credentials_enable_passkeys"}, false},                   // offer to save passkeys
	{[]string{"credentials_enable_automatic_passkey_upgrades"}, false}, // create passkeys after a password sign-in
	{[]string{"automated_password_change_enabled"}, false},             // change saved passwords automatically
	{[]string{"profile", "password_manager_leak_detection"}, false},    // check typed credentials against leaks
	// Inert in Chromium 156 (the name is gone from the binary); older builds honour it.
	{[]string{"profile", "password_manager_enabled"}, false},
}

// applyPasswordPrefs sets passwordPrefs in m and reports whether anything changed. A
// non-object on the way to a pref is replaced by an object.
func applyPasswordPrefs(m map[string]any) (changed bool) {
	for _, p := range passwordPrefs {
		cur := m
		for _, k := range p.path[:len(p.path)-1] {
			next, ok := cur[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[k] = next
				changed = true
			}
			cur = next
		}
		last := p.path[len(p.path)-1]
		if v, ok := cur[last].(bool); !ok || v != p.value {
			cur[last] = p.value
			changed = true
		}
	}
	return changed
}

// setPasswordPrefs returns prefs (a JSON object; nil is {}) with passwordPrefs set and every
// other key kept.
func setPasswordPrefs(prefs []byte) ([]byte, error) {
	m := map[string]any{}
	if prefs != nil {
		var err error
		if m, err = decodeObject(prefs); err != nil {
			return nil, err
		}
	}
	applyPasswordPrefs(m)
	return encodePrefs(m)
}

// encodePrefs writes m compactly, numbers exact and without HTML escaping, as Chromium does.
func encodePrefs(m map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// sessionsNames are where Chromium writes its session restore data (Default/Sessions/Session_*
// and Tabs_*, and Chromium 156's Default/Sessions_Encrypted/, the same records encrypted with
// the profile's own key, which the agent's user can read from the keyring): every tab's
// history entries with their page state, that is, the form fields' values and the body of a
// form submission. headless never restores tabs, so the profile keeps a regular empty file
// (read-only) under each name: Chromium cannot create the directories and writes no session
// data at all. Red-team round 5 read a one-time code out of Sessions/: a step-up answered
// 200 in place left its POST body (otp=…) in the history entry, and Chromium wrote it to disk
// before the host could rewrite the entry (a sign-in answered in place would have left the
// password there the same way); round 5c found Chromium writing Sessions_Encrypted/ instead
// once Sessions was blocked.
var sessionsNames = []string{"Sessions", "Sessions_Encrypted"}

// blockSessions makes each of sessionsNames in Default of profile dir a regular empty
// read-only file, removing a directory (and the session data in it) or anything else found
// there.
func blockSessions(dir string) error {
	for _, name := range sessionsNames {
		if err := blockOne(filepath.Join(dir, "Default", name)); err != nil {
			return fmt.Errorf("block session restore data: %w", err)
		}
	}
	return nil
}

func blockOne(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return nil
	}
	if err == nil {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o400)
	if err != nil {
		return err
	}
	return f.Close()
}

// reassertPrefs makes sure Default/Preferences holds passwordPrefs, rewriting it atomically
// (every other key kept) only when one differs, that Chromium can write no session restore
// data (blockSessions), and that nothing planted in the profile routes the browser's traffic
// or runs as a site (disarm). It removes temporary files of a rewrite that was interrupted.
func reassertPrefs(dir string) error {
	if err := reassertPasswordPrefs(dir); err != nil {
		return err
	}
	if err := disarm(dir); err != nil {
		return err
	}
	return blockSessions(dir)
}

// The profile is the agent's to write (the same user), while the host is stopped too; at
// every start, before Chromium reads it, what could route the browser's traffic elsewhere or
// run code as a site goes. Red-team round 6b put a proxy into Default/Preferences and read a
// sign-in's POST, password included (the host also passes --no-proxy-server, which wins over
// any profile setting, and --disable-extensions). Planted the same way:
//   - Local State: secure DNS ("dns_over_https": a resolver of the agent's choosing) and
//     chrome://flags entries ("browser.enabled_labs_experiments", applied as command-line
//     switches at start);
//   - Default/Cache, Default/Code Cache: responses (a sign-in page with a script of the
//     agent's) and compiled code served as the site's own (the host also keeps no disk cache:
//     --disk-cache-size=1);
//   - Default/Service Worker: a worker registered for the site's origin, which sees every
//     request of its pages, a sign-in's POST included;
//   - WidevineCdm: its hint file names a library that every zygote, and so every renderer,
//     loads (red-team round 6e read a sign-in's POST out of a renderer so). It becomes an
//     empty read-only file, as Sessions does: no hint can be written under it.
var (
	disarmPrefs = [][]string{{"proxy"},
		// Chromium's password reuse detection keeps a salted hash and the length of every
		// password typed on these URLs in the profile (a lead of red-team round 6e).
		{"safebrowsing", "password_protection_login_urls"}, {"safebrowsing", "password_protection_change_password_url"},
		{"profile", "password_hash_data_list"},
		// A "proceed anyway" kept for a host: with a resolver of the agent's (the start race,
		// SECURITY.md), a certificate of its own would be taken without a warning.
		{"profile", "content_settings", "exceptions", "ssl_cert_decisions"}}
	// (Local State's profile.last_used, which would choose the profile, is left to Chromium,
	// which writes "Default" there itself: --profile-directory=Default wins over it.)
	disarmLocalState = [][]string{{"dns_over_https"}, {"browser", "enabled_labs_experiments"}}
	disarmDirs       = []string{"Cache", "Code Cache", "Service Worker"}
	blockedRootNames = []string{"WidevineCdm"}
)

// disarm removes disarmPrefs from Default/Preferences, disarmLocalState from Local State (each
// file rewritten atomically, every other key kept, only when something was there) and the
// disarmDirs of Default.
func disarm(dir string) error {
	for _, f := range []struct {
		path string
		keys [][]string
	}{{filepath.Join(dir, "Default", "Preferences"), disarmPrefs}, {filepath.Join(dir, "Local State"), disarmLocalState}} {
		if err := removeKeys(f.path, f.keys); err != nil {
			return fmt.Errorf("disarm the profile: %w", err)
		}
	}
	for _, name := range disarmDirs {
		if err := os.RemoveAll(filepath.Join(dir, "Default", name)); err != nil {
			return fmt.Errorf("disarm the profile: %w", err)
		}
	}
	for _, name := range blockedRootNames {
		if err := blockOne(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("disarm the profile: %w", err)
		}
	}
	return nil
}

// removeKeys deletes each key path from the JSON object in path; a missing file is fine.
func removeKeys(path string, keys [][]string) error {
	b, err := readRegular(path, maxJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	m, err := decodeObject(b)
	if err != nil {
		return err
	}
	if !deleteKeys(m, keys) {
		return nil
	}
	out, err := encodePrefs(m)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, out)
}

// parentOf returns the object of m that holds key path k's last key, or nil when a step on
// the way is missing or not an object.
func parentOf(m map[string]any, k []string) map[string]any {
	cur := m
	for _, step := range k[:len(k)-1] {
		next, ok := cur[step].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

// deleteKeys deletes each key path from m whose value is not empty, and reports whether it
// deleted anything.
func deleteKeys(m map[string]any, keys [][]string) (changed bool) {
	for _, k := range keys {
		cur := parentOf(m, k)
		if cur == nil {
			continue
		}
		// An empty value sets nothing (Chromium itself writes an empty password_hash_data_list):
		// it stays, so that a profile Chromium left is not rewritten at every start.
		if v, ok := cur[k[len(k)-1]]; ok && !empty(v) {
			delete(cur, k[len(k)-1])
			changed = true
		}
	}
	return changed
}

func reassertPasswordPrefs(dir string) error {
	def := filepath.Join(dir, "Default")
	path := filepath.Join(def, "Preferences")
	if es, err := os.ReadDir(def); err == nil {
		for _, e := range es {
			if strings.HasPrefix(e.Name(), ".Preferences.tmp-") {
				if err := os.Remove(filepath.Join(def, e.Name())); err != nil {
					return fmt.Errorf("re-assert preferences: %w", err)
				}
			}
		}
	}
	b, err := readRegular(path, maxJSON)
	m := map[string]any{}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(def, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("re-assert preferences: %w", err)
		}
	case err != nil:
		return fmt.Errorf("re-assert preferences: %w", err)
	default:
		if m, err = decodeObject(b); err != nil {
			return fmt.Errorf("re-assert preferences: %w", err)
		}
		if !applyPasswordPrefs(m) {
			return nil
		}
	}
	applyPasswordPrefs(m)
	out, err := encodePrefs(m)
	if err != nil {
		return fmt.Errorf("re-assert preferences: %w", err)
	}
	if err := atomicfile.Write(path, out); err != nil {
		return fmt.Errorf("re-assert preferences: %w", err)
	}
	return nil
}

// empty reports whether a JSON value is null, "", [] or {}.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}
