package doctor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/headless-dev/headless/internal/procstat"
)

// UnitFile is one file of the brokerd.service user unit: the unit or a drop-in.
type UnitFile struct {
	Path string
	Body []byte
}

const (
	unitName     = "brokerd.service"
	maxUnitBytes = 64 << 10 // a unit file larger than this is not read
	maxDropIns   = 64
)

// Why a user unit's option breaks a set-gid exec. The user manager has no CAP_SYS_ADMIN, so
// it sets no_new_privs for any seccomp-based option, and runs the unit in a user namespace
// (PrivateUsers=, leaving root unmapped) for the file-system and namespace options (systemd
// 254 and later): in both the kernel grants brokerd no group, and it reads no seal key.
const (
	whyNNP    = "sets no_new_privs"
	whyImply  = "implies no_new_privs in a user unit"
	whyUserNS = "implies PrivateUsers= in a user unit (root unmapped)"
)

// unitForbidden are the [Service] options a brokerd.service user unit may not turn on, in
// report order.
var unitForbidden = []struct{ key, why string }{
	{"NoNewPrivileges", whyNNP},
	{"SystemCallFilter", whyImply}, {"SystemCallArchitectures", whyImply}, {"SystemCallLog", whyImply},
	{"RestrictAddressFamilies", whyImply}, {"RestrictNamespaces", whyImply}, {"LockPersonality", whyImply},
	{"MemoryDenyWriteExecute", whyImply}, {"RestrictRealtime", whyImply}, {"RestrictSUIDSGID", whyImply},
	{"ProtectKernelTunables", whyImply}, {"ProtectKernelModules", whyImply}, {"ProtectKernelLogs", whyImply},
	{"ProtectClock", whyImply}, {"ProtectHostname", whyImply}, {"PrivateDevices", whyImply}, {"DynamicUser", whyImply},
	{"PrivateUsers", whyUserNS}, {"ProtectSystem", whyUserNS}, {"ProtectHome", whyUserNS}, {"PrivateTmp", whyUserNS},
	{"PrivateNetwork", whyUserNS}, {"PrivateIPC", whyUserNS}, {"PrivateMounts", whyUserNS},
	{"ProtectControlGroups", whyUserNS}, {"ProtectProc", whyUserNS}, {"ProcSubset", whyUserNS},
	{"ReadOnlyPaths", whyUserNS}, {"ReadWritePaths", whyUserNS}, {"InaccessiblePaths", whyUserNS},
	{"ExecPaths", whyUserNS}, {"NoExecPaths", whyUserNS}, {"TemporaryFileSystem", whyUserNS},
	{"BindPaths", whyUserNS}, {"BindReadOnlyPaths", whyUserNS}, {"RootDirectory", whyUserNS}, {"RootImage", whyUserNS},
}

func (d *run) checkSystemdUnit() {
	switch {
	case !d.linux():
		d.set(CheckSystemdUnit, Unsupported, "", "systemd user units are a Linux facility")
		return
	case d.p.Units == nil:
		d.set(CheckSystemdUnit, Warning, "this is a bug of the doctor", "not checked")
		return
	}
	files, err := d.p.Units()
	switch {
	case err != nil:
		d.set(CheckSystemdUnit, Warning, "check that your systemd user unit directories and "+unitName+" are readable files of reasonable size",
			"the %s user unit cannot be read", unitName)
		return
	case len(files) == 0:
		d.set(CheckSystemdUnit, Unsupported, "", "no %s user unit is installed (brokerd is started by headless or by you)", unitName)
		return
	}
	on := unitOptionsOn(files)
	var bad []string
	for _, f := range unitForbidden {
		if path, ok := on[f.key]; ok {
			bad = append(bad, fmt.Sprintf("%s= %s (%s)", f.key, f.why, procstat.Clean(path, 256)))
		}
	}
	if len(bad) > 0 {
		d.set(CheckSystemdUnit, Failed, "remove those lines, or reset each in a drop-in (systemctl --user edit brokerd.service: NAME=no for a yes/no option, NAME= for a list), then systemctl --user daemon-reload && systemctl --user restart brokerd.service",
			"the brokerd the unit runs is not given its group, so it releases and saves nothing (BROKER_UNTRUSTED): %s", strings.Join(bad, "; "))
		return
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, procstat.Clean(f.Path, 256))
	}
	d.set(CheckSystemdUnit, Healthy, "", "%s sets nothing that keeps brokerd from its group", strings.Join(names, ", "))
}

