package peercred

import (
	"errors"
	"os"
)

var errNoCredMessages = errors.New("messages with the sender's credentials (SCM_CREDENTIALS) are Linux's")

// Pair is Linux's (SCM_CREDENTIALS).
func Pair() (mine, theirs *os.File, err error) { return nil, nil, errNoCredMessages }

// SendAs is Linux's (SCM_CREDENTIALS).
func SendAs(f *os.File, b []byte) error { return errNoCredMessages }

// IsSocket reports whether f is a socket.
func IsSocket(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// Receive is Linux's (SCM_CREDENTIALS).
func Receive(f *os.File, max int) ([]byte, Cred, error) { return nil, Cred{}, errNoCredMessages }
