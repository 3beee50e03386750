package doctor

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ProcListening reports whether a socket listening on the Unix path is in the kernel's
// table (/proc/net/unix: the flag __SO_ACCEPTCON), without connecting to it: a connection
// would start a socket-activated brokerd. Elsewhere than Linux it answers an error.
func ProcListening(path string) (bool, error) {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return false, err
	}
	defer f.Close()
	return listeningIn(io.LimitReader(f, 64<<20), path)
}

// listeningIn scans a /proc/net/unix table: "Num RefCount Protocol Flags Type St Inode Path".
func listeningIn(r io.Reader, path string) (bool, error) {
	const acceptCon = 0x10000
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[7] != path {
			continue
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err == nil && flags&acceptCon != 0 {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	if first {
		return false, errors.New("empty socket table")
	}
	return false, nil
}

// DebianChromiumVersion names the version of Debian's chromium package when path is the
// binary that package installs (/usr/lib/chromium/chromium), from dpkg's status database,
// without running anything; "" otherwise.
func DebianChromiumVersion(path string) string {
	if path != "/usr/lib/chromium/chromium" {
		return ""
	}
	f, err := os.Open("/var/lib/dpkg/status")
	if err != nil {
		return ""
	}
	defer f.Close()
	return dpkgVersion(io.LimitReader(f, 64<<20), "chromium")
}

// dpkgVersion finds the Version of an installed package in a dpkg status file.
func dpkgVersion(r io.Reader, pkg string) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	in, installed, version := false, false, ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if in && installed && version != "" {
				return version
			}
			in, installed, version = false, false, ""
		case strings.HasPrefix(line, "Package: "):
			in = strings.TrimPrefix(line, "Package: ") == pkg
		case in && strings.HasPrefix(line, "Status: "):
			installed = strings.HasSuffix(line, " installed")
		case in && strings.HasPrefix(line, "Version: "):
			version = strings.TrimPrefix(line, "Version: ")
		}
	}
	if in && installed {
		return version
	}
	return ""
}

// StatFile describes the file at path without opening it: the inode a symlink points to, and
// whether path itself is a symlink.
func StatFile(path string) (File, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return File{}, err
	}
	link := lfi.Mode()&fs.ModeSymlink != 0
	fi := lfi
	if link {
		if fi, err = os.Stat(path); err != nil {
			return File{Symlink: true}, err
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return File{}, errors.New("no owner in the file's status")
	}
	return File{Mode: fi.Mode(), UID: int(st.Uid), GID: int(st.Gid), Size: fi.Size(), Symlink: link}, nil
}
