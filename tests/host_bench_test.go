//go:build linux

package tests

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headless-dev/headless/host"
	"github.com/headless-dev/headless/host/cdp"
)

// BenchmarkHostStart times `headless start` (brokerd, keyring check, profile, Chromium, default
// session) until it returns ready; each iteration stops everything again, untimed. Each
// iteration also launches bare Chromium (bareChromium, untimed for p50-ms), before or after the
// start in turn, reported as bare-p50-ms/bare-p99-ms: on a shared machine whose load drifts
// within a minute, a baseline measured in the same iterations is the only fair one.
func BenchmarkHostStart(b *testing.B) {
	e := newEnv(b, envOptions{})
	var s, bare samples
	for i := 0; b.Loop(); i++ {
		if i%2 == 1 {
			b.StopTimer()
			bare = append(bare, bareChromium(b))
			b.StartTimer()
		}
		start := time.Now()
		r := e.run("", "headless", "start", "--json")
		s = append(s, time.Since(start))
		if r.code != 0 {
			b.Fatalf("start: %+v", r)
		}
		b.StopTimer()
		if r := e.run("", "headless", "stop", "--json"); r.code != 0 {
			b.Fatalf("stop: %+v", r)
		}
		if i%2 == 0 {
			bare = append(bare, bareChromium(b))
		}
		b.StartTimer()
	}
	// The median of each iteration's start/bare ratio: the two of one iteration ran seconds
	// apart, under about the same load. (Before report, which sorts the samples.)
	var r []float64
	for i := range min(len(s), len(bare)) {
		r = append(r, float64(s[i])/float64(bare[i]))
	}
	slices.Sort(r)
	if len(r) > 0 {
		b.ReportMetric(r[(len(r)-1)/2], "paired-ratio-p50")
	}
	s.report(b)
	bare.reportAs(b, "bare-")
}

// BenchmarkHostStartWindow is BenchmarkHostStart with a window ('headless start --window' on an
// X display of its own, Xvfb): start to ready against bare Chromium showing a window on the same
// display (bare-p50-ms), launched before or after the start in turn, the same iterations.
func BenchmarkHostStartWindow(b *testing.B) {
	display := xvfb(b)
	e := newEnv(b, envOptions{})
	e.writeConfig(`{"presence":{"display":"` + display + `"}}`)
	var s, bare samples
	for i := 0; b.Loop(); i++ {
		if i%2 == 1 {
			b.StopTimer()
			bare = append(bare, bareChromiumWindow(b, display))
			b.StartTimer()
		}
		start := time.Now()
		r := e.run("", "headless", "start", "--window", "--json")
		s = append(s, time.Since(start))
		if r.code != 0 || !strings.Contains(r.stdout, `"window":"x11"`) {
			b.Fatalf("start --window: %+v", r)
		}
		b.StopTimer()
		if r := e.run("", "headless", "stop", "--json"); r.code != 0 {
			b.Fatalf("stop: %+v", r)
		}
		if i%2 == 0 {
			bare = append(bare, bareChromiumWindow(b, display))
		}
		b.StartTimer()
	}
	var r []float64
	for i := range min(len(s), len(bare)) {
		r = append(r, float64(s[i])/float64(bare[i]))
	}
	slices.Sort(r)
	if len(r) > 0 {
		b.ReportMetric(r[(len(r)-1)/2], "paired-ratio-p50")
	}
	s.report(b)
	bare.reportAs(b, "bare-")
}

// bareChromiumWindow is bareChromium with a window on display.
func bareChromiumWindow(b *testing.B, display string) time.Duration {
	dir := b.TempDir()
	start := time.Now()
	br, err := cdp.Launch(context.Background(), cdp.Options{
		Path: host.DefaultChromium, Args: []string{"--user-data-dir=" + filepath.Join(dir, "p")},
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "DISPLAY=" + display}, TempDir: filepath.Join(dir, "tmp"),
		Window: "x11", WindowName: "bare",
	})
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	br.Kill()
	return d
}

// BenchmarkBareChromiumPipe is the baseline on its own: Chromium launched over a pipe with the
// same flags until its first Browser.getVersion answer.
func BenchmarkBareChromiumPipe(b *testing.B) {
	newEnv(b, envOptions{noBus: true})
	var s samples
	for b.Loop() {
		s = append(s, bareChromium(b))
	}
	s.report(b)
}

