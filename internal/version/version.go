// Package version reports the build's version from debug.ReadBuildInfo.
package version

import (
	"runtime/debug"
)

// String is the module version, or "devel" plus the VCS revision for a source build.
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return Of(bi)
}

// Of is String for the binary whose build info is bi (debug/buildinfo reads another binary's).
func Of(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "devel"
	if rev != "" {
		v += "+" + rev
	}
	if dirty {
		v += "-dirty"
	}
	return v
}
