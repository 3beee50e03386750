package loopback

import (
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

var ap = netip.MustParseAddrPort

func TestParseOriginAccepts(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string // candidates
	}{
		{"http://127.0.0.1:8080", []string{"0.0.0.0:8080", "127.0.0.1:8080", "[::]:8080", "[::ffff:0.0.0.0]:8080", "[::ffff:127.0.0.1]:8080"}},
		{"http://127.1.2.3:1", []string{"0.0.0.0:1", "127.1.2.3:1", "[::]:1", "[::ffff:0.0.0.0]:1", "[::ffff:127.1.2.3]:1"}},
		{"http://127.0.0.1", []string{"0.0.0.0:80", "127.0.0.1:80", "[::]:80", "[::ffff:0.0.0.0]:80", "[::ffff:127.0.0.1]:80"}},
		{"https://127.0.0.1", []string{"0.0.0.0:443", "127.0.0.1:443", "[::]:443", "[::ffff:0.0.0.0]:443", "[::ffff:127.0.0.1]:443"}},
		{"http://127.255.255.254:65535", []string{"0.0.0.0:65535", "127.255.255.254:65535", "[::]:65535", "[::ffff:0.0.0.0]:65535", "[::ffff:127.255.255.254]:65535"}},
		{"http://[::1]:3000", []string{"[::]:3000", "[::1]:3000"}},
		{"https://[::1]", []string{"[::]:443", "[::1]:443"}},
		{"http://localhost:8080", []string{"0.0.0.0:8080", "127.0.0.1:8080", "[::]:8080", "[::1]:8080", "[::ffff:0.0.0.0]:8080", "[::ffff:127.0.0.1]:8080"}},
		{"http://localhost:443", []string{"0.0.0.0:443", "127.0.0.1:443", "[::]:443", "[::1]:443", "[::ffff:0.0.0.0]:443", "[::ffff:127.0.0.1]:443"}},
		// Browsers resolve names under localhost to loopback themselves.
		{"https://app.localhost:8443", []string{"0.0.0.0:8443", "127.0.0.1:8443", "[::]:8443", "[::1]:8443", "[::ffff:0.0.0.0]:8443", "[::ffff:127.0.0.1]:8443"}},
		{"https://localhost:80", []string{"0.0.0.0:80", "127.0.0.1:80", "[::]:80", "[::1]:80", "[::ffff:0.0.0.0]:80", "[::ffff:127.0.0.1]:80"}},
		{"https://localhost", []string{"0.0.0.0:443", "127.0.0.1:443", "[::]:443", "[::1]:443", "[::ffff:0.0.0.0]:443", "[::ffff:127.0.0.1]:443"}},
	} {
		t.Run(tt.in, func(t *testing.T) {
			tg, err := parseOrigin(tt.in)
			if err != nil {
				t.Fatalf("parseOrigin: %v", err)
			}
			var got []string
			for _, c := range tg.candidates() {
				got = append(got, c.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("candidates = %q, want %q", got, tt.want)
			}
			if !IsLoopback(tt.in) {
				t.Fatal("IsLoopback = false")
			}
		})
	}
}

func TestParseOriginRejects(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want error
	}{
		{"https://example.com", ErrNotLoopback},
		{"https://example.com:8443", ErrNotLoopback},
		{"http://example.com", ErrNotLoopback},
		{"https://xn--bcher-kva.example", ErrNotLoopback},
		{"https://localhost.example", ErrNotLoopback},
		{"https://192.0.2.1", ErrNotLoopback},
		{"https://128.0.0.1", ErrNotLoopback},
		{"https://0.0.0.0", ErrNotLoopback},
		{"https://[::]", ErrNotLoopback},
		{"https://[2001:db8::1]:8443", ErrNotLoopback},
		{"https://[::ffff:127.0.0.1]", ErrNotLoopback},
		{"https://[::2]", ErrNotLoopback},
		// Other spellings of loopback hosts are not canonical, and never "not loopback".
		// http is for localhost itself only, as in package origin (FuzzParseOrigin found it).
		{"http://0.localhost", ErrInvalid},
		{"http://app.localhost:8080", ErrInvalid},
		{"http://LOCALHOST:8080", ErrInvalid},
		{"http://Localhost", ErrInvalid},
		{"http://localhost.:8080", ErrInvalid},
		{"http://127.1:8080", ErrInvalid},
		{"http://0x7f.0.0.1", ErrInvalid},
		{"http://2130706433", ErrInvalid},
		{"http://127.000.0.1", ErrInvalid},
		{"http://[0:0:0:0:0:0:0:1]", ErrInvalid},
		{"http://[::0001]", ErrInvalid},
		{"http://[::1%25lo]", ErrInvalid},
		{"http://[127.0.0.1]", ErrInvalid},
		{"http://::1", ErrInvalid},
		{"http://loc%61lhost", ErrInvalid},
		{"http://%31%32%37.0.0.1", ErrInvalid},
		{"http://example%2ecom", ErrInvalid},
		{"http://localhost:80", ErrInvalid},
		{"https://localhost:443", ErrInvalid},
		{"http://localhost:08080", ErrInvalid},
		{"http://localhost:0", ErrInvalid},
		{"http://localhost:65536", ErrInvalid},
		{"http://localhost:", ErrInvalid},
		{"http://localhost:+80", ErrInvalid},
		{"http://localhost:8080:1", ErrInvalid},
		{"http://[::1]8080", ErrInvalid},
		{"http://[::1", ErrInvalid},
		{"http://localhost/", ErrInvalid},
		{"http://localhost/a", ErrInvalid},
		{"http://localhost?", ErrInvalid},
		{"http://localhost?a", ErrInvalid},
		{"http://localhost#", ErrInvalid},
		{"http://localhost#a", ErrInvalid},
		{"http://u@localhost", ErrInvalid},
		{"http://@localhost", ErrInvalid},
		{"HTTP://localhost", ErrInvalid},
		{"ws://localhost", ErrInvalid},
		{"file://localhost", ErrInvalid},
		{"http:localhost", ErrInvalid},
		{"http:/localhost", ErrInvalid},
		{"http:///localhost", ErrInvalid},
		{"//localhost", ErrInvalid},
		{"localhost:8080", ErrInvalid},
		{"http://", ErrInvalid},
		{"http://:8080", ErrInvalid},
		{"", ErrInvalid},
		{" http://localhost", ErrInvalid},
		{"http://localhost ", ErrInvalid},
		{"http://local host", ErrInvalid},
		{"http://localhost\n", ErrInvalid},
		{"http://a..b", ErrInvalid},
		{"http://a.b.", ErrInvalid},
		{"http://a_b.example", ErrInvalid},
		{"http://" + strings.Repeat("a", MaxOriginLen), ErrInvalid},
	} {
		t.Run(tt.in, func(t *testing.T) {
			_, err := parseOrigin(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("parseOrigin(%q) = %v, want %v", tt.in, err, tt.want)
			}
			if IsLoopback(tt.in) {
				t.Fatal("IsLoopback = true")
			}
			if _, err := (Finder{Proc: t.TempDir()}).Find(tt.in); !errors.Is(err, tt.want) {
				t.Fatalf("Find(%q) = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestParseLine(t *testing.T) {
	// Lines as Linux prints them on a little-endian machine.
	const (
		v4 = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0"
		v6 = "   3: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0"
	)
	le := binary.LittleEndian
	for _, tt := range []struct {
		name  string
		line  string
		v6    bool
		order binary.ByteOrder
		want  entry
	}{
		{"v4 loopback", v4, false, le, entry{Socket{ap("127.0.0.1:8080"), 4242, 1000}, 0x0A}},
		{"v4 any", "0: 00000000:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1 1", false, le, entry{Socket{ap("0.0.0.0:80"), 1, 0}, 0x0A}},
		{"v4 word order", "0: 0302017F:FFFF 00000000:0000 0A 00000000:00000000 00:00000000 00000000 33 0 18446744073709551615", false, le, entry{Socket{ap("127.1.2.3:65535"), 18446744073709551615, 33}, 0x0A}},
		{"v4 established", "1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000 1000 0 9 1", false, le, entry{Socket{ap("127.0.0.1:8080"), 9, 1000}, 0x01}},
		{"v4 time wait", "1: 0100007F:1F90 0100007F:C350 06 00000000:00000000 03:00000D81 00000000 0 0 0 3", false, le, entry{Socket{ap("127.0.0.1:8080"), 0, 0}, 0x06}},
		{"v4 lower-case hex", "0: 0100007f:1f90 00000000:0000 0a 00000000:00000000 00:00000000 00000000 0 0 5", false, le, entry{Socket{ap("127.0.0.1:8080"), 5, 0}, 0x0A}},
		{"v4 big-endian host", "0: 7F000001:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5", false, binary.BigEndian, entry{Socket{ap("127.0.0.1:8080"), 5, 0}, 0x0A}},
		{"v4 read as big-endian", v4, false, binary.BigEndian, entry{Socket{ap("1.0.0.127:8080"), 4242, 1000}, 0x0A}},
		{"v6 loopback", v6, true, le, entry{Socket{ap("[::1]:8080"), 77, 0}, 0x0A}},
		{"v6 any", "0: 00000000000000000000000000000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 1000 0 8 1", true, le, entry{Socket{ap("[::]:3000"), 8, 1000}, 0x0A}},
		{"v6 v4-mapped", "0: 0000000000000000FFFF00000100007F:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 8 1", true, le, entry{Socket{ap("[::ffff:127.0.0.1]:8080"), 8, 0}, 0x0A}},
		{"v6 word order", "0: B80D0120020001000400030006000500:0001 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 8 1", true, le, entry{Socket{ap("[2001:db8:1:2:3:4:5:6]:1"), 8, 0}, 0x0A}},
		{"v6 big-endian host", "0: 20010DB8000100020003000400050006:0001 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 8 1", true, binary.BigEndian, entry{Socket{ap("[2001:db8:1:2:3:4:5:6]:1"), 8, 0}, 0x0A}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLine([]byte(tt.line), tt.v6, tt.order)
			if err != nil {
				t.Fatalf("parseLine: %v", err)
			}
			if got != tt.want {
				t.Fatalf("parseLine = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseLineRejects(t *testing.T) {
	const tail = " 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5"
	const tail6 = " 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5"
	for _, tt := range []struct {
		name, line string
		v6         bool
	}{
		{"empty", "", false},
		{"header", "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode", false},
		{"nine fields", "0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0", false},
		{"slot without colon", "0 0100007F:1F90" + tail, false},
		{"slot not a number", "x: 0100007F:1F90" + tail, false},
		{"short address", "0: 100007F:1F90" + tail, false},
		{"long address", "0: 00100007F:1F90" + tail, false},
		{"short port", "0: 0100007F:F90" + tail, false},
		{"no colon", "0: 0100007F01F90" + tail, false},
		{"not hex", "0: 0100007G:1F90" + tail, false},
		{"sign", "0: +100007F:1F90" + tail, false},
		{"v6 address in tcp", "0: 00000000000000000000000001000000:1F90" + tail6, false},
		{"v4 address in tcp6", "0: 0100007F:1F90" + tail, true},
		{"bad remote", "0: 0100007F:1F90 0000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 5", false},
		{"bad state", "0: 0100007F:1F90 00000000:0000 A 00000000:00000000 00:00000000 00000000 0 0 5", false},
		{"state not hex", "0: 0100007F:1F90 00000000:0000 0Z 00000000:00000000 00:00000000 00000000 0 0 5", false},
		{"negative uid", "0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 -1 0 5", false},
		{"uid over 32 bits", "0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 4294967296 0 5", false},
		{"inode not a number", "0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 x5", false},
		{"inode over 64 bits", "0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 18446744073709551616", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if e, err := parseLine([]byte(tt.line), tt.v6, binary.LittleEndian); !errors.Is(err, errTable) {
				t.Fatalf("parseLine = %+v, %v; want an error wrapping errTable", e, err)
			}
		})
	}
}

func TestParseTable(t *testing.T) {
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	const listen = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11 1 0000000000000000 100 0 0 10 0\n"
	const estab = "   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 12 1 0000000000000000 20 4 30 10 -1\n"
	const listen2 = "   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 13 1 0000000000000000 100 0 0 10 0\n"
	lim := Finder{}.limits()
	for _, tt := range []struct {
		name string
		in   string
		lim  limits
		want []Socket
		err  string // substring of the error; "" for none
	}{
		{"only listeners", header + listen + estab + listen2, lim, []Socket{{ap("127.0.0.1:8080"), 11, 1000}, {ap("0.0.0.0:22"), 13, 0}}, ""},
		{"header only", header, lim, nil, ""},
		{"no final newline", header + strings.TrimSuffix(listen, "\n"), lim, []Socket{{ap("127.0.0.1:8080"), 11, 1000}}, ""},
		{"empty", "", lim, nil, "empty"},
		{"no header", listen, lim, nil, "no header line"},
		{"blank line", header + "\n" + listen, lim, nil, "line 2: malformed socket table: 0 fields"},
		{"malformed line", header + listen + "   1: garbage\n", lim, nil, "line 3: malformed socket table: 2 fields"},
		{"line too long", header + strings.Repeat("0", maxTableLine+1) + "\n", lim, nil, "line 2 longer than 4096 bytes"},
		{"at the line limit", header + listen + estab, limits{lines: 3, bytes: 1 << 20}, []Socket{{ap("127.0.0.1:8080"), 11, 1000}}, ""},
		{"over the line limit", header + listen + estab + listen2, limits{lines: 3, bytes: 1 << 20}, nil, "more than 3 lines"},
		{"at the byte limit", header + listen, limits{lines: 10, bytes: len(header + listen)}, []Socket{{ap("127.0.0.1:8080"), 11, 1000}}, ""},
		{"over the byte limit", header + listen, limits{lines: 10, bytes: len(header+listen) - 1}, nil, "longer than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parseTable(strings.NewReader(tt.in), false, binary.LittleEndian, tt.lim)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseTable = %v, %v; want error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("parseTable = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// chunks is a reader that returns its chunks one Read each, as the kernel's seq_file does.
type chunks []string

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	if n < len((*c)[0]) {
		(*c)[0] = (*c)[0][n:]
	} else {
		*c = (*c)[1:]
	}
	return n, nil
}

func TestParseTableWhole(t *testing.T) {
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	l := func(st string, ino int) string {
		return sock{k4Loop, st, 0, uint64(ino)}.line(ino)
	}
	for _, tt := range []struct {
		name  string
		in    chunks
		whole bool
	}{
		{"all in one read", chunks{header + l("0A", 1) + l("0A", 2) + l("01", 3)}, true},
		{"all in one read, ends with a listener", chunks{header + l("0A", 1) + l("0A", 2)}, true},
		{"no listener", chunks{header, l("01", 1), l("01", 2)}, true},
		{"header only", chunks{header}, true},
		{"listeners and the line after them in the first read", chunks{header + l("0A", 1) + l("01", 2), l("01", 3)}, true},
		{"first read ends after the last listener", chunks{header + l("0A", 1), l("01", 2)}, false},
		{"a listener in the second read", chunks{header + l("0A", 1), l("0A", 2) + l("01", 3)}, false},
		{"a listener after a connection in the second read", chunks{header + l("0A", 1) + l("01", 2), l("0A", 3)}, false},
		{"table ends with a listener in the second read", chunks{header + l("0A", 1), l("0A", 2)}, false},
		{"empty first read", chunks{"", header + l("0A", 1) + l("01", 2)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, whole, err := parseTable(&tt.in, false, binary.LittleEndian, Finder{}.limits())
			if err != nil || whole != tt.whole {
				t.Fatalf("parseTable: whole = %v, %v; want %v", whole, err, tt.whole)
			}
		})
	}
}

func TestTableListenersPasses(t *testing.T) {
	a, b, c := Socket{ap("127.0.0.1:1"), 1, 0}, Socket{ap("127.0.0.1:2"), 2, 0}, Socket{ap("127.0.0.1:3"), 3, 0}
	type pass struct {
		socks []Socket
		whole bool
		err   error
	}
	boom := errors.New("boom")
	for _, tt := range []struct {
		name   string
		passes []pass
		want   []Socket
		reads  int
		err    error
	}{
		{"whole first pass: read once", []pass{{[]Socket{a}, true, nil}}, []Socket{a}, 1, nil},
		{"not whole: second pass, united", []pass{{[]Socket{a, b}, false, nil}, {[]Socket{b, c}, false, nil}}, []Socket{a, b, c}, 2, nil},
		{"not whole, nothing new", []pass{{[]Socket{a}, false, nil}, {[]Socket{a}, true, nil}}, []Socket{a}, 2, nil},
		{"first pass fails", []pass{{nil, false, boom}}, nil, 1, boom},
		{"second pass fails", []pass{{[]Socket{a}, false, nil}, {nil, false, boom}}, nil, 2, boom},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reads := 0
			got, err := tableListeners(func() ([]Socket, bool, error) {
				p := tt.passes[reads]
				reads++
				return p.socks, p.whole, p.err
			})
			if !errors.Is(err, tt.err) || !slices.Equal(got, tt.want) || reads != tt.reads {
				t.Fatalf("tableListeners = %v, %v after %d reads; want %v, %v after %d", got, err, reads, tt.want, tt.err, tt.reads)
			}
		})
	}
}

func TestSocketInode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"socket:[12345]", 12345, true},
		{"socket:[0]", 0, true},
		{"socket:[18446744073709551615]", 18446744073709551615, true},
		{"socket:[18446744073709551616]", 0, false},
		{"socket:[]", 0, false},
		{"socket:[-1]", 0, false},
		{"socket:[12a]", 0, false},
		{"socket:12", 0, false},
		{"socket:[12", 0, false},
		{"pipe:[12]", 0, false},
		{"/dev/null", 0, false},
		{"anon_inode:[eventfd]", 0, false},
	} {
		got, ok := socketInode([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("socketInode(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
