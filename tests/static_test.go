//go:build linux

package tests

import (
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/headless-dev/headless/internal/test/realtest"
)

// TestBinariesAreStatic: brokerd and headless, as scripts/build.sh builds them (TestMain uses
// it), have no program interpreter and no shared-library dependencies, so the dynamic loader
// never runs for them and LD_PRELOAD / LD_LIBRARY_PATH cannot load code into them.
func TestBinariesAreStatic(t *testing.T) {
	parallel(t)
	realtest.Need(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	for _, name := range []string{"brokerd", "headless"} {
		f, err := elf.Open(filepath.Join(binDir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s has a program interpreter (PT_INTERP): it is dynamically linked", name)
			}
			if p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s has a PT_DYNAMIC segment", name)
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
			t.Errorf("%s needs shared libraries %v (%v)", name, libs, err)
		}
		f.Close()
	}
	// The check can fail: a dynamic binary of the system has an interpreter.
	f, err := elf.Open("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	interp := false
	for _, p := range f.Progs {
		interp = interp || p.Type == elf.PT_INTERP
	}
	if !interp {
		t.Fatal("/bin/true has no PT_INTERP either: this check proves nothing")
	}
}
