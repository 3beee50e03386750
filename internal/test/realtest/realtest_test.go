package realtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRootIsTheModule: Root names the repository's top, where go.mod and scripts/ are (the
// harness runs scripts/with-secret-service.sh from there).
func TestRootIsTheModule(t *testing.T) {
	for _, p := range []string{"go.mod", "scripts/with-secret-service.sh"} {
		if _, err := os.Stat(filepath.Join(Root(t), p)); err != nil {
			t.Fatalf("Root() = %s: %v", Root(t), err)
		}
	}
}
