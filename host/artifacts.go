package host

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headless-dev/headless/internal/atomicfile"
	"github.com/headless-dev/headless/internal/wire"
)

// Screenshot writes a PNG of the session's viewport to the private artifact store.
func (h *Host) Screenshot(ctx context.Context, name string) (ScreenshotResult, error) {
	b, s, unlock, err := h.lockSession(ctx, name)
	if err != nil {
		return ScreenshotResult{}, err
	}
	defer unlock()
	// Pixels show what a field holds (a revealed password, or its length in bullets): none
	// while a field the host typed into still holds a value.
	if left, err := h.secretOnPage(ctx, b, s); err != nil {
		return ScreenshotResult{}, err
	} else if left {
		return ScreenshotResult{}, errSecretOnPage()
	}
	var r struct {
		Data string `json:"data"`
	}
	// A page kept busy (by another page in its renderer process, say) never produces a frame:
	// bounded, so the answer is TIMEOUT rather than the CLI's deadline.
	sctx, scancel := context.WithTimeout(ctx, ScreenshotWait)
	err = b.Call(sctx, s.sid, "Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	scancel()
	if err != nil {
		return ScreenshotResult{}, h.browserErr(err)
	}
	// And once more after the capture: a page that refilled the field meanwhile gets no picture.
	if left, err := h.secretOnPage(ctx, b, s); err != nil || left {
		if err == nil {
			err = errSecretOnPage()
		}
		return ScreenshotResult{}, err
	}
	if base64.StdEncoding.DecodedLen(len(r.Data)) > MaxScreenshotLen {
		return ScreenshotResult{}, wire.Errorf(wire.CodeInternal, "screenshot larger than %d bytes", MaxScreenshotLen)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return ScreenshotResult{}, fmt.Errorf("decode screenshot: %w", err)
	}
	dir := h.o.Layout.Artifacts()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ScreenshotResult{}, err
	}
	os.Chmod(dir, 0o700)
	sum := sha256.Sum256(png)
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.png", s.name, h.o.Now().UTC().Format("20060102T150405.000000000Z")))
	if err := atomicfile.Write(path, png); err != nil {
		return ScreenshotResult{}, err
	}
	pruneArtifacts(dir, MaxScreenshots)
	return ScreenshotResult{Session: s.name, Path: path, SHA256: hex.EncodeToString(sum[:]), Bytes: len(png)}, nil
}

func pruneArtifacts(dir string, keep int) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= keep {
		return
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".png") {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := os.Stat(filepath.Join(dir, names[i]))
		b, _ := os.Stat(filepath.Join(dir, names[j]))
		return a != nil && b != nil && a.ModTime().Before(b.ModTime())
	})
	for len(names) > keep {
		os.Remove(filepath.Join(dir, names[0]))
		names = names[1:]
	}
}
