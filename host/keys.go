package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/headless-dev/headless/host/cdp"
	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/host/snapshot"
	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/journey"
	"github.com/headless-dev/headless/internal/wire"
)

type keyDef struct {
	key, code, text string
	vk              int
}

var keys = map[string]keyDef{
	"Enter":      {"Enter", "Enter", "\r", 13},
	"Tab":        {"Tab", "Tab", "", 9},
	"Escape":     {"Escape", "Escape", "", 27},
	"Backspace":  {"Backspace", "Backspace", "", 8},
	"Delete":     {"Delete", "Delete", "", 46},
	"Space":      {" ", "Space", " ", 32},
	"ArrowUp":    {"ArrowUp", "ArrowUp", "", 38},
	"ArrowDown":  {"ArrowDown", "ArrowDown", "", 40},
	"ArrowLeft":  {"ArrowLeft", "ArrowLeft", "", 37},
	"ArrowRight": {"ArrowRight", "ArrowRight", "", 39},
	"Home":       {"Home", "Home", "", 36},
	"End":        {"End", "End", "", 35},
	"PageUp":     {"PageUp", "PageUp", "", 33},
	"PageDown":   {"PageDown", "PageDown", "", 34},
}

// lookupKey is the key press names: a named key, or one printable character.
func lookupKey(name string) (keyDef, error) {
	if k, ok := keys[name]; ok {
		return k, nil
	}
	r := []rune(name)
	if len(r) != 1 || r[0] < 0x20 || r[0] == 0x7f {
		return keyDef{}, &wire.Error{Code: wire.CodeInvalidArgument,
			Message: fmt.Sprintf("unknown key %q", clip.Text(name, 32)),
			Hint:    "press takes one printable character or one of " + strings.Join(journey.KeyNames(), ", ") + " (no modifiers)"}
	}
	return keyDef{key: name, text: name}, nil
}

func pressKey(ctx context.Context, b *cdp.Browser, s *session, name string) error {
	k, err := lookupKey(name)
	if err != nil {
		return err
	}
	down := map[string]any{"type": "keyDown", "key": k.key}
	if k.code != "" {
		down["code"] = k.code
	}
	if k.vk != 0 {
		down["windowsVirtualKeyCode"] = k.vk
	}
	if k.text != "" {
		down["text"] = k.text
	}
	up := map[string]any{"type": "keyUp", "key": k.key}
	if k.code != "" {
		up["code"] = k.code
	}
	for _, ev := range []map[string]any{down, up} {
		if err := b.Call(ctx, s.sid, "Input.dispatchKeyEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// Press sends one key to the focused element; with p.Ref, to the element of that ref, focused
// first (NOT_INTERACTABLE when it does not take or keep the focus).
func (h *Host) Press(ctx context.Context, p control.PressParams) (page control.PageResult, err error) {
	if _, err := lookupKey(p.Key); err != nil {
		return control.PageResult{}, err
	}
	err = h.onRef(ctx, p.Session, p.Ref, false, func(b *cdp.Browser, s *session, t *snapshot.Target) (err error) {
		if t != nil {
			if err := h.focus(ctx, b, s, *t, p.Ref); err != nil {
				return err
			}
		}
		page, err = h.acted(ctx, b, s, func() error {
			if err := pressKey(ctx, b, s, p.Key); err != nil {
				return h.browserErr(err)
			}
			return nil
		})
		return err
	})
	return page, err
}

// focus gives the element of ref the focus and checks, with the host's fixed fnFocused, that
// it has it.
func (h *Host) focus(ctx context.Context, b *cdp.Browser, s *session, t snapshot.Target, ref string) error {
	if err := b.Call(ctx, s.sid, "DOM.focus", map[string]any{"backendNodeId": t.BackendNodeID}, nil); err != nil {
		var ce *cdp.Error
		if errors.As(err, &ce) && strings.Contains(ce.Message, "not focusable") {
			return wire.Errorf(wire.CodeNotInteractable, "the element of ref %s cannot take the focus", ref)
		}
		return h.nodeErr(err)
	}
	focused, err := h.callFixed(ctx, b, s, t.BackendNodeID, t.FrameID, fnFocused)
	if err != nil {
		return err
	}
	if !focused {
		return wire.Errorf(wire.CodeNotInteractable, "the element of ref %s did not keep the focus; no key was pressed", ref)
	}
	return nil
}
