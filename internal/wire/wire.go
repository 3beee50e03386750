// Package wire is the framing and message shape shared by broker.sock and control.sock.
//
// # Security contract
//
// A frame is one JSON value on one line, at most [MaxFrame] bytes including the newline.
// [Reader] never buffers more than MaxFrame+1 bytes, zeroes the bytes it has handed out, and
// reports an oversize line as [ErrFrameTooLarge] (the connection cannot be resynchronised and
// must be closed) and a final line without a newline as [ErrTruncated]. Requests are decoded
// strictly: unknown fields, trailing data and wrong types are errors. Every reply echoes the
// request id. Errors that cross a socket carry a stable [Code] and a one-line hint.
//
// Frames that carry a password (a release reply, an add request) are built by hand into a
// buffer the caller zeroes: encoding/json keeps pooled buffers that would retain a copy.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// MaxFrame is the largest frame, newline included.
const MaxFrame = 1 << 20

var (
	ErrFrameTooLarge = Sentinel(CodeFrameTooLarge, "frame exceeds 1 MiB")
	ErrTruncated     = errors.New("connection closed in the middle of a frame")
)

// Reader reads newline-delimited frames with a hard size cap.
type Reader struct {
	r     io.Reader
	buf   []byte
	start int // first unread byte
	end   int // end of buffered data
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, 4096)}
}

// ReadFrame returns the next frame without its newline, as a fresh slice the caller owns (and
// zeroes if it held a secret). Empty lines are skipped.
func (r *Reader) ReadFrame() ([]byte, error) {
	scanned := r.start
	for {
		if i := bytes.IndexByte(r.buf[scanned:r.end], '\n'); i >= 0 {
			nl := scanned + i
			line := r.buf[r.start:nl]
			if len(line)+1 > MaxFrame {
				r.discard()
				return nil, ErrFrameTooLarge
			}
			out := bytes.Clone(line)
			clear(r.buf[r.start : nl+1])
			r.start = nl + 1
			if len(bytes.TrimSpace(out)) == 0 {
				scanned = r.start
				continue
			}
			return out, nil
		}
		scanned = r.end
		if r.end-r.start >= MaxFrame {
			r.discard()
			return nil, ErrFrameTooLarge
		}
		// Make room: compact, then grow up to MaxFrame+1.
		if r.start > 0 {
			n := copy(r.buf, r.buf[r.start:r.end])
			clear(r.buf[n:r.end])
			scanned -= r.start
			r.end = n
			r.start = 0
		}
		if r.end == len(r.buf) {
			size := min(2*len(r.buf), MaxFrame+1)
			nb := make([]byte, size)
			copy(nb, r.buf[:r.end])
			clear(r.buf)
			r.buf = nb
		}
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil && n == 0 {
			if r.end > r.start {
				r.discard()
				if err == io.EOF {
					return nil, ErrTruncated
				}
			}
			return nil, err
		}
	}
}

// Buffered is how many bytes of an incomplete frame the Reader holds (read from the
// connection but not yet returned).
func (r *Reader) Buffered() int { return r.end - r.start }

// Wipe zeroes everything the Reader still buffers.
func (r *Reader) Wipe() { r.discard() }

func (r *Reader) discard() {
	clear(r.buf)
	r.start, r.end = 0, 0
}

// Request is one call.
type Request struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Response is one reply: exactly one of Result and Error is set.
type Response struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// jsonFields maps the JSON names of t's fields (embedded structs flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// Encode marshals v as one frame (newline included), refusing frames over MaxFrame.
// Never use it for values that hold a secret.
func Encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b)+1 > MaxFrame {
		return nil, ErrFrameTooLarge
	}
	return append(b, '\n'), nil
}

// ErrorFrame is the frame for an error reply.
func ErrorFrame(id uint64, e *Error) []byte {
	b, err := Encode(Response{ID: id, Error: e})
	if err != nil {
		b, _ = Encode(Response{ID: id, Error: &Error{Code: CodeInternal, Message: "error reply too large"}})
	}
	return b
}

// ResultFrame is the frame for a result reply.
func ResultFrame(id uint64, result any) ([]byte, error) {
	r, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return Encode(Response{ID: id, Result: r})
}
