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
	} {
		if got := Of(&tc.bi); got != tc.want {
			t.Errorf("Of(%+v) = %q, want %q", tc.bi, got, tc.want)
		}
	}
}
