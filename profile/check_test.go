package profile

import (
	"encoding/binary"
	"reflect"
	"testing"
)

func TestCheckSQLiteHeader(t *testing.T) {
	hdr := func(ps uint16) []byte {
		b := make([]byte, 100)
		copy(b, sqliteMagic)
		binary.BigEndian.PutUint16(b[16:], ps)
		return b
	}
	for _, tc := range []struct {
		name string
		hdr  []byte
		size int64
		ok   bool
	}{
		{"4096 x 3", hdr(4096), 3 * 4096, true},
		{"512 x 1", hdr(512), 512, true},
		{"65536 written as 1", hdr(1), 65536, true},
		{"32768", hdr(32768), 2 * 32768, true},
		{"page size 0", hdr(0), 4096, false},
		{"page size 256", hdr(256), 4096, false},
		{"page size not a power of two", hdr(4000), 4000, false},
		{"size not a whole number of pages", hdr(4096), 4096 + 1, false},
		{"size below one page", hdr(4096), 100, false},
		{"header only 17 bytes", hdr(4096)[:17], 4096, false},
		{"wrong magic", append([]byte("SQLite format 2\x00"), hdr(4096)[16:]...), 4096, false},
		{"magic without NUL", append([]byte("SQLite format 3 "), hdr(4096)[16:]...), 4096, false},
		{"empty", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkSQLiteHeader(tc.hdr, tc.size); (err == nil) != tc.ok {
				t.Fatalf("checkSQLiteHeader = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func FuzzCheckSQLiteHeader(f *testing.F) {
	f.Add([]byte(sqliteMagic+"\x10\x00"), int64(8192))
	f.Add([]byte(sqliteMagic+"\x00\x01"), int64(65536))
	f.Add([]byte("garbage"), int64(7))
	f.Fuzz(func(t *testing.T, hdr []byte, size int64) {
		if checkSQLiteHeader(hdr, size) != nil {
			return
		}
		ps := int64(binary.BigEndian.Uint16(hdr[16:18]))
		if ps == 1 {
			ps = 65536
		}
		if string(hdr[:16]) != sqliteMagic || ps < 512 || size < ps || size%ps != 0 {
			t.Fatalf("accepted header %q with size %d", hdr, size)
		}
	})
}

// FuzzSetPasswordPrefs: for any Preferences that is a JSON object, the result is a JSON object
// with the password prefs set, every other key unchanged, and setting them again changes
// nothing.
func FuzzSetPasswordPrefs(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"profile":1,"credentials_enable_service":true,"x":[1,2,{"y":"<&>"}]}`))
	f.Add([]byte(`{"profile":{"password_manager_enabled":"no","a":12345678901234567890}}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		orig, err := decodeObject(in)
		if err != nil {
			if _, err := setPasswordPrefs(in); err == nil {
				t.Fatal("setPasswordPrefs accepted what decodeObject refused")
			}
			return
		}
		out, err := setPasswordPrefs(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeObject(out)
		if err != nil {
			t.Fatalf("output is not an object: %v", err)
		}
		applyPasswordPrefs(orig)
		if !reflect.DeepEqual(got, orig) {
			t.Fatalf("keys changed:\n in %s\nout %s", in, out)
		}
		if applyPasswordPrefs(got) {
			t.Fatalf("prefs not all set in %s", out)
		}
		again, err := setPasswordPrefs(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent: %s then %s (%v)", out, again, err)
		}
	})
}

// FuzzDisarm: whatever a process of the user wrote into Preferences or Local State, the
// clean-up at every start (deleteKeys over disarmPrefs and disarmLocalState) leaves none of
// the disarmed settings with a value, is done in one pass (a second one changes nothing), and
// what it writes back decodes as an object again.
func FuzzDisarm(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"proxy":{"mode":"fixed_servers","server":"http://127.0.0.1:9"},"keep":1}`))
	f.Add([]byte(`{"profile":{"password_hash_data_list":[{"hash":"1"}],"content_settings":{"exceptions":{"ssl_cert_decisions":{"a":1}}}}}`))
	f.Add([]byte(`{"dns_over_https":{"mode":"secure"},"browser":{"enabled_labs_experiments":["x"]},"profile":"flat"}`))
	f.Add([]byte(`{"safebrowsing":[1],"profile":{"content_settings":null}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := decodeObject(in)
		if err != nil {
			return
		}
		keys := append(append([][]string{}, disarmPrefs...), disarmLocalState...)
		deleteKeys(m, keys)
		if deleteKeys(m, keys) {
			t.Fatalf("a second pass still removed something from %s", in)
		}
		out, err := encodePrefs(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeObject(out)
		if err != nil {
			t.Fatalf("written back is not an object: %v", err)
		}
		for _, k := range keys {
			if v, ok := parentOf(back, k)[k[len(k)-1]]; ok && !empty(v) {
				t.Fatalf("%v still set after the clean-up of %s", k, in)
			}
		}
	})
}
