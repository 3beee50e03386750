package host

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/headless-dev/headless/internal/wire"
)

// TestLookBound: the end of the look bound before the release is asked for, while the caller
// still waits, is errLookTimeout (nothing was asked for or released), and so is asking once
// it ended; once the release was asked for, a timeout is never told that way, and any other
// error, or the caller's own end, stays what it was.
func TestLookBound(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-ended.Done()
	gone, cancelGone := context.WithCancel(live)
	cancelGone()
	goneLook, cancelGoneLook := context.WithTimeout(gone, 0)
	defer cancelGoneLook()
	deadline := fmt.Errorf("DOMSnapshot.captureSnapshot: %w", context.DeadlineExceeded)
	typing := wire.Errorf(wire.CodeTimeout, "typing did not finish: %w", context.DeadlineExceeded)
	other := wire.Errorf(wire.CodeNoLoginForm, "no form")
	for _, c := range []struct {
		name      string
		ctx, look context.Context
		asked     bool
		err       error
		want      error
	}{
		{"look ended", live, ended, false, deadline, errLookTimeout},
		{"no error", live, ended, false, nil, nil},
		{"another error after the look ended", live, ended, false, other, other},
		{"look still running", live, live, false, deadline, deadline},
		{"caller gone", gone, goneLook, false, deadline, deadline},
		{"after the release was asked for", live, ended, true, typing, typing},
	} {
		l := &lookBound{ctx: c.look, asked: c.asked}
		if got := l.timeout(c.ctx, c.err); got != c.want {
			t.Errorf("%s: timeout = %v; want %v", c.name, got, c.want)
		}
	}
	we := wire.From(errLookTimeout)
	if we.Code != wire.CodeTimeout || we.Hint == wire.Hint(wire.CodeTimeout) || errors.Is(errLookTimeout, context.DeadlineExceeded) {
		t.Errorf("errLookTimeout = %+v; want TIMEOUT with a hint of its own", we)
	}
	// Asking after the bound ended asks nothing; asking in time marks the looks over.
	l := &lookBound{ctx: ended}
	if err := l.ask(); err != errLookTimeout || l.asked {
		t.Errorf("ask after the bound ended = %v (asked %v); want errLookTimeout", err, l.asked)
	}
	l = &lookBound{ctx: live}
	if err := l.ask(); err != nil || !l.asked {
		t.Errorf("ask in time = %v (asked %v)", err, l.asked)
	}
	if got := l.timeout(live, deadline); got != deadline {
		t.Errorf("a timeout after asking = %v; want it unchanged", got)
	}
}
