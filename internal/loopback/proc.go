package loopback

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Bounds of one Find.
const (
	// MaxTableLines and MaxTableBytes bound each read of PROC/net/tcp and PROC/net/tcp6 (the
	// kernel prints about 150 and 180 bytes a socket); a longer table is ErrUnavailable.
	MaxTableLines = 1 << 17
	MaxTableBytes = 32 << 20
	// MaxProcs and MaxFDs bound the holder scan: processes looked at, and descriptor links
	// read in all of them together. Beyond them the scan stops and Listener.Incomplete is set.
	MaxProcs = 1 << 14
	MaxFDs   = 1 << 17
)

// maxTableLine is the longest line accepted in a socket table (the kernel's are < 200 bytes).
const maxTableLine = 4096

// tcpListen is the kernel's TCP_LISTEN state as the tables print it (st 0A).
const tcpListen = 0x0A

// listening returns the TCP sockets in state LISTEN: from the kernel's socket diagnostics
// when the Finder reads the real /proc (diag_linux.go), else, or when those cannot be asked,
// from PROC/net/tcp and PROC/net/tcp6.
func (f Finder) listening() ([]Socket, error) {
	lim := f.limits()
	var all []Socket
	var err error
	if f.Proc == "" {
		all, err = diagListening(lim)
	}
	if f.Proc != "" || err != nil {
		if all, err = f.tables(lim); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(all, func(a, b Socket) int {
		if c := a.Addr.Compare(b.Addr); c != 0 {
			return c
		}
		return cmp.Compare(a.Inode, b.Inode)
	})
	return all, nil
}

// tables reads the listening sockets from PROC/net/tcp and PROC/net/tcp6, in parallel (each
// read walks the kernel's whole connection hash table, a few milliseconds).
func (f Finder) tables(lim limits) ([]Socket, error) {
	var res [2]struct {
		socks []Socket
		err   error
	}
	var wg sync.WaitGroup
	for i, name := range []string{"tcp", "tcp6"} {
		wg.Go(func() {
			path := filepath.Join(f.root(), "net", name)
			res[i].socks, res[i].err = tableListeners(func() ([]Socket, bool, error) { return readTable(path, name == "tcp6", lim) })
			if i == 1 && errors.Is(res[i].err, fs.ErrNotExist) {
				res[i].socks, res[i].err = nil, nil // no IPv6 in this kernel: no IPv6 sockets
			}
		})
	}
	wg.Wait()
	if err := cmp.Or(res[0].err, res[1].err); err != nil {
		return nil, err
	}
	return append(res[0].socks, res[1].socks...), nil
}

// tableListeners reads one table with read, twice when the first pass may have skipped a
// listener (see parseTable), and unites the passes.
func tableListeners(read func() ([]Socket, bool, error)) ([]Socket, error) {
	socks, whole, err := read()
	if err != nil || whole {
		return socks, err
	}
	again, _, err := read()
	if err != nil {
		return nil, err
	}
	for _, s := range again {
		if !slices.Contains(socks, s) {
			socks = append(socks, s)
		}
	}
	return socks, nil
}

func readTable(path string, v6 bool, lim limits) ([]Socket, bool, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrUnavailable, err) // keeps fs.ErrNotExist visible
	}
	defer fh.Close()
	socks, whole, err := parseTable(fh, v6, binary.NativeEndian, lim)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %w", ErrUnavailable, path, err)
	}
	return socks, whole, nil
}

// firstRead counts the bytes of the first Read and of all of them.
type firstRead struct {
	r            io.Reader
	first, total int
	calls        int
}

func (f *firstRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.calls == 0 {
		f.first = n
	}
	f.calls++
	f.total += n
	return n, err
}

var errTable = errors.New("malformed socket table")

