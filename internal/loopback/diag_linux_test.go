package loopback

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// TestParseDiag: an inet_diag_msg is read at the kernel's offsets; a short one is malformed; a
// socket not in state LISTEN, or of the other family, is skipped.
func TestParseDiag(t *testing.T) {
	msg := func(family, state uint8, addr []byte, port uint16, uid, inode uint32) []byte {
		b := make([]byte, diagMsgLen)
		b[0], b[1] = family, state
		binary.BigEndian.PutUint16(b[4:], port)
		copy(b[8:], addr)
		binary.NativeEndian.PutUint32(b[64:], uid)
		binary.NativeEndian.PutUint32(b[68:], inode)
		return b
	}
	v4 := msg(unix.AF_INET, tcpListen, []byte{127, 0, 0, 1}, 8080, 1001, 4242)
	if s, ok := parseDiag(v4, unix.AF_INET); !ok || s == nil || *s != (Socket{Addr: netip.MustParseAddrPort("127.0.0.1:8080"), UID: 1001, Inode: 4242}) {
		t.Fatalf("v4: %v %v", s, ok)
	}
	mapped := netip.MustParseAddr("::ffff:127.0.0.2").As16()
	if s, ok := parseDiag(msg(unix.AF_INET6, tcpListen, mapped[:], 443, 0, 7), unix.AF_INET6); !ok || s == nil || s.Addr.String() != "[::ffff:127.0.0.2]:443" {
		t.Fatalf("v4-mapped: %v %v", s, ok)
	}
	if s, ok := parseDiag(v4[:diagMsgLen-1], unix.AF_INET); ok || s != nil {
		t.Fatalf("short: %v %v", s, ok)
	}
	if s, ok := parseDiag(msg(unix.AF_INET, 1 /* ESTABLISHED */, []byte{127, 0, 0, 1}, 1, 0, 1), unix.AF_INET); !ok || s != nil {
		t.Fatalf("established: %v %v", s, ok)
	}
	if s, ok := parseDiag(v4, unix.AF_INET6); !ok || s != nil {
		t.Fatalf("other family: %v %v", s, ok)
	}
}

// TestNextMessage: messages are cut at their aligned length; a length shorter than a header or
// past the buffer is malformed.
func TestNextMessage(t *testing.T) {
	hdr := func(l uint32, typ uint16, seq uint32) []byte {
		b := make([]byte, unix.NLMSG_HDRLEN)
		binary.NativeEndian.PutUint32(b, l)
		binary.NativeEndian.PutUint16(b[4:], typ)
		binary.NativeEndian.PutUint32(b[8:], seq)
		return b
	}
	one := append(hdr(unix.NLMSG_HDRLEN+3, 20, 5), 1, 2, 3, 0) // 3 bytes of payload, 1 of padding
	two := append(one, hdr(unix.NLMSG_HDRLEN, unix.NLMSG_DONE, 5)...)
	m, rest, ok := nextMessage(two)
	if !ok || m.typ != 20 || m.seq != 5 || len(m.data) != 3 || len(rest) != unix.NLMSG_HDRLEN {
		t.Fatalf("first: %+v %d %v", m, len(rest), ok)
	}
	if m, rest, ok = nextMessage(rest); !ok || m.typ != unix.NLMSG_DONE || len(rest) != 0 {
		t.Fatalf("second: %+v %d %v", m, len(rest), ok)
	}
	for _, bad := range [][]byte{hdr(unix.NLMSG_HDRLEN-1, 20, 1), hdr(unix.NLMSG_HDRLEN+1, 20, 1), hdr(0, 20, 1), {1, 2, 3}} {
		if _, _, ok := nextMessage(bad); ok {
			t.Errorf("malformed %x accepted", bad)
		}
	}
}

// TestDumpEnd: an end of dump carrying an error (a kernel without tcp_diag answers -ENOENT)
// is an error, not an empty answer; a short one is malformed; a plain one ends the dump.
func TestDumpEnd(t *testing.T) {
	done := func(payload []byte) []byte {
		msg := make([]byte, unix.NLMSG_HDRLEN)
		binary.NativeEndian.PutUint32(msg, uint32(unix.NLMSG_HDRLEN+len(payload)))
		binary.NativeEndian.PutUint16(msg[4:], unix.NLMSG_DONE)
		binary.NativeEndian.PutUint32(msg[8:], 1)
		return append(msg, payload...)
	}
	d := &differ{seq: 1, lim: Finder{}.limits()}
	var socks []Socket
	for name, payload := range map[string][]byte{"ENOENT": binary.NativeEndian.AppendUint32(nil, uint32(0xfffffffe)), "short": {0}} {
		if end, err := d.messages(done(payload), unix.AF_INET, &socks); !end || err == nil {
			t.Errorf("%s: an end of dump with %x: done %v, err %v", name, payload, end, err)
		}
	}
	if end, err := d.messages(done([]byte{0, 0, 0, 0}), unix.AF_INET, &socks); !end || err != nil || socks != nil {
		t.Errorf("a plain end of dump: done %v, err %v, %v", end, err, socks)
	}
}
