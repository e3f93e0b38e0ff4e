package deploy

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Settings are the deployment's files and the knobs the environment names
// (docs/configuration.md). Every path in it is absolute.
type Settings struct {
	// Home is $HOME, which the turn works in: never covered whole.
	Home             string
	ConfigDir        string
	ProjectsFile     string
	CapabilitiesFile string
	TurnFile         string
	StateDir         string
	AuditFile        string
	// ConfirmCommand asks a person to confirm a WRITE
	// (SPEAR_CONFIRM_COMMAND); empty means no one can be asked.
	ConfirmCommand string
	// Confine is SPEAR_CONFINE: true (on, the default) confines the turn's
	// shell away from the deployment; false (off) is the operator's
	// explicit acceptance of the risk.
	Confine bool
	// Network is SPEAR_NETWORK: what the confined shell's network reaches,
	// "outbound" (the default: the outside world, not the host), "none"
	// (its own loopback) or "host" (the host's network: the operator's
	// explicit acceptance of the risk). See package netwall.
	Network string
	// MaxOutput bounds a framed result's content, in bytes
	// (SPEAR_MAX_OUTPUT, default DefaultMaxOutput).
	MaxOutput int
	// ConfirmTimeout bounds SPEAR_CONFIRM_COMMAND (SPEAR_CONFIRM_TIMEOUT
	// seconds, default 60).
	ConfirmTimeout time.Duration
	// IdleTimeout is how long a warm provider's server may go without a
	// request before it is stopped (SPEAR_IDLE_TIMEOUT seconds, default
	// DefaultIdleTimeout).
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is how long a warm server may idle when
// SPEAR_IDLE_TIMEOUT names no time.
const DefaultIdleTimeout = 600 * time.Second

// DefaultMaxOutput is the default bound on a framed result, in bytes.
const DefaultMaxOutput = 64 << 10

// ErrNoHome is returned when a default location is needed and neither HOME
// nor the variable that overrides it is set: a relative default would put
// the deployment's files in whatever directory the process runs in.
var ErrNoHome = errors.New("HOME is not set, so the deployment's files have no default place")

// errDotDot is a setting's path with a ".." element (see HasDotDot).
var errDotDot = errors.New(`has a ".." in it, which a symbolic link before it would make mean another place`)

// SettingsError says which setting cannot be resolved and which variables
// to set.
type SettingsError struct {
	Setting string // the file or directory, as a person names it
	Vars    string // the variables that would settle it
	Want    string // what a value must be, for a setting that is not a path
	Err     error
}

func (e *SettingsError) Error() string {
	if errors.Is(e.Err, errDotDot) {
		return fmt.Sprintf("the %s is refused: %v; set %s to the path without it", e.Setting, e.Err, e.Vars)
	}
	if e.Want != "" {
		return fmt.Sprintf("the %s is wrong: %s=%v; set it to %s, or unset it for the default", e.Setting, e.Vars, e.Err, e.Want)
	}
	return fmt.Sprintf("the %s has no place: %v; set %s to an absolute path", e.Setting, e.Err, e.Vars)
}

func (e *SettingsError) Unwrap() error { return e.Err }

// SettingsFrom reads the environment through getenv. A directory that
// would default below HOME while HOME is unset is a *SettingsError, and so
// is any relative path: the deployment's files are never looked for
// relative to the directory the process happens to run in.
func SettingsFrom(getenv func(string) string) (Settings, error) {
	home := getenv("HOME")
	s := Settings{
		Home:             home,
		ConfigDir:        getenv("SPEAR_CONFIG_DIR"),
		ProjectsFile:     getenv("SPEAR_PROJECTS_FILE"),
		CapabilitiesFile: getenv("SPEAR_CAPABILITIES_FILE"),
		TurnFile:         getenv("SPEAR_TURN_FILE"),
		StateDir:         getenv("SPEAR_STATE_DIR"),
		AuditFile:        getenv("SPEAR_AUDIT_FILE"),
		ConfirmCommand:   getenv("SPEAR_CONFIRM_COMMAND"),
		MaxOutput:        DefaultMaxOutput,
		ConfirmTimeout:   60 * time.Second,
		IdleTimeout:      DefaultIdleTimeout,
		Confine:          true,
		Network:          "outbound",
	}
	switch v := getenv("SPEAR_NETWORK"); v {
	case "", "outbound":
	case "none", "host":
		s.Network = v
	default:
		// A typo never opens the host's network.
		return s, &SettingsError{Setting: "network setting", Vars: "SPEAR_NETWORK", Want: "outbound (the default), none or host", Err: fmt.Errorf("%q is none of them", v)}
	}
	switch v := getenv("SPEAR_CONFINE"); v {
	case "", "on":
	case "off":
		s.Confine = false
	default:
		// Anything but off keeps the confinement: a typo never lowers it.
		return s, &SettingsError{Setting: "confinement setting", Vars: "SPEAR_CONFINE", Want: "on (the default) or off", Err: fmt.Errorf("%q is neither on nor off", v)}
	}
	// A ".." after a symbolic link means one place to the kernel and
	// another to filepath.Join, which drops it as text: the confinement
	// would cover one directory and the gateway read the other.
	for _, name := range []string{"SPEAR_CONFIG_DIR", "SPEAR_PROJECTS_FILE", "SPEAR_CAPABILITIES_FILE", "SPEAR_TURN_FILE", "SPEAR_STATE_DIR", "SPEAR_AUDIT_FILE", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"} {
		if v := getenv(name); HasDotDot(v) {
			return s, &SettingsError{Setting: "path " + name + " names", Vars: name, Err: fmt.Errorf("%q %w", v, errDotDot)}
		}
	}
	underHome := func(xdgVar string, parts ...string) (string, bool) {
		if x := getenv(xdgVar); filepath.IsAbs(x) {
			return filepath.Join(append([]string{x}, parts[len(parts)-1])...), true
		}
		if !filepath.IsAbs(home) {
			return "", false
		}
		return filepath.Join(append([]string{home}, parts...)...), true
	}
	if s.ConfigDir == "" && (s.ProjectsFile == "" || s.CapabilitiesFile == "") {
		dir, ok := underHome("XDG_CONFIG_HOME", ".config", "spear")
		if !ok {
			return s, &SettingsError{Setting: "configuration directory", Vars: "HOME or SPEAR_CONFIG_DIR", Err: ErrNoHome}
		}
		s.ConfigDir = dir
	}
	if s.ProjectsFile == "" {
		s.ProjectsFile = filepath.Join(s.ConfigDir, "projects.json")
	}
	if s.CapabilitiesFile == "" {
		s.CapabilitiesFile = filepath.Join(filepath.Dir(s.ProjectsFile), "capabilities.json")
	}
	if s.ConfigDir == "" {
		s.ConfigDir = filepath.Dir(s.CapabilitiesFile)
	}
	if s.StateDir == "" {
		dir, ok := underHome("XDG_STATE_HOME", ".local", "state", "spear")
		if !ok {
			return s, &SettingsError{Setting: "state directory", Vars: "HOME or SPEAR_STATE_DIR", Err: ErrNoHome}
		}
		s.StateDir = dir
	}
	if s.AuditFile == "" {
		s.AuditFile = filepath.Join(s.StateDir, "audit.jsonl")
	}
	for _, f := range []struct{ name, v, path string }{
		{"SPEAR_CONFIG_DIR", "configuration directory", s.ConfigDir},
		{"SPEAR_PROJECTS_FILE", "project registry", s.ProjectsFile},
		{"SPEAR_CAPABILITIES_FILE", "provider registry", s.CapabilitiesFile},
		{"SPEAR_STATE_DIR", "state directory", s.StateDir},
		{"SPEAR_AUDIT_FILE", "audit trail", s.AuditFile},
	} {
		if !filepath.IsAbs(f.path) {
			return s, &SettingsError{Setting: f.v, Vars: f.name, Err: fmt.Errorf("%q is a relative path", f.path)}
		}
	}
	if s.TurnFile != "" && !filepath.IsAbs(s.TurnFile) {
		if abs, err := filepath.Abs(s.TurnFile); err == nil {
			s.TurnFile = abs
		}
	}
	// A number that cannot be used is an error, as a typo in
	// SPEAR_CONFINE is: never silently the default.
	for _, n := range []struct {
		name, setting, want string
		max                 float64
		whole               bool
		set                 func(float64)
	}{
		{"SPEAR_CONFIRM_TIMEOUT", "confirmation time-out", "a number of seconds above 0, at most 3600", 3600, false,
			func(v float64) { s.ConfirmTimeout = time.Duration(v * float64(time.Second)) }},
		{"SPEAR_IDLE_TIMEOUT", "idle time-out", "a number of seconds above 0, at most 604800 (a week)", 7 * 24 * 3600, false,
			func(v float64) { s.IdleTimeout = time.Duration(v * float64(time.Second)) }},
		{"SPEAR_MAX_OUTPUT", "output bound", "a whole number of bytes above 0, at most 1073741824", 1 << 30, true,
			func(v float64) { s.MaxOutput = int(v) }},
	} {
		raw := getenv(n.name)
		if raw == "" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || !(v > 0 && v <= n.max) || (n.whole && v != math.Trunc(v)) {
			return s, &SettingsError{Setting: n.setting, Vars: n.name, Want: n.want, Err: fmt.Errorf("%q is not %s", raw, n.want)}
		}
		n.set(v)
	}
	return s, nil
}

// HasDotDot reports whether path has a ".." element. Such a path names one
// place to the kernel, which resolves a symbolic link before the "..", and
// another once filepath.Clean has dropped the pair as text; the deployment
// refuses it rather than guess.
func HasDotDot(path string) bool {
	for _, e := range strings.Split(path, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}
