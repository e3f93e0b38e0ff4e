package realshell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"spear/confine"
	"spear/deploy"
	"spear/internal/handoff"
	"spear/netwall"
)

// DeploymentConfiner confines the real shell away from the deployment that
// Settings name: its files hidden, the turn file read-only, and the
// processes outside out of reach (docs/security.md).
type DeploymentConfiner struct {
	Settings deploy.Settings
	// SettingsErr is why the settings could not be resolved, or nil.
	// Without HOME (deploy.ErrNoHome) nothing of the deployment can be
	// found, and the shell is confined with an empty policy; any other
	// error (a relative path, a ".." in one) leaves unknown what to keep
	// from the shell, and it is not started.
	SettingsErr error
}

// NewConfiner returns how spear-term confines its shell: nil when the
// operator turned the confinement off (SPEAR_CONFINE=off, which settings
// that are otherwise wrong still honour) or when this system cannot
// confine; the gateway then offers the turn nothing, unless
// it was turned off, and says why.
func NewConfiner(s deploy.Settings, settingsErr error) Confiner {
	if !s.Confine {
		return nil
	}
	if !confine.Probe().OK {
		return nil
	}
	return &DeploymentConfiner{Settings: s, SettingsErr: settingsErr}
}

func (c *DeploymentConfiner) policy() (confine.Policy, error) {
	// spear-term and spear-capability run outside the confinement, the
	// next command from the harness included: the turn keeps them as
	// they are installed.
	installed := handoff.Installed()
	// A spear-term installed alone: the turn must not put a
	// spear-capability beside it, which the next invocation would run
	// outside the confinement, whatever the settings. Its directory is
	// kept read-only, unless the turn needs to write there
	// (docs/security.md, Limits).
	if dir := handoff.MissingEntry(); dir != "" && !c.Settings.Shared(dir) {
		installed = append(installed, dir)
	}
	if c.SettingsErr != nil {
		if errors.Is(c.SettingsErr, deploy.ErrNoHome) {
			return confine.Policy{ReadOnly: installed}, nil
		}
		return confine.Policy{}, c.SettingsErr
	}
	p, err := c.Settings.Protected()
	if err != nil {
		return confine.Policy{}, err
	}
	n, err := c.network()
	if err != nil {
		return confine.Policy{}, err
	}
	return confine.Policy{Hide: p.Hide, ReadOnly: append(p.ReadOnly, installed...), Network: n}, nil
}

// network returns the session's network namespace, started if need be,
// or nil for SPEAR_NETWORK=host. A terminal in no turn (no turn file yet)
// shares one with the other such terminals of the state directory.
func (c *DeploymentConfiner) network() (*confine.Network, error) {
	mode, err := netwall.ParseMode(c.Settings.Network)
	if err != nil || mode == netwall.Host {
		return nil, err
	}
	session := ""
	if t, err := deploy.LoadTurn(c.Settings.TurnFile); err == nil {
		session = t.Session
	}
	k, err := netwall.Ensure(netwall.Dir(c.Settings.StateDir, session, mode), mode, c.Settings.IdleTimeout)
	if err != nil {
		return nil, fmt.Errorf("the session's network (SPEAR_NETWORK=%s): %w", mode, err)
	}
	return &confine.Network{NetNS: k.NetNS(), UserNS: k.UserNSPath(), UID: os.Getuid(), GID: os.Getgid(), Gate: k.Gate}, nil
}

// Exec replaces the process with path, confined. A spear-term that already
// runs inside a confinement execs the shell as it is: everything it starts
// stays inside.
func (c *DeploymentConfiner) Exec(path string, argv, env []string) error {
	if confine.Inside() {
		return syscall.Exec(path, argv, env)
	}
	p, err := c.policy()
	if err != nil {
		return err
	}
	return installedLink(confine.Exec(p, path, argv, env))
}

// Command returns a command that starts path confined.
func (c *DeploymentConfiner) Command(path string, args ...string) (*exec.Cmd, error) {
	if confine.Inside() {
		return exec.Command(path, args...), nil
	}
	p, err := c.policy()
	if err != nil {
		return nil, err
	}
	cmd, err := confine.Command(p, path, args...)
	return cmd, installedLink(err)
}

// installedLink says what to do when an installed binary is a symbolic
// link the turn could re-point: the advice for the deployment's files
// (name the path without links) does not fit a program that runs.
func installedLink(err error) error {
	var le *confine.LinkError
	if !errors.As(err, &le) || !slices.Contains(handoff.Installed(), le.Path) {
		return err
	}
	return fmt.Errorf("confine: the installed %s is reached through the symbolic link %s, in a directory the turn's shell could write, so the turn could point it at a program of its own that the next command would run outside the confinement; install the binaries themselves there (make install PREFIX=...), or keep the link in a directory the turn cannot write (it leads to %s)", filepath.Base(le.Path), le.Link, le.Real)
}
