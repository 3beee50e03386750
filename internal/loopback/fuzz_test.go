package loopback

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/origin"
)

// kernelLine prints e as Linux does (net/ipv4/tcp_ipv4.c get_tcp4_sock, tcp_ipv6.c
// get_tcp6_sock), with the address words in byte order order.
func kernelLine(e entry, v6 bool, order binary.ByteOrder) string {
	raw := e.Addr.Addr().As16()
	var local string
	if v6 {
		for i := range 4 {
			local += fmt.Sprintf("%08X", order.Uint32(raw[i*4:]))
		}
	} else {
		a4 := e.Addr.Addr().As4()
		local = fmt.Sprintf("%08X", order.Uint32(a4[:]))
	}
	remote := "00000000"
	if v6 {
		remote = strings.Repeat("0", 32)
	}
	return fmt.Sprintf("%4d: %s:%04X %s:%04X %02X %08X:%08X %02X:%08X %08X %5d %8d %d 1 0000000000000000 100 0 0 10 0",
		0, local, e.Addr.Port(), remote, 0, e.state, 0, 0, 0, 0, 0, e.UID, 0, e.Inode)
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []struct {
		line string
		v6   bool
	}{
		{"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0", false},
		{"   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 12 1 0000000000000000 20 4 30 10 -1", false},
		{"   2: 0100007F:1F90 0100007F:C352 06 00000000:00000000 03:00000D81 00000000     0        0 0 3 0000000000000000", false},
		{"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1206 1 00000000af5d65ac 100 0 0 10 0", false},
		{"   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0", true},
		{"   0: 0000000000000000FFFF00000100007F:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 8 1 0000000000000000 100 0 0 10 0", true},
		{"   0: B80D0120020001000400030006000500:0001 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 8 1", true},
		{"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode", false},
		{"0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 4294967295 0 18446744073709551615", false},
		{"0: 0100007F:1F90 00000000:0000 0A 0 0 0 -1 -1 -1", false},
		{"0: :", false},
		{"", true},
	} {
		f.Add(s.line, s.v6)
	}
	f.Fuzz(func(t *testing.T, line string, v6 bool) {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			e, err := parseLine([]byte(line), v6, order)
			if err != nil {
				if !errors.Is(err, errTable) {
					t.Fatalf("parseLine(%q): error %v does not wrap errTable", line, err)
				}
				if e != (entry{}) {
					t.Fatalf("parseLine(%q) = %+v with error %v", line, e, err)
				}
				continue
			}
			if e.Addr.Addr().Is4() == v6 || e.Addr.Addr().Zone() != "" || e.UID < 0 {
				t.Fatalf("parseLine(%q, v6=%v) = %+v", line, v6, e)
			}
			again, err := parseLine([]byte(kernelLine(e, v6, order)), v6, order)
			if err != nil || again != e {
				t.Fatalf("parseLine(%q) = %+v, but its kernel form %q parses to %+v, %v", line, e, kernelLine(e, v6, order), again, err)
			}
		}
	})
}

func FuzzParseTable(f *testing.F) {
	f.Add([]byte(tcpHeader+sock{k4Loop, "0A", 1000, 11}.line(0)+sock{k4Loop, "01", 1000, 12}.line(1)), false)
	f.Add([]byte(tcp6Header+sock{k6Loop, "0A", 0, 11}.line(0)), true)
	f.Add([]byte(tcpHeader), false)
	f.Add([]byte("sl\n\n"), false)
	f.Add([]byte("sl\r\n0: 0100007F:1F90 00000000:0000 0A 0 0 0 0 0 1\r\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, v6 bool) {
		lim := limits{lines: 64, bytes: 8192}
		socks, _, err := parseTable(bytes.NewReader(data), v6, binary.LittleEndian, lim)
		if err != nil {
			if socks != nil {
				t.Fatalf("parseTable returned %v with error %v", socks, err)
			}
			return
		}
		if len(data) > lim.bytes || bytes.Count(data, []byte("\n")) > lim.lines {
			t.Fatalf("parseTable accepted %d bytes, %d newlines, over %+v", len(data), bytes.Count(data, []byte("\n")), lim)
		}
		// Every socket returned is a LISTEN line of the input.
		for _, s := range socks {
			found := false
			for _, line := range bytes.Split(data, []byte("\n")) {
				e, err := parseLine(bytes.TrimSuffix(line, []byte("\r")), v6, binary.LittleEndian)
				if err == nil && e.state == tcpListen && e.Socket == s {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("parseTable returned %+v, not a LISTEN line of %q", s, data)
			}
		}
	})
}

// FuzzParseOrigin holds the parser to internal/origin: it accepts exactly the canonical
// loopback origins, and calls "not loopback" only canonical origins that are not loopback.
func FuzzParseOrigin(f *testing.F) {
	for _, s := range []string{
		"http://localhost:8080", "https://localhost", "http://127.0.0.1", "http://127.1.2.3:65535",
		"http://[::1]:3000", "https://[::1]", "http://LOCALHOST", "http://localhost.", "http://127.1",
		"http://localhost:80", "http://localhost:08080", "http://[0::1]", "http://[::ffff:127.0.0.1]",
		"https://[::ffff:7f00:1]", "https://example.com", "https://a.localhost", "http://example.com",
		"https://xn--bcher-kva.example", "https://0x7f.0.0.1", "http://loc%61lhost", "http://localhost/",
		"http://u@localhost", "http://localhost?#", "http://１２７.０.０.１", "http://[::1%25lo]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := parseOrigin(s)
		canon, cerr := origin.Canonical(s)
		isCanon := cerr == nil && canon == s
		switch {
		case err == nil:
			if !isCanon || !origin.IsLoopback(s) {
				t.Fatalf("parseOrigin(%q) accepted; origin.Canonical = %q, %v; IsLoopback %v", s, canon, cerr, origin.IsLoopback(s))
			}
			c := tg.candidates()
			if len(c) == 0 || c[0].Port() == 0 || c[0].Port() != c[len(c)-1].Port() {
				t.Fatalf("parseOrigin(%q): candidates %v", s, c)
			}
		case errors.Is(err, ErrNotLoopback):
			if origin.IsLoopback(s) {
				t.Fatalf("parseOrigin(%q) = %v, but origin.IsLoopback is true", s, err)
			}
		case errors.Is(err, ErrInvalid):
		default:
			t.Fatalf("parseOrigin(%q) = %v: neither ErrInvalid nor ErrNotLoopback", s, err)
		}
		if isCanon && origin.IsLoopback(s) && err != nil {
			t.Fatalf("parseOrigin(%q) = %v for a canonical loopback origin", s, err)
		}
		if isCanon && !origin.IsLoopback(s) && !errors.Is(err, ErrNotLoopback) {
			t.Fatalf("parseOrigin(%q) = %v for a canonical non-loopback origin, want ErrNotLoopback", s, err)
		}
		if IsLoopback(s) != (err == nil) {
			t.Fatalf("IsLoopback(%q) disagrees with parseOrigin's %v", s, err)
		}
	})
}
