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

// TestSendAllAsReceiveAll: an answer longer than one message's bound arrives whole, in
// chunks, each with the sender's credentials; one over the reader's bound is refused; an
// answer cut short (the sender gone before its last chunk) is an error, not a short answer.
func TestSendAllAsReceiveAll(t *testing.T) {
	for _, size := range []int{0, 5, Chunk - 2, Chunk - 1, Chunk, Chunk + 1, 3 * Chunk, 600 << 10} {
		mine, theirs, err := Pair()
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(i*7 + 3)
		}
		go func() {
			defer theirs.Close()
			if err := SendAllAs(theirs, want); err != nil {
				t.Error(err)
			}
		}()
		mine.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, c, err := ReceiveAll(mine, 1<<20)
		mine.Close()
		if err != nil || string(got) != string(want) || c.PID != os.Getpid() || c.GID != os.Getegid() {
			t.Fatalf("size %d: ReceiveAll = %d bytes, %+v, %v", size, len(got), c, err)
		}
	}

	mine, theirs, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	go func(theirs *os.File) {
		defer theirs.Close()
		SendAllAs(theirs, make([]byte, 3*Chunk))
	}(theirs)
	mine.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ReceiveAll(mine, 2*Chunk); err == nil {
		t.Fatal("an answer over the bound was taken")
	}
	mine.Close()

	mine, theirs, err = Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	if err := SendAs(theirs, append([]byte{moreChunk}, make([]byte, Chunk-1)...)); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	mine.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ReceiveAll(mine, 1<<20); !errors.Is(err, io.EOF) {
		t.Fatalf("ReceiveAll of an answer cut short = %v; want EOF", err)
	}
}
