package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/xdg"
)

// MCPStdio is the production Env.MCPStdio: stdin, and this process's stdout moved to a new
// descriptor that only the MCP transport holds; descriptor 1 then points at stderr, so that
// nothing else (a library's stray print, a panic's trace) can write into the protocol
// stream. Descriptors are close-on-exec: brokerd, started from here, never inherits them.
func MCPStdio() (io.Reader, io.Writer, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, nil, fmt.Errorf("dup stdout: %w", err)
	}
	if err := dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("point stdout at stderr: %w", err)
	}
	return os.Stdin, os.NewFile(uintptr(fd), "mcp-stdout"), nil
}

// ArtifactReader is the production Env.ReadArtifact: it reads a file only from the layout's
// artifact store, at most control.MaxScreenshotLen bytes.
func ArtifactReader(layout xdg.Layout) func(path string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		dir := layout.Artifacts()
		if filepath.Dir(path) != dir || strings.Contains(filepath.Base(path), "..") {
			return nil, fmt.Errorf("%q is not in the artifact store", path)
		}
		f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, control.MaxScreenshotLen+1))
		if err != nil {
			return nil, err
		}
		if len(b) > control.MaxScreenshotLen {
			return nil, fmt.Errorf("artifact larger than %d bytes", control.MaxScreenshotLen)
		}
		return b, nil
	}
}