// parseTable reads a socket table (a header line, then one line a socket) and returns its
// sockets in state LISTEN. Any malformed line fails the whole table: skipping it could hide a
// listener. order is the byte order the kernel printed the address words in (the host's).
//
// whole reports that the listening sockets all came out of the first Read, with the line
// after the last of them (or the end of the table): the kernel prints the listening sockets
// first, and it resumes its walk between two reads by counting entries in a hash bucket, so a
// socket can be skipped when another one in its bucket closes at that moment, but not within
// the output of one read.
func parseTable(r io.Reader, v6 bool, order binary.ByteOrder, lim limits) (socks []Socket, whole bool, err error) {
	fr := &firstRead{r: io.LimitReader(r, int64(lim.bytes)+1)}
	sc := bufio.NewScanner(fr)
	sc.Buffer(make([]byte, 0, maxTableLine), maxTableLine)
	lines, end := 0, 0
	sectionEnd, open := 0, false // end of the line after the last listener; a listener is last
	for sc.Scan() {
		line := sc.Bytes()
		end += len(line) + 1
		if fr.total > lim.bytes {
			return nil, false, fmt.Errorf("%w: longer than %d bytes", errTable, lim.bytes)
		}
		if lines++; lines > lim.lines {
			return nil, false, fmt.Errorf("%w: more than %d lines", errTable, lim.lines)
		}
		if lines == 1 {
			if f := bytes.Fields(line); len(f) == 0 || string(f[0]) != "sl" {
				return nil, false, fmt.Errorf("%w: no header line", errTable)
			}
			continue
		}
		e, err := parseLine(line, v6, order)
		if err != nil {
			return nil, false, fmt.Errorf("line %d: %w", lines, err)
		}
		if e.state == tcpListen {
			socks = append(socks, e.Socket)
			open = true
		} else if open {
			sectionEnd, open = end, false
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, false, fmt.Errorf("%w: line %d longer than %d bytes", errTable, lines+1, maxTableLine)
		}
		return nil, false, err
	}
	if fr.total > lim.bytes {
		return nil, false, fmt.Errorf("%w: longer than %d bytes", errTable, lim.bytes)
	}
	if lines == 0 {
		return nil, false, fmt.Errorf("%w: empty", errTable)
	}
	if open {
		whole = fr.first == fr.total // the table ends with a listener: all of it in one read
	} else {
		whole = sectionEnd <= fr.first
	}
	return socks, whole, nil
}

// entry is one line of a socket table.
type entry struct {
	Socket
	state uint8
}

// parseLine parses one socket line as the kernel prints it (net/ipv4/tcp_ipv4.c,
// net/ipv6/tcp_ipv6.c):
//
//	"%4d: %08X:%04X %08X:%04X %02X %08X:%08X %02X:%08lX %08X %5u %8d %lu ..."
//
// sl, local address:port, remote address:port, state, tx:rx queue, timer, retransmits, uid,
// timeout, inode, then fields this package ignores. An IPv6 address is four such words. Each
// address word is a 32-bit value in network byte order printed as a host integer, so its bytes
// are the word's bytes in the host's order; the port is printed as a number.
func parseLine(line []byte, v6 bool, order binary.ByteOrder) (entry, error) {
	var e entry
	f := bytes.Fields(line)
	if len(f) < 10 {
		return e, fmt.Errorf("%w: %d fields, want at least 10", errTable, len(f))
	}
	sl, ok := bytes.CutSuffix(f[0], []byte(":"))
	if !ok || !isDigits(sl) {
		return e, fmt.Errorf("%w: bad slot %q", errTable, f[0])
	}
	local, err := parseAddr(f[1], v6, order)
	if err != nil {
		return e, fmt.Errorf("%w: local address: %w", errTable, err)
	}
	if _, err := parseAddr(f[2], v6, order); err != nil {
		return e, fmt.Errorf("%w: remote address: %w", errTable, err)
	}
	st, ok := parseHex(f[3], 2)
	if !ok {
		return e, fmt.Errorf("%w: bad state %q", errTable, f[3])
	}
	if !isDigits(f[7]) {
		return e, fmt.Errorf("%w: bad uid %q", errTable, f[7])
	}
	uid, err := strconv.ParseUint(string(f[7]), 10, 32)
	if err != nil {
		return e, fmt.Errorf("%w: bad uid %q", errTable, f[7])
	}
	if !isDigits(f[9]) {
		return e, fmt.Errorf("%w: bad inode %q", errTable, f[9])
	}
	ino, err := strconv.ParseUint(string(f[9]), 10, 64)
	if err != nil {
		return e, fmt.Errorf("%w: bad inode %q", errTable, f[9])
	}
	e.Addr, e.state, e.UID, e.Inode = local, uint8(st), int(uid), ino
	return e, nil
}

