package peercred

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// TestSendAsReceive: a message sent with SendAs arrives with the sender's pid, uid and
// effective gid, from the kernel; one longer than the reader takes is refused, and the end of
// the stream is io.EOF.
func TestSendAsReceive(t *testing.T) {
	mine, theirs, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	if err := SendAs(theirs, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := SendAs(theirs, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if !IsSocket(theirs) {
		t.Fatal("IsSocket")
	}
	theirs.Close()
	mine.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, c, err := Receive(mine, 64)
	if err != nil || string(b) != "hello" || c.PID != os.Getpid() || c.UID != os.Getuid() || c.GID != os.Getegid() {
		t.Fatalf("Receive = %q, %+v, %v", b, c, err)
	}
	if _, _, err := Receive(mine, 64); err == nil {
		t.Fatal("a message over the bound was taken")
	}
	if _, _, err := Receive(mine, 64); !errors.Is(err, io.EOF) {
		t.Fatalf("Receive at the end = %v; want EOF", err)
	}
}

// TestReceiveTimesOut: the read deadline bounds the wait.
func TestReceiveTimesOut(t *testing.T) {
	mine, theirs, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	defer theirs.Close()
	mine.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, _, err := Receive(mine, 64); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Receive = %v; want the deadline", err)
	}
}
