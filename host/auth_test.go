package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

// TestLookTimeout: the end of the look bound, while the caller still waits, is a TIMEOUT that
// says nothing was released; any other error, or the caller's own end, stays what it was.
func TestLookTimeout(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-ended.Done()
	gone, cancelGone := context.WithCancel(live)
	cancelGone()
	goneLook, cancelGoneLook := context.WithTimeout(gone, 0)
	defer cancelGoneLook()
	deadline := fmt.Errorf("DOMSnapshot.captureSnapshot: %w", context.DeadlineExceeded)
	other := wire.Errorf(wire.CodeNoLoginForm, "no form")
	for _, c := range []struct {
		name      string
		ctx, look context.Context
		err       error
		want      wire.Code // "" for err itself
	}{
		{"look ended", live, ended, deadline, wire.CodeTimeout},
		{"no error", live, ended, nil, ""},
		{"another error after the look ended", live, ended, other, ""},
		{"look still running", live, live, deadline, ""},
		{"caller gone", gone, goneLook, deadline, ""},
	} {
		got := lookTimeout(c.ctx, c.look, c.err)
		if c.want == "" {
			if got != c.err {
				t.Errorf("%s: lookTimeout = %v; want %v unchanged", c.name, got, c.err)
			}
			continue
		}
		we := wire.From(got)
		if we.Code != c.want || errors.Is(got, context.DeadlineExceeded) {
			t.Errorf("%s: lookTimeout = %v (%s); want %s of its own", c.name, got, we.Code, c.want)
		}
		if want := "nothing was asked for or released"; !strings.Contains(we.Message, want) || we.Hint == wire.Hint(wire.CodeTimeout) {
			t.Errorf("%s: message %q / hint %q; want %q and a hint of its own", c.name, we.Message, we.Hint, want)
		}
	}
}
