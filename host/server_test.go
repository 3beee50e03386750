package host

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/rpc"
	"github.com/headless-dev/headless/internal/wire"
)

// TestServerServesEveryControlMethod: the host's method table has every method of package
// control, and decodes each one's params strictly (an unknown field is BAD_REQUEST before
// the Host is touched).
func TestServerServesEveryControlMethod(t *testing.T) {
	m := (&Server{}).Methods() // no Host: no handler may run in this test
	methods := []string{
		control.MethodPing, control.MethodStatus, control.MethodShutdown, control.MethodSessionCreate,
		control.MethodSessionList, control.MethodSessionClose, control.MethodVisit, control.MethodSnapshot,
		control.MethodClick, control.MethodFill, control.MethodPress, control.MethodWait,
		control.MethodScreenshot, control.MethodProfileClear, control.MethodAuthLogin, control.MethodAuthEnroll,
		control.MethodAuthEnrollSave, control.MethodAuthEnrollDiscard, control.MethodCredentialsList,
		control.MethodCredentialsAdd, control.MethodCredentialsRemove, control.MethodCredentialsVerify,
		control.MethodBack, control.MethodSelect, control.MethodHover, control.MethodScroll,
	}
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go (&rpc.Server{Handler: m.Serve}).ServeConn(ctx, b, rpc.Peer{PID: 1})
	c := rpc.NewClient(a, control.ErrUnavailable)
	defer c.Close()
	for _, method := range methods {
		if !m.Has(method) {
			t.Errorf("the host does not serve %s", method)
			continue
		}
		err := c.Call(ctx, method, json.RawMessage(`{"no_such_field":1}`), nil)
		if wire.CodeOf(err) != wire.CodeBadRequest {
			t.Errorf("%s with an unknown field: %v", method, err)
		}
	}
}

func TestClientLabelCannotWriteSentences(t *testing.T) {
	for in, want := range map[string]string{
		"claude-code":                          "claude-code",
		"origin: https://bank.test (verified)": "origin? https?//bank.test ?verified?",
		"a\nb\x1b[31m":                         "a?b??31m",
	} {
		if got := clientLabel(control.ClientHelloParams{Name: in}); got != want {
			t.Errorf("clientLabel(%q) = %q, want %q", in, got, want)
		}
	}
	if got := clientLabel(control.ClientHelloParams{Name: "vscode", Version: "1.99.0"}); got != "vscode 1.99.0" {
		t.Errorf("name and version: %q", got)
	}
}

// TestHangupCancelsAtOnce: the verbs that act for a caller who may be waiting for a person (a
// sign-in, a verify, a passkey, a wait, a journey) are withdrawn the moment the caller hangs up,
// not after the connection's drain grace (rpc.Methods.CancelOnHangup): a prompt does not
// outlive its caller. (The end-to-end tests see the prompt go; how soon is a speed.)
func TestHangupCancelsAtOnce(t *testing.T) {
	m := (&Server{}).Methods()
	for _, method := range []string{control.MethodAuthLogin, control.MethodCredentialsVerify, control.MethodCredentialsAddPasskey,
		control.MethodWait, control.MethodJourneyRun} {
		if !m.CancelOnHangup[method] {
			t.Errorf("%s is not withdrawn when its caller hangs up", method)
		}
	}
}
