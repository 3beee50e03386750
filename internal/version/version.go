// Package version reports the build's version from debug.ReadBuildInfo.
package version

import (
	"regexp"
	"runtime/debug"
)

// build is the build id scripts/build.sh stamps into brokerd and headless together
// (-ldflags -X), so that brokerd can tell the headless built with it from any other build of
// the same source version; "" for other builds.
var build string

// buildFlag finds that stamp in another binary's recorded -ldflags.
var buildFlag = regexp.MustCompile(`-X[= ]github\.com/headless-dev/headless/internal/version\.build=([0-9a-f]{1,64})\b`)

// String is the module version, or "devel" plus the VCS revision for a source build, plus
// "+build.ID" when scripts/build.sh stamped a build id.
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return of(bi, build)
}

// Of is String for the binary whose build info is bi (debug/buildinfo reads another binary's).
func Of(bi *debug.BuildInfo) string {
	id := ""
	for _, s := range bi.Settings {
		if s.Key == "-ldflags" {
			if m := buildFlag.FindStringSubmatch(s.Value); m != nil {
				id = m[1]
			}
		}
	}
	return of(bi, id)
}

func of(bi *debug.BuildInfo, id string) string {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
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
		v = "devel"
		if rev != "" {
			v += "+" + rev
		}
		if dirty {
			v += "-dirty"
		}
	}
	if id != "" {
		v += "+build." + id
	}
	return v
}