// parseAddr parses "HEX8:HEX4" (IPv4) or "HEX32:HEX4" (IPv6).
func parseAddr(b []byte, v6 bool, order binary.ByteOrder) (netip.AddrPort, error) {
	words := 1
	if v6 {
		words = 4
	}
	if len(b) != words*8+5 || b[words*8] != ':' {
		return netip.AddrPort{}, fmt.Errorf("%q is not %d hex digits, ':', 4 hex digits", b, words*8)
	}
	var raw [16]byte
	for i := range words {
		w, ok := parseHex(b[i*8:i*8+8], 8)
		if !ok {
			return netip.AddrPort{}, fmt.Errorf("bad address %q", b)
		}
		order.PutUint32(raw[i*4:], uint32(w))
	}
	port, ok := parseHex(b[words*8+1:], 4)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", b)
	}
	a := netip.AddrFrom4([4]byte(raw[:4]))
	if v6 {
		a = netip.AddrFrom16(raw)
	}
	return netip.AddrPortFrom(a, uint16(port)), nil
}

// parseHex parses exactly n hex digits.
func parseHex(b []byte, n int) (uint64, bool) {
	if len(b) != n {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// holders scans PROC/[0-9]*/fd for links to the sockets in inodes, in pid order. Processes and
// descriptors that cannot be read are skipped. The second result reports that a bound stopped
// the scan.
func (f Finder) holders(inodes map[uint64]bool) ([]Process, bool) {
	lim := f.limits()
	root := f.root()
	pids, incomplete := listPIDs(root, lim.procs)
	var procs []Process
	nfds := 0
	for _, pid := range pids {
		dir := filepath.Join(root, strconv.Itoa(pid))
		held, n, full := scanFDs(filepath.Join(dir, "fd"), inodes, lim.fds-nfds)
		nfds += n
		if len(held) > 0 {
			exe, _ := os.Readlink(filepath.Join(dir, "exe"))
			procs = append(procs, Process{PID: pid, Exe: exe, Inodes: held})
		}
		if full {
			return procs, true
		}
	}
	return procs, incomplete
}

// listPIDs returns the first max pids of root, ascending, and whether there were more (or the
// directory could not be read to its end). It reads at most 4*max+1024 names.
func listPIDs(root string, max int) ([]int, bool) {
	d, err := os.Open(root)
	if err != nil {
		return nil, true
	}
	defer d.Close()
	var pids []int
	incomplete := false
	for names := 0; ; {
		batch, err := d.Readdirnames(256)
		for _, name := range batch {
			if pid, ok := pidName(name); ok {
				pids = append(pids, pid)
			}
		}
		names += len(batch)
		if err != nil {
			incomplete = !errors.Is(err, io.EOF)
			break
		}
		if names > 4*max+1024 {
			incomplete = true
			break
		}
	}
	slices.Sort(pids)
	if len(pids) > max {
		pids, incomplete = pids[:max], true
	}
	return pids, incomplete
}

// pidName parses a procfs directory name that is a pid.
func pidName(name string) (int, bool) {
	if !isDigits([]byte(name)) || name[0] == '0' || len(name) > 10 {
		return 0, false
	}
	pid, err := strconv.Atoi(name)
	return pid, err == nil && pid > 0
}

// scanFDs reads at most budget descriptor links in dir and returns the inodes of those that
// are sockets in inodes (ascending, distinct), how many links it read, and whether it ran out
// of budget before the end of dir. Links are read relative to the open directory.
func scanFDs(dir string, inodes map[uint64]bool, budget int) (held []uint64, n int, full bool) {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, false // another user's process, or gone
	}
	d := os.NewFile(uintptr(dfd), dir)
	defer d.Close()
	var buf [64]byte // "socket:[" + at most 20 digits + "]"; a longer link is not a socket
	for {
		names, err := d.Readdirnames(256)
		for _, name := range names {
			if n >= budget {
				slices.Sort(held)
				return held, n, true
			}
			n++
			m, err := unix.Readlinkat(dfd, name, buf[:])
			if err != nil || m >= len(buf) {
				continue
			}
			ino, ok := socketInode(buf[:m])
			if ok && inodes[ino] && !slices.Contains(held, ino) {
				held = append(held, ino)
			}
		}
		if err != nil {
			slices.Sort(held)
			return held, n, false
		}
	}
}

// socketInode parses the link target "socket:[INODE]".
func socketInode(link []byte) (uint64, bool) {
	s, ok := bytes.CutPrefix(link, []byte("socket:["))
	if !ok {
		return 0, false
	}
	s, ok = bytes.CutSuffix(s, []byte("]"))
	if !ok || !isDigits(s) {
		return 0, false
	}
	ino, err := strconv.ParseUint(string(s), 10, 64)
	if err != nil {
		return 0, false
	}
	return ino, true
}
