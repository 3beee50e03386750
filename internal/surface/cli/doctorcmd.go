package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/headless-dev/headless/host/control"
	"github.com/headless-dev/headless/internal/brokerapi"
	"github.com/headless-dev/headless/internal/hardening"
	"github.com/headless-dev/headless/internal/keyprobe"
	"github.com/headless-dev/headless/internal/procstat"
	"github.com/headless-dev/headless/internal/surface/doctor"
	"github.com/headless-dev/headless/internal/version"
	"github.com/headless-dev/headless/internal/xdg"
)

// DoctorProbes is Env.Doctor in production: the doctor's view of this machine for layout,
// with getenv only to find the session bus (never printed), whether DISPLAY and
// WAYLAND_DISPLAY are set, and the systemd user unit directories, and inspect to look at the
// durable profile (host.InspectProfile). brokerd and the host are asked through the CLI's own
// dialers, which start nothing.
func DoctorProbes(getenv func(string) string, inspect func(xdg.Layout) (control.ProfileFacts, error)) func(xdg.Layout) doctor.Probes {
	return func(layout xdg.Layout) doctor.Probes {
		bus, _ := keyprobe.SessionBusAddress(getenv)
		exe, _ := os.Executable()
		return doctor.Probes{
			GOOS: runtime.GOOS, Layout: layout, Executable: exe, BusAddress: bus,
			Inspect:         keyprobe.Inspect,
			Profile:         func() (control.ProfileFacts, error) { return inspect(layout) },
			ChromiumVersion: doctor.DebianChromiumVersion,
			Alive:           procstat.Alive,
			Listening:       doctor.ProcListening,
			PtraceScope:     hardening.PtraceScope,
			Root:            os.Geteuid() == 0,
			Display:         getenv("DISPLAY") != "",
			Wayland:         getenv("WAYLAND_DISPLAY") != "",
			LookupGroup:     hardening.LookupGroup,
			InGroup:         hardening.InGroup,
			Stat:            doctor.StatFile,
			Units:           doctor.UserUnits(doctor.UserUnitDirs(getenv)),
		}
	}
}

// doctorReport runs the doctor: Env.Doctor's probes plus this CLI's dialers (which start
// nothing: the doctor asks brokerd only when one holds broker.lock). brokerd and the host get
// as long to answer as every other command gives them (doctor.DefaultWait).
func (c *cmd) doctorReport(ctx context.Context) doctor.Report {
	return c.doctorWaiting(ctx, doctor.DefaultWait)
}

// maxDoctorWait bounds doctor --timeout.
const maxDoctorWait = 5 * time.Minute

// doctorWaiting is doctorReport with wait for brokerd's and the host's answers.
func (c *cmd) doctorWaiting(ctx context.Context, wait time.Duration) doctor.Report {
	var p doctor.Probes
	if c.env.Doctor != nil {
		p = c.env.Doctor(c.env.Layout)
	}
	p.Version = version.String()
	if p.Layout.Runtime == "" {
		p.Layout = c.env.Layout
	}
	p.Broker = func(ctx context.Context) (brokerapi.VersionResult, error) {
		b, err := c.env.DialBroker(ctx)
		if err != nil {
			return brokerapi.VersionResult{}, err
		}
		defer b.Close()
		return b.Version(ctx)
	}
	p.AuditVerify = c.env.VerifyAudit
	p.Host = func(ctx context.Context) (control.Status, error) {
		return withHost(ctx, c, func(cl *control.Client) (control.Status, error) { return cl.Status(ctx) })
	}
	p.Wait = wait
	return doctor.Run(ctx, p)
}

// doctorCmd is 'headless doctor': the report, exit status 1 only when a check failed. A busy
// daemon is waited for; after a moment a line on a terminal says so.
func (c *cmd) doctorCmd(fs *flag.FlagSet) run {
	wait := fs.Duration("timeout", doctor.DefaultWait, "give brokerd and the host this `DURATION` to answer (at most 5m)")
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		if *wait <= 0 || *wait > maxDoctorWait {
			return nil, nil, usagef("--timeout is more than 0 and at most %s", maxDoctorWait)
		}
		var mu sync.Mutex
		stop := func() {}
		moment := time.AfterFunc(2*time.Second, func() {
			mu.Lock()
			defer mu.Unlock()
			stop = c.progressLine(func(d time.Duration) string {
				return fmt.Sprintf("waiting for brokerd and the host to answer: %s of %s", d+2*time.Second, *wait)
			})
		})
		r := c.doctorWaiting(ctx, *wait)
		moment.Stop()
		mu.Lock()
		stop()
		mu.Unlock()
		return r, func(w io.Writer) { doctorHuman(w, r) }, nil
	}
}

func doctorExit(result any) int {
	if r, ok := result.(doctor.Report); ok && r.Failed() {
		return 1
	}
	return 0
}

var stateMark = map[doctor.State]string{doctor.Healthy: "ok  ", doctor.Warning: "warn", doctor.Unsupported: "n/a ", doctor.Failed: "FAIL"}

func doctorHuman(w io.Writer, r doctor.Report) {
	fmt.Fprintf(w, "headless doctor (report format %d, headless %s, %s)\n", r.Format, r.Version, r.OS)
	for _, ch := range r.Checks {
		fmt.Fprintf(w, "[%s] %-20s %s\n", stateMark[ch.State], ch.ID, ch.Detail)
		if ch.Hint != "" && ch.State != doctor.Healthy {
			fmt.Fprintf(w, "       %-20s hint: %s\n", "", ch.Hint)
		}
	}
	fmt.Fprintf(w, "%d healthy, %d warning, %d unsupported, %d failed\n", r.Summary.Healthy, r.Summary.Warning, r.Summary.Unsupported, r.Summary.Failed)
}