// unitOptionsOn applies the files' [Service] assignments in order, as systemd does, and
// returns each option of unitForbidden left on, with the file that last turned it on. An
// option is on after a non-empty assignment other than a false boolean; an empty assignment
// resets a list option, and a false boolean turns a boolean one off.
func unitOptionsOn(files []UnitFile) map[string]string {
	watched := map[string]bool{}
	for _, f := range unitForbidden {
		watched[f.key] = true
	}
	on := map[string]string{}
	for _, f := range files {
		section := ""
		for _, line := range unitLines(f.Body) {
			if strings.HasPrefix(line, "[") {
				section = strings.TrimSpace(line)
				continue
			}
			key, value, ok := strings.Cut(line, "=")
			key, value = strings.TrimSpace(key), strings.TrimSpace(value)
			if !ok || section != "[Service]" || !watched[key] {
				continue
			}
			if value == "" || falseWord(value) {
				delete(on, key)
			} else {
				on[key] = f.Path
			}
		}
	}
	return on
}

// unitLines splits a unit file into logical lines: comments and blank lines dropped, a line
// ending in a backslash joined with the next (a comment line inside is skipped, as systemd
// does).
func unitLines(body []byte) []string {
	var out []string
	var cur strings.Builder
	joining := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), maxUnitBytes+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") || line == "" && !joining {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			joining = true
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
		joining = false
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// falseWord is systemd's false boolean.
func falseWord(v string) bool {
	switch strings.ToLower(v) {
	case "0", "no", "n", "false", "f", "off":
		return true
	}
	return false
}

// UserUnitDirs is the systemd user unit search path, highest priority first (systemd.unit(5)),
// from the environment's HOME and XDG base directories; relative values are ignored. The
// generator directories and XDG_CONFIG_DIRS / XDG_DATA_DIRS other than their defaults are
// left out.
func UserUnitDirs(getenv func(string) string) []string {
	abs := func(k string) string {
		if v := getenv(k); filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return ""
	}
	home, config, data, runtime := abs("HOME"), abs("XDG_CONFIG_HOME"), abs("XDG_DATA_HOME"), abs("XDG_RUNTIME_DIR")
	if config == "" && home != "" {
		config = filepath.Join(home, ".config")
	}
	if data == "" && home != "" {
		data = filepath.Join(home, ".local", "share")
	}
	var dirs []string
	add := func(base, sub string) {
		if base != "" {
			dirs = append(dirs, filepath.Join(base, sub))
		}
	}
	add(config, "systemd/user.control")
	add(runtime, "systemd/user.control")
	add(runtime, "systemd/transient")
	add(config, "systemd/user")
	dirs = append(dirs, "/etc/systemd/user")
	add(runtime, "systemd/user")
	dirs = append(dirs, "/run/systemd/user")
	add(data, "systemd/user")
	return append(dirs, "/usr/local/share/systemd/user", "/usr/share/systemd/user", "/usr/local/lib/systemd/user", "/usr/lib/systemd/user")
}

// UserUnits returns the Units probe over dirs (UserUnitDirs): the brokerd.service found first,
// then its drop-ins (brokerd.service.d/*.conf of every directory, one of a name masking the
// same name in a later directory) sorted by name; none when no unit file exists. Each file is
// read up to 64 KiB, at most 64 drop-ins; a file that is not regular (a unit masked to
// /dev/null) reads as empty.
func UserUnits(dirs []string) func() ([]UnitFile, error) {
	return func() ([]UnitFile, error) {
		var files []UnitFile
		for _, d := range dirs {
			p := filepath.Join(d, unitName)
			b, err := readUnit(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			files = append(files, UnitFile{Path: p, Body: b})
			break
		}
		if len(files) == 0 {
			return nil, nil
		}
		dropIns := map[string]string{}
		for _, d := range dirs {
			dd := filepath.Join(d, unitName+".d")
			ents, err := os.ReadDir(dd)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", dd, err)
			}
			for _, e := range ents {
				if name := e.Name(); strings.HasSuffix(name, ".conf") && dropIns[name] == "" {
					dropIns[name] = filepath.Join(dd, name)
				}
			}
			if len(dropIns) > maxDropIns {
				return nil, fmt.Errorf("more than %d drop-ins of %s", maxDropIns, unitName)
			}
		}
		names := make([]string, 0, len(dropIns))
		for n := range dropIns {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			b, err := readUnit(dropIns[n])
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			files = append(files, UnitFile{Path: dropIns[n], Body: b})
		}
		return files, nil
	}
}

// readUnit reads a unit file (following a symlink, as systemd does) without blocking on a
// FIFO: a file that is not regular reads as empty.
func readUnit(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxUnitBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	case len(b) > maxUnitBytes:
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxUnitBytes)
	}
	return b, nil
}
