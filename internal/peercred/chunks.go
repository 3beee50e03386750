package peercred

import (
	"errors"
	"fmt"
	"os"
)

// Chunk bounds each message [SendAllAs] sends: well under the socket's send buffer
// (net.core.wmem_default, 208 KiB on Linux), which bounds one SOCK_SEQPACKET message.
const Chunk = 32 << 10

// Each message of [SendAllAs] starts with one byte that says whether another follows (an
// empty message cannot carry credentials: the kernel's API sends a byte for it).
const (
	lastChunk = 0
	moreChunk = 1
)

// SendAllAs sends b over f as messages of at most Chunk bytes, each with this process's
// credentials ([SendAs]) and a first byte that says whether more follow, for [ReceiveAll].
func SendAllAs(f *os.File, b []byte) error {
	msg := make([]byte, 0, Chunk)
	for {
		n := min(len(b), Chunk-1)
		flag := byte(lastChunk)
		if n < len(b) {
			flag = moreChunk
		}
		msg = append(append(msg[:0], flag), b[:n]...)
		if err := SendAs(f, msg); err != nil {
			return err
		}
		if flag == lastChunk {
			return nil
		}
		b = b[n:]
	}
}

// ReceiveAll reads what [SendAllAs] sent: its messages up to the last, at most max bytes in
// all, every one of them with the same credentials (those returned). More than max bytes, a
// message with other credentials or no first byte, or the end of the stream before the last
// message is an error.
func ReceiveAll(f *os.File, max int) ([]byte, Cred, error) {
	var out []byte
	var first Cred
	for i := 0; ; i++ {
		b, c, err := Receive(f, Chunk)
		switch {
		case err != nil:
			return nil, Cred{}, err
		case len(b) == 0 || b[0] > moreChunk:
			return nil, Cred{}, errors.New("receive with credentials: a message that is not a chunk")
		case i == 0:
			first = c
		case c != first:
			return nil, Cred{}, fmt.Errorf("receive with credentials: message %d came from pid %d uid %d gid %d, the first from pid %d uid %d gid %d",
				i+1, c.PID, c.UID, c.GID, first.PID, first.UID, first.GID)
		}
		if len(out)+len(b)-1 > max {
			return nil, Cred{}, fmt.Errorf("receive with credentials: a message over %d bytes", max)
		}
		out = append(out, b[1:]...)
		if b[0] == lastChunk {
			if out == nil {
				out = []byte{}
			}
			return out, first, nil
		}
	}
}