// bareChromium launches Chromium with cdp's flags and a fresh profile dir, times it until its
// first Browser.getVersion answer, and kills it (untimed).
func bareChromium(b *testing.B) time.Duration {
	dir := b.TempDir()
	start := time.Now()
	br, err := cdp.Launch(context.Background(), cdp.Options{
		Path: host.DefaultChromium, Args: []string{"--user-data-dir=" + filepath.Join(dir, "p")},
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + dir}, TempDir: filepath.Join(dir, "tmp"),
	})
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	br.Kill()
	return d
}

func benchHost(b *testing.B) *env {
	e := newEnv(b, envOptions{})
	if r := e.run("", "headless", "start", "--json"); r.code != 0 {
		b.Fatalf("start: %+v", r)
	}
	return e
}

// BenchmarkSessionCreate creates (timed) and closes (untimed) a normal session.
func BenchmarkSessionCreate(b *testing.B) {
	e := benchHost(b)
	var s samples
	for i := 0; b.Loop(); i++ {
		name := "s" + strconv.Itoa(i)
		start := time.Now()
		r := e.run("", "headless", "session", "create", name, "--json")
		s = append(s, time.Since(start))
		if r.code != 0 {
			b.Fatalf("%+v", r)
		}
		b.StopTimer()
		e.run("", "headless", "session", "close", name, "--json")
		b.StartTimer()
	}
	s.report(b)
}

// BenchmarkIsolatedCreateClose creates and closes an isolated session (both timed).
func BenchmarkIsolatedCreateClose(b *testing.B) {
	e := benchHost(b)
	var s samples
	for i := 0; b.Loop(); i++ {
		name := "iso" + strconv.Itoa(i)
		start := time.Now()
		r1 := e.run("", "headless", "session", "create", name, "--isolated", "--json")
		r2 := e.run("", "headless", "session", "close", name, "--json")
		s = append(s, time.Since(start))
		if r1.code != 0 || r2.code != 0 {
			b.Fatalf("%+v %+v", r1, r2)
		}
	}
	s.report(b)
}

// BenchmarkHostIdleRSS reports the host process's resident memory (Chromium not included)
// after start-up and a few page loads.
func BenchmarkHostIdleRSS(b *testing.B) {
	e := benchHost(b)
	srv := site(b)
	for b.Loop() {
		if r := e.run("", "headless", "visit", srv.URL+"/", "--json"); r.code != 0 {
			b.Fatalf("%+v", r)
		}
		e.run("", "headless", "snapshot", "--json")
	}
	var st struct {
		Host struct {
			PID int `json:"pid"`
		} `json:"host"`
	}
	r := e.run("", "headless", "status", "--json")
	json.Unmarshal([]byte(r.stdout), &st)
	time.Sleep(time.Second)
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(st.Host.PID), "status"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			b.ReportMetric(float64(kb)/1024, "rss-MB")
		}
	}
}

// BenchmarkProfileClear times `headless profile clear --yes` with the host running (close the
// sessions and Chromium, swap in a fresh profile, relaunch, fresh default session).
func BenchmarkProfileClear(b *testing.B) {
	e := benchHost(b)
	var s samples
	for b.Loop() {
		start := time.Now()
		r := e.run("", "headless", "profile", "clear", "--yes", "--json")
		s = append(s, time.Since(start))
		if r.code != 0 {
			b.Fatalf("profile clear: %+v", r)
		}
	}
	s.report(b)
}

// BenchmarkBaselineStopStart is the baseline for BenchmarkProfileClear: what a person would do
// by hand, `headless stop` then `headless start` (without deleting anything).
func BenchmarkBaselineStopStart(b *testing.B) {
	e := benchHost(b)
	var s samples
	for b.Loop() {
		start := time.Now()
		r := e.run("", "headless", "stop", "--json")
		if r.code == 0 {
			r = e.run("", "headless", "start", "--json")
		}
		s = append(s, time.Since(start))
		if r.code != 0 {
			b.Fatalf("stop+start: %+v", r)
		}
	}
	s.report(b)
}
