package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

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
// nothing: the doctor asks brokerd only when one holds broker.lock).
func (c *cmd) doctorReport(ctx context.Context) doctor.Report {
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
	return doctor.Run(ctx, p)
}

// doctorCmd is 'headless doctor': the report, exit status 1 only when a check failed.
func (c *cmd) doctorCmd(fs *flag.FlagSet) run {
	return func(ctx context.Context, args []string, dash int) (any, func(io.Writer), error) {
		r := c.doctorReport(ctx)
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
