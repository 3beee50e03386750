package version

import (
	"runtime/debug"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}, "devel+0123456789ab-dirty"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-X github.com/headless-dev/headless/internal/version.build=00ff99"}}}, "devel+build.00ff99"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-X=github.com/headless-dev/headless/internal/version.build=abc -s"}}}, "devel+build.abc"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-X example.com/other.build=abc"}}}, "devel"},
		// scripts/build.sh's stamps: the commit (and -dirty) named, the build id after it.
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-s -w -X github.com/headless-dev/headless/internal/version.build=00ff99 -X github.com/headless-dev/headless/internal/version.commit=e315f7c2080cf9ada94e0a659702de2030cfea11-dirty -X github.com/headless-dev/headless/internal/version.date=2026-12-03T13:23:58+00:00"}}}, "devel+e315f7c2080c-dirty+build.00ff99"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-X github.com/headless-dev/headless/internal/version.commit=e315f7c2080cf9ada94e0a659702de2030cfea11"}}}, "devel+e315f7c2080c"},
	} {
		if got := Of(&tc.bi); got != tc.want {
			t.Errorf("Of(%+v) = %q, want %q", tc.bi, got, tc.want)
		}
	}
}

// TestGetStamped: a binary scripts/build.sh stamped names its release, commit and date.
func TestGetStamped(t *testing.T) {
	defer func(b, c, d, r string) { build, commit, date, release = b, c, d, r }(build, commit, date, release)
	build, commit, date, release = "00ff99", "e315f7c2080cf9ada94e0a659702de2030cfea11", "2026-12-03T13:23:58Z", ""
	if g := Get(); g.Version != "devel+e315f7c2080c+build.00ff99" || g.Commit != commit || g.Date != date || g.Build != build {
		t.Errorf("Get() = %+v", g)
	}
	release = "v0.9.0"
	if g := Get(); g.Version != "v0.9.0+build.00ff99" || g.Release != "v0.9.0" {
		t.Errorf("Get() of a release = %+v", g)
	}
}
