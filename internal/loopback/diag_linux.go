package loopback

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// The listening sockets from the kernel's socket diagnostics (NETLINK_SOCK_DIAG, what ss(8)
// reads), asked for state LISTEN only. The kernel then walks its listening hash alone, not
// the whole connection hash that every read of PROC/net/tcp walks (about 4 ms a look on a
// 2-CPU VM, 20 µs this way), and no mount can cover the answer. The answer is the same as the
// tables': the same sockets, addresses (v4-mapped kept), inodes and uids, in this process's
// network namespace. A dump, like a table, comes in chunks the kernel resumes by counting
// entries, so a dump whose end did not come in its first datagram is taken twice and the
// passes united (tableListeners): in practice every dump with a socket in it, for the kernel
// sends the end of a dump in a datagram of its own. A dump that failed is an error (the
// tables are then read), never "no listeners".

// Sizes of the kernel's structs (linux/inet_diag.h): inet_diag_req_v2 and inet_diag_msg.
const (
	diagReqLen = 56
	diagMsgLen = 72
)

// diagListening returns the TCP sockets in state LISTEN of both families, or an error when
// the kernel cannot be asked (no sock_diag) or answers outside the bounds of lim.
func diagListening(lim limits) ([]Socket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("netlink: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink: %w", err)
	}
	// Connected to the kernel: no other sender's datagram reaches this socket.
	if err := unix.Connect(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("netlink: %w", err)
	}
	d := &differ{fd: fd, buf: make([]byte, 32<<10), lim: lim}
	var all []Socket
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		socks, err := tableListeners(func() ([]Socket, bool, error) { return d.dump(family) })
		if err != nil {
			return nil, err
		}
		all = append(all, socks...)
	}
	return all, nil
}

type differ struct {
	fd  int
	seq uint32
	buf []byte
	lim limits
}

// dump asks for one family's listening TCP sockets and reads the whole answer; whole is
// whether it came in one chunk (nothing can have been skipped between chunks).
func (d *differ) dump(family uint8) (socks []Socket, whole bool, err error) {
	d.seq++
	req := make([]byte, unix.NLMSG_HDRLEN+diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], d.seq)
	r := req[unix.NLMSG_HDRLEN:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 1<<tcpListen) // idiag_states: LISTEN only
	if err := unix.Sendto(d.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, false, fmt.Errorf("netlink: %w", err)
	}
	chunks, total := 0, 0
	for {
		n, from, err := unix.Recvfrom(d.fd, d.buf, 0)
		if err != nil {
			return nil, false, fmt.Errorf("netlink: %w", err)
		}
		if nl, ok := from.(*unix.SockaddrNetlink); !ok || nl.Pid != 0 {
			continue // not the kernel's (only the kernel can send here; never trusted)
		}
		chunks++
		if total += n; total > d.lim.bytes {
			return nil, false, fmt.Errorf("the kernel's answer is over %d bytes", d.lim.bytes)
		}
		done, err := d.messages(d.buf[:n], family, &socks)
		if err != nil || done {
			return socks, chunks == 1, err
		}
	}
}

// messages reads the messages of one datagram of the kernel's answer to dump into socks;
// done is whether the dump ended (an error ends it too).
func (d *differ) messages(b []byte, family uint8, socks *[]Socket) (done bool, err error) {
	ne := binary.NativeEndian
	for len(b) > 0 {
		m, rest, ok := nextMessage(b)
		if !ok {
			return true, fmt.Errorf("netlink: a malformed message")
		}
		b = rest
		if m.seq != d.seq {
			continue // an answer to an earlier dump of this socket
		}
		switch m.typ {
		case unix.NLMSG_DONE:
			// A dump that failed (no tcp_diag in this kernel: -ENOENT) says so here, and
			// must not read as "no listeners".
			if len(m.data) < 4 {
				return true, fmt.Errorf("netlink: a malformed end of dump")
			}
			if e := int32(ne.Uint32(m.data)); e < 0 {
				return true, fmt.Errorf("netlink: %w", os.NewSyscallError("sock_diag dump", unix.Errno(-e)))
			}
			return true, nil
		case unix.NLMSG_ERROR:
			if len(m.data) >= 4 {
				if e := int32(ne.Uint32(m.data)); e != 0 {
					return true, fmt.Errorf("netlink: %w", os.NewSyscallError("sock_diag", unix.Errno(-e)))
				}
			}
			return true, fmt.Errorf("netlink: a malformed error")
		case unix.SOCK_DIAG_BY_FAMILY:
			s, ok := parseDiag(m.data, family)
			if !ok {
				return true, fmt.Errorf("netlink: a malformed inet_diag_msg of %d bytes", len(m.data))
			}
			if s == nil {
				continue
			}
			if len(*socks) >= d.lim.lines {
				return true, fmt.Errorf("more than %d listening sockets", d.lim.lines)
			}
			if !slices.Contains(*socks, *s) {
				*socks = append(*socks, *s)
			}
		}
	}
	return false, nil
}

// parseDiag reads one inet_diag_msg: nil for a socket not in state LISTEN or of another
// family (the kernel filters them; never relied on), ok false when it is malformed.
func parseDiag(b []byte, family uint8) (*Socket, bool) {
	if len(b) < diagMsgLen {
		return nil, false
	}
	if b[0] != family || b[1] != tcpListen {
		return nil, true
	}
	port := binary.BigEndian.Uint16(b[4:])
	var a netip.Addr
	if family == unix.AF_INET {
		a = netip.AddrFrom4([4]byte(b[8:12]))
	} else {
		a = netip.AddrFrom16([16]byte(b[8:24]))
	}
	ne := binary.NativeEndian
	return &Socket{Addr: netip.AddrPortFrom(a, port), UID: int(ne.Uint32(b[64:])), Inode: uint64(ne.Uint32(b[68:]))}, true
}

type message struct {
	typ  uint16
	seq  uint32
	data []byte
}

// nextMessage cuts the first netlink message off b (its header, its payload, its padding).
func nextMessage(b []byte) (m message, rest []byte, ok bool) {
	if len(b) < unix.NLMSG_HDRLEN {
		return m, nil, false
	}
	ne := binary.NativeEndian
	l := int(ne.Uint32(b))
	if l < unix.NLMSG_HDRLEN || l > len(b) {
		return m, nil, false
	}
	m = message{typ: ne.Uint16(b[4:]), seq: ne.Uint32(b[8:]), data: b[unix.NLMSG_HDRLEN:l]}
	next := (l + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
	return m, b[min(next, len(b)):], true
}
