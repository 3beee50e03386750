package seal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadKey: the key file is accepted only as the install makes it (root's, mode 0640, 32
// bytes, in a directory only root writes); everything else is refused with the reason.
func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	write := func(name string, b []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	key := bytes.Repeat([]byte{7}, KeyLen)
	if _, _, err := LoadKey(filepath.Join(dir, "absent")); !errors.Is(err, ErrKeyMissing) {
		t.Errorf("absent: %v", err)
	}
	if os.Getuid() != 0 {
		// Not root: every file made here is the user's, which is refused as unsafe.
		if _, _, err := LoadKey(write("mine", key, 0o640)); !errors.Is(err, ErrKeyUnsafe) {
			t.Errorf("a user's key file: %v", err)
		}
		return
	}
	for name, c := range map[string]struct {
		b    []byte
		mode os.FileMode
		want error
	}{
		"good":        {key, 0o640, nil},
		"root only":   {key, 0o600, nil},
		"world":       {key, 0o644, ErrKeyUnsafe},
		"group write": {key, 0o660, ErrKeyUnsafe},
		"short":       {key[:31], 0o640, ErrKeyUnsafe},
		"long":        {append(key, 1), 0o640, ErrKeyUnsafe},
		"owner exec":  {key, 0o740, ErrKeyUnsafe},
	} {
		k, kf, err := LoadKey(write(name, c.b, c.mode))
		if !errors.Is(err, c.want) || (c.want == nil && (k == nil || k.b != [KeyLen]byte(key) || kf.GID != 0)) {
			t.Errorf("%s: LoadKey = %v, %+v, %v; want %v", name, k != nil, kf, err, c.want)
		}
	}
	p := write("owned", key, 0o640)
	os.Chown(p, 1, 0)
	if _, _, err := LoadKey(p); !errors.Is(err, ErrKeyUnsafe) {
		t.Errorf("owned by uid 1: %v", err)
	}
	os.Symlink(write("target", key, 0o640), filepath.Join(dir, "link"))
	if _, _, err := LoadKey(filepath.Join(dir, "link")); err == nil {
		t.Error("followed a symlink")
	}
	os.Chmod(dir, 0o777)
	if _, _, err := LoadKey(write("good2", key, 0o640)); !errors.Is(err, ErrKeyUnsafe) {
		t.Errorf("in a world-writable directory: %v", err)
	}
}
