package gateway

import (
	"path/filepath"
	"strconv"
	"time"
)

// Paths are the files and settings the environment names (DESIGN.md, "Files
// and environment").
type Paths struct {
	ConfigDir        string
	ProjectsFile     string
	CapabilitiesFile string
	TurnFile         string
	StateDir         string
	AuditFile        string
	ConfirmCommand   string
	// MaxOutput bounds a framed result's content, in bytes
	// (SPEAR_MAX_OUTPUT, default DefaultMaxOutput).
	MaxOutput int
	// ConfirmTimeout bounds SPEAR_CONFIRM_COMMAND (SPEAR_CONFIRM_TIMEOUT
	// seconds, default 60).
	ConfirmTimeout time.Duration
}

// DefaultMaxOutput is the default bound on a framed result, in bytes.
const DefaultMaxOutput = 64 << 10

// PathsFrom reads the environment through getenv.
func PathsFrom(getenv func(string) string) Paths {
	home := getenv("HOME")
	p := Paths{
		ConfigDir:        getenv("SPEAR_CONFIG_DIR"),
		ProjectsFile:     getenv("SPEAR_PROJECTS_FILE"),
		CapabilitiesFile: getenv("SPEAR_CAPABILITIES_FILE"),
		TurnFile:         getenv("SPEAR_TURN_FILE"),
		StateDir:         getenv("SPEAR_STATE_DIR"),
		AuditFile:        getenv("SPEAR_AUDIT_FILE"),
		ConfirmCommand:   getenv("SPEAR_CONFIRM_COMMAND"),
		MaxOutput:        DefaultMaxOutput,
		ConfirmTimeout:   60 * time.Second,
	}
	if p.ConfigDir == "" {
		if x := getenv("XDG_CONFIG_HOME"); x != "" {
			p.ConfigDir = filepath.Join(x, "spear")
		} else {
			p.ConfigDir = filepath.Join(home, ".config", "spear")
		}
	}
	if p.ProjectsFile == "" {
		p.ProjectsFile = filepath.Join(p.ConfigDir, "projects.json")
	}
	if p.CapabilitiesFile == "" {
		p.CapabilitiesFile = filepath.Join(filepath.Dir(p.ProjectsFile), "capabilities.json")
	}
	if p.StateDir == "" {
		if x := getenv("XDG_STATE_HOME"); x != "" {
			p.StateDir = filepath.Join(x, "spear")
		} else {
			p.StateDir = filepath.Join(home, ".local", "state", "spear")
		}
	}
	if p.AuditFile == "" {
		p.AuditFile = filepath.Join(p.StateDir, "audit.jsonl")
	}
	if s, err := strconv.ParseFloat(getenv("SPEAR_CONFIRM_TIMEOUT"), 64); err == nil && s > 0 && s <= 3600 {
		p.ConfirmTimeout = time.Duration(s * float64(time.Second))
	}
	if n, err := strconv.Atoi(getenv("SPEAR_MAX_OUTPUT")); err == nil && n > 0 {
		p.MaxOutput = n
	}
	return p
}
