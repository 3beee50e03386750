package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// KeyLen is the length of the seal key, in bytes.
const KeyLen = 32

// Key is the machine's seal key. It is never formatted or encoded; [Key.Zero] clears it.
type Key struct{ b [KeyLen]byte }

// NewKey returns a Key holding a copy of b, which must be KeyLen bytes.
func NewKey(b []byte) (*Key, error) {
	if len(b) != KeyLen {
		return nil, fmt.Errorf("seal key: %d bytes, want %d", len(b), KeyLen)
	}
	k := &Key{}
	copy(k.b[:], b)
	return k, nil
}

// Zero clears the key.
func (k *Key) Zero() {
	if k != nil {
		clear(k.b[:])
	}
}

var (
	// ErrKeyMissing: there is no key file (headless is not installed on this machine).
	ErrKeyMissing = errors.New("the seal key file does not exist")
	// ErrKeyDenied: the key file may not be read by this process: it did not get the group
	// the key belongs to (not installed set-gid, or exec'd under a tracer, inside a user
	// namespace, or with no_new_privs, where the kernel grants no group).
	ErrKeyDenied = errors.New("this process may not read the seal key")
	// ErrKeyUnsafe: the key file is one someone other than root could write or replace, or
	// that anyone may read.
	ErrKeyUnsafe = errors.New("the seal key file is unsafe")
)

// KeyFile describes the key file LoadKey read: its group is the one only brokerd is given.
type KeyFile struct {
	GID int
}

// LoadKey reads the seal key from path: a regular file owned by root, mode 0640 or 0600 (no
// permission for others; writable by root only), exactly KeyLen bytes, in a directory only
// root can write. The file is opened without following a symlink.
func LoadKey(path string) (*Key, KeyFile, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, KeyFile{}, fmt.Errorf("%w: %s", ErrKeyMissing, path)
	case errors.Is(err, fs.ErrPermission):
		return nil, KeyFile{}, fmt.Errorf("%w: %s", ErrKeyDenied, path)
	case err != nil:
		return nil, KeyFile{}, fmt.Errorf("seal key: %w", err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, KeyFile{}, fmt.Errorf("seal key: %w", err)
	}
	var dst syscall.Stat_t
	if err := syscall.Stat(dirOf(path), &dst); err != nil {
		return nil, KeyFile{}, fmt.Errorf("seal key directory: %w", err)
	}
	switch {
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return nil, KeyFile{}, fmt.Errorf("%w: %s is not a regular file", ErrKeyUnsafe, path)
	case st.Uid != 0:
		return nil, KeyFile{}, fmt.Errorf("%w: %s is owned by uid %d, not root", ErrKeyUnsafe, path, st.Uid)
	case st.Mode&0o7137 != 0:
		return nil, KeyFile{}, fmt.Errorf("%w: %s has mode %04o (want 0640: root writes, its group reads, nobody else)", ErrKeyUnsafe, path, st.Mode&0o7777)
	case dst.Uid != 0 || dst.Mode&0o022 != 0:
		return nil, KeyFile{}, fmt.Errorf("%w: its directory %s is not root's alone", ErrKeyUnsafe, dirOf(path))
	case st.Size != KeyLen:
		return nil, KeyFile{}, fmt.Errorf("%w: %s holds %d bytes, want %d", ErrKeyUnsafe, path, st.Size, KeyLen)
	}
	k := &Key{}
	if _, err := io.ReadFull(f, k.b[:]); err != nil {
		k.Zero()
		return nil, KeyFile{}, fmt.Errorf("seal key: %w", err)
	}
	return k, KeyFile{GID: int(st.Gid)}, nil
}

func dirOf(path string) string {
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return "/"
}

// AuditKey derives the key of uid's audit log (package audit: every record's MAC) from the
// seal key: HMAC-SHA256 under k of a label of its own and the uid, so it opens no sealed text
// and is another user's for another uid. Only a process that reads the seal key (brokerd, by
// its group) can derive it; zero it after use.
func AuditKey(k *Key, uid int) []byte {
	mac := hmac.New(sha256.New, k.b[:])
	mac.Write([]byte("headless audit log v1\x00"))
	mac.Write(strconv.AppendInt(nil, int64(uid), 10))
	return mac.Sum(nil)
}
