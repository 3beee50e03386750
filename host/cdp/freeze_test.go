package cdp

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFrozenPageCanBeDestroyed: a page whose main thread never yields still answers
// Page.crash (handled off the main thread): its renderer dies and the session fails at once.
func TestFrozenPageCanBeDestroyed(t *testing.T) {
	b := launch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	targetID, sid := attachPage(t, ctx, b)
	for _, m := range []string{"Page.enable"} {
		if err := b.Call(ctx, sid, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Call(ctx, sid, "Page.navigate", map[string]any{"url": "data:text/html,<p>x</p><script>setTimeout(function(){for(;;){}},300)</script>"}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(800 * time.Millisecond)
	fctx, fcancel := context.WithTimeout(ctx, 2*time.Second)
	err := b.Call(fctx, sid, "DOMSnapshot.captureSnapshot", map[string]any{"computedStyles": []string{}}, nil)
	fcancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call to the frozen page: %v (want a timeout: the page must be frozen for this test)", err)
	}
	began := time.Now()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	err = b.Call(cctx, sid, "Page.crash", nil, nil)
	ccancel()
	t.Logf("Page.crash: %v after %v", err, time.Since(began))
	for time.Since(began) < 10*time.Second && b.SessionErr(sid) == nil {
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("session error %v after %v", b.SessionErr(sid), time.Since(began))
	if !errors.Is(b.SessionErr(sid), ErrTargetCrashed) {
		t.Fatalf("the frozen page did not die")
	}
	began = time.Now()
	err = b.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": targetID}, nil)
	t.Logf("closeTarget after the crash: %v after %v", err, time.Since(began))
}
