package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

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

// chord is a key press: a key and the modifiers held while it is pressed.
type chord struct {
	key  keyDef
	mods []keyDef
	bits int // CDP's modifiers: Alt 1, Control 2, Meta 4, Shift 8
}

// modifierKeys are the modifiers press takes (journey.Modifiers), as key events.
var modifierKeys = map[string]struct {
	def keyDef
	bit int
}{
	"Alt":     {keyDef{"Alt", "AltLeft", "", 18}, 1},
	"Control": {keyDef{"Control", "ControlLeft", "", 17}, 2},
	"Meta":    {keyDef{"Meta", "MetaLeft", "", 91}, 4},
	"Shift":   {keyDef{"Shift", "ShiftLeft", "", 16}, 8},
}

// editCommands are the editing commands of Control with a letter that Chromium runs only when
// asked for by name (as the key binding of the platform would).
var editCommands = map[string]string{"a": "selectAll", "c": "copy", "x": "cut", "v": "paste", "z": "undo", "y": "redo"}

// lookupKey is a key press: a named key or one printable character, after modifiers joined by
// "+" (Control+A, Shift+Tab, Meta+Enter).
func lookupKey(name string) (chord, error) {
	mods, key, ok := journey.SplitChord(name)
	if !ok || !journey.ValidKey(name) {
		return chord{}, &wire.Error{Code: wire.CodeInvalidArgument,
			Message: fmt.Sprintf("unknown key %q", clip.Text(name, 32)),
			Hint: "press takes one printable character or one of " + strings.Join(journey.KeyNames(), ", ") +
				", after modifiers joined by + (" + strings.Join(journey.Modifiers(), ", ") + "): Control+A, Shift+Tab"}
	}
	var c chord
	for _, m := range mods {
		c.mods = append(c.mods, modifierKeys[m].def)
		c.bits |= modifierKeys[m].bit
	}
	if k, ok := keys[key]; ok {
		c.key = k
	} else {
		c.key = keyDef{key: key, text: key}
		if r := []rune(key)[0]; r < 0x80 && unicode.IsLetter(r) {
			up := strings.ToUpper(key)
			c.key.code, c.key.vk = "Key"+up, int(up[0])
		} else if r >= '0' && r <= '9' {
			c.key.code, c.key.vk = "Digit"+key, int(r)
		}
	}
	if c.bits&(1|2|4) != 0 {
		c.key.text = "" // a shortcut types nothing
	} else if c.bits&8 != 0 && len(c.key.text) == 1 {
		c.key.text = strings.ToUpper(c.key.text)
		c.key.key = c.key.text
	}
	return c, nil
}

func pressKey(ctx context.Context, b *cdp.Browser, s *session, name string) error {
	c, err := lookupKey(name)
	if err != nil {
		return err
	}
	event := func(typ string, k keyDef, bits int) map[string]any {
		ev := map[string]any{"type": typ, "key": k.key}
		if k.code != "" {
			ev["code"] = k.code
		}
		if k.vk != 0 {
			ev["windowsVirtualKeyCode"] = k.vk
		}
		if typ == "keyDown" && k.text != "" {
			ev["text"] = k.text
		}
		if bits != 0 {
			ev["modifiers"] = bits
		}
		return ev
	}
	var evs []map[string]any
	held := 0
	for _, m := range c.mods {
		held |= modifierKeys[m.key].bit
		evs = append(evs, event("rawKeyDown", m, held))
	}
	down := event("keyDown", c.key, c.bits)
	if cmd, ok := editCommands[strings.ToLower(c.key.key)]; ok && c.bits == 2 {
		down["commands"] = []string{cmd}
	} else if ok && strings.ToLower(c.key.key) == "z" && c.bits == 2|8 {
		down["commands"] = []string{"redo"}
	}
	evs = append(evs, down, event("keyUp", c.key, c.bits))
	for i := len(c.mods) - 1; i >= 0; i-- {
		held &^= modifierKeys[c.mods[i].key].bit
		evs = append(evs, event("keyUp", c.mods[i], held))
	}
	for _, ev := range evs {
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
		page, err = h.acted(ctx, b, s, func(ctx context.Context) error {
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
