// Package version reports the build's version from debug.ReadBuildInfo.
package version

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// build is the build id scripts/build.sh stamps into brokerd and headless together
// (-ldflags -X), so that brokerd can tell the headless built with it from any other build of
// the same source version; "" for other builds.
var build string

// commit, date and release are what scripts/build.sh stamps (-ldflags -X) from the checkout it
// builds: the commit (with "-dirty" when the tree had uncommitted changes), the commit's date
// (RFC 3339), and the release tag when the commit is one (vX.Y.Z). The toolchain's own VCS
// stamp is used when they are not set (a plain go build in a checkout).
var commit, date, release string

// Info is what a build knows of where it came from.
type Info struct {
	Version string `json:"version"`           // String()
	Release string `json:"release,omitempty"` // the release tag, when the commit is one
	Commit  string `json:"commit,omitempty"`  // the full commit id, "-dirty" appended for a modified tree
	Date    string `json:"date,omitempty"`    // the commit's date, RFC 3339
	Build   string `json:"build,omitempty"`   // the build id brokerd and headless share
}

// Get is this binary's Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "unknown"}
	}
	in := Info{Version: of(bi, build), Release: release, Commit: commit, Date: date, Build: build}
	if in.Commit == "" {
		rev, dirty, when := vcs(bi)
		in.Commit, in.Date = rev, when
		if dirty && rev != "" {
			in.Commit += "-dirty"
		}
	}
	return in
}

// vcs is the toolchain's VCS stamp of bi.
func vcs(bi *debug.BuildInfo) (rev string, dirty bool, when string) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		case "vcs.time":
			when = s.Value
		}
	}
	return rev, dirty, when
}

// commitFlag finds the commit stamp in another binary's recorded -ldflags.
var commitFlag = regexp.MustCompile(`-X[= ]github\.com/headless-dev/headless/internal/version\.commit=([0-9a-f]{7,64}(?:-dirty)?)\b`)

// stamped is the commit scripts/build.sh stamped into the binary of bi (this one when id is
// its own build id): ok false when none was.
func stamped(bi *debug.BuildInfo, id string) (rev string, dirty bool, ok bool) {
	c := ""
	if id != "" && id == build {
		c = commit
	} else {
		for _, s := range bi.Settings {
			if s.Key == "-ldflags" {
				if m := commitFlag.FindStringSubmatch(s.Value); m != nil {
					c = m[1]
				}
			}
		}
	}
	if c == "" {
		return "", false, false
	}
	rev, dirtyStr, _ := strings.Cut(c, "-")
	return rev, dirtyStr == "dirty", true
}

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
	if release != "" && id == build {
		v = release
	}
	if v == "" || v == "(devel)" {
		rev, dirty, _ := vcs(bi)
		if c, d, ok := stamped(bi, id); ok {
			rev, dirty = c, d
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
