package profile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Read caps: a marker is tiny; Chromium's JSON files are kilobytes to a few megabytes.
const (
	maxMarker = 64 << 10
	maxJSON   = 64 << 20
)

// marker is the content of headless-profile.json.
type marker struct {
	Version       int       `json:"version"`
	Created       time.Time `json:"created"`
	PasswordStore string    `json:"password_store"`
}

func newMarker(now time.Time) ([]byte, error) {
	b, err := json.MarshalIndent(marker{Version: markerVersion, Created: now.UTC(), PasswordStore: PasswordStore}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// JSON files that must be JSON objects when present, relative to the profile directory.
var jsonFiles = []string{
	"Local State",
	filepath.Join("Default", "Preferences"),
	filepath.Join("Default", "Secure Preferences"),
}

// Cookie databases that must look like SQLite databases when present. Chromium moved the
// file from Default/Cookies to Default/Network/Cookies; either may exist.
var cookieFiles = []string{
	filepath.Join("Default", "Cookies"),
	filepath.Join("Default", "Network", "Cookies"),
}

// check inspects an existing profile path without changing it. It returns a non-empty reason
// when the profile must be moved aside, and an error only when it could not look or the
// profile must be neither used nor moved (a marker from a newer headless).
func check(dir string, fi fs.FileInfo) (reason string, err error) {
	if !fi.IsDir() {
		return fmt.Sprintf("foreign: %s is not a directory (%v)", dir, fi.Mode().Type()), nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return fmt.Sprintf("foreign: %s is not owned by uid %d", dir, os.Getuid()), nil
	}
	if reason, err := checkMarker(dir); reason != "" || err != nil {
		return reason, err
	}
	if fi, err := os.Lstat(filepath.Join(dir, "Default")); err == nil && !fi.IsDir() {
		return fmt.Sprintf("corrupt: Default is not a directory (%v)", fi.Mode().Type()), nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	for _, name := range jsonFiles {
		b, err := readRegular(filepath.Join(dir, name), maxJSON)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("corrupt: %s: %v", name, err), nil
		}
		if err := jsonObject(b); err != nil {
			return fmt.Sprintf("corrupt: %s is not a JSON object: %v", name, err), nil
		}
	}
	for _, name := range cookieFiles {
		err := checkSQLiteFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("corrupt: %s: %v", name, err), nil
		}
	}
	return "", nil
}

// checkMarker checks that the profile is ours and pinned to PasswordStore.
func checkMarker(dir string) (reason string, err error) {
	b, err := readRegular(filepath.Join(dir, markerName), maxMarker)
	if errors.Is(err, fs.ErrNotExist) {
		return "foreign: no " + markerName + " marker", nil
	}
	if err != nil {
		return fmt.Sprintf("corrupt: %s: %v", markerName, err), nil
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Sprintf("corrupt: %s is not valid: %v", markerName, err), nil
	}
	if v.Version > markerVersion {
		return "", fmt.Errorf("%s has version %d, newer than this headless understands (%d): upgrade headless", markerName, v.Version, markerVersion)
	}
	var m marker
	if err := json.Unmarshal(b, &m); err != nil || m.Version != markerVersion {
		return fmt.Sprintf("corrupt: %s is not a version %d marker", markerName, markerVersion), nil
	}
	if m.PasswordStore != PasswordStore {
		return fmt.Sprintf("foreign: profile uses password store %q, not %q", m.PasswordStore, PasswordStore), nil
	}
	return "", nil
}

// readRegular reads a regular file (not a symlink) of at most limit bytes.
func readRegular(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, errors.New("is a symlink")
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

// jsonObject reports whether b is exactly one JSON object.
func jsonObject(b []byte) error {
	_, err := decodeObject(b)
	return err
}

// decodeObject decodes b as one JSON object, keeping numbers exact.
func decodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null")
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the object")
	}
	return m, nil
}

// sqliteMagic is the first 16 bytes of every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// checkSQLiteFile checks that path is a regular file whose header is a SQLite 3 header with a
// valid page size and whose size is a whole number of pages. An empty file is accepted: SQLite
// treats it as an empty database, and it holds nothing to lose.
func checkSQLiteFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return errors.New("is a symlink")
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if fi.Size() == 0 {
		return nil
	}
	var hdr [100]byte
	n, err := f.ReadAt(hdr[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return checkSQLiteHeader(hdr[:n], fi.Size())
}

// checkSQLiteHeader checks the header bytes (at least the first 18) of a SQLite database file
// of the given size.
func checkSQLiteHeader(hdr []byte, size int64) error {
	if len(hdr) < 18 || string(hdr[:16]) != sqliteMagic {
		return errors.New("not a SQLite 3 database (bad header)")
	}
	ps := int64(binary.BigEndian.Uint16(hdr[16:18]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return fmt.Errorf("invalid SQLite page size %d", ps)
	}
	if size < ps || size%ps != 0 {
		return fmt.Errorf("size %d is not a whole number of %d-byte pages (truncated)", size, ps)
	}
	return nil
}
