// Package netwall gives a session's confined commands a network of their
// own: a network namespace, kept by a holder process outside the
// confinement, that every command of the session joins, with Debian's
// pasta linking it to the outside world but not to the host.
//
// In the namespace the turn reaches no service on the host's loopback or
// the host's own addresses, no abstract unix socket outside it (D-Bus, a
// harness's command service), and no process outside connects to a port it
// listens on. Its connects come to the holder (the gate, see gate.go),
// which makes them, and connects a pathname unix socket only when it was
// bound inside the namespace; a server it starts in one command answers its next command.
// With SPEAR_NETWORK=outbound (the default) pasta (passt) carries its
// connections to the outside world, started without port forwarding either
// way (-t none -u none -T none -U none) and without mapping the gateway to
// the host (--no-map-gw); every address of the host is an unreachable
// route inside. With none, the namespace has only its loopback; with host,
// there is no namespace (the operator's acceptance of the risk).
//
// The namespace is kept per session, not per command: starting pasta
// costs 0.1–0.4 s, and a dev server started in the background must answer
// the next command. A command joins it through its path under /proc.
package netwall

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"spear/confine"
	"spear/internal/procs"
)

// Mode is what the turn's network reaches (SPEAR_NETWORK).
type Mode string

// The modes.
const (
	// Outbound reaches the outside world, not the host.
	Outbound Mode = "outbound"
	// None reaches the namespace's own loopback only.
	None Mode = "none"
	// Host is the host's network, unconfined: the operator's explicit
	// acceptance of the risk.
	Host Mode = "host"
)

// ParseMode reads SPEAR_NETWORK; "" is Outbound.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Outbound:
		return Outbound, nil
	case None, Host:
		return Mode(s), nil
	}
	return "", fmt.Errorf("SPEAR_NETWORK %q: want outbound (the default), none or host", s)
}

// Keeper is a session's network, as its holder recorded it.
type Keeper struct {
	// Mode is what the commands get: Outbound or None.
	Mode Mode `json:"mode"`
	// Wanted is what SPEAR_NETWORK asked for.
	Wanted Mode `json:"wanted"`
	// Why says why Mode is less than Wanted (pasta missing, say).
	Why string `json:"why,omitempty"`
	// Pid is the keeper, the process whose namespaces the commands join;
	// Start its start time, which a later process with its pid lacks.
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
	// Holder is the process that keeps the keeper and pasta.
	Holder int `json:"holder"`
	// UserNS: the namespace belongs to a user namespace of its own, in
	// which the caller's uid is 0 (a caller without CAP_SYS_ADMIN).
	UserNS bool `json:"userns"`
	// Gate is the holder's socket that takes each command's connects
	// (see confine.Network.Gate).
	Gate string `json:"gate"`
}

// NetNS is the path of the keeper's network namespace.
func (k *Keeper) NetNS() string { return fmt.Sprintf("/proc/%d/ns/net", k.Pid) }

// UserNSPath is the path of the user namespace that owns it, or "".
func (k *Keeper) UserNSPath() string {
	if !k.UserNS {
		return ""
	}
	return fmt.Sprintf("/proc/%d/ns/user", k.Pid)
}

// Mechanism names it for the check's terminal line and the audit trail.
func (k *Keeper) Mechanism() string {
	s := "network namespace of the session"
	if k.Mode == Outbound {
		s += " + pasta (outside world, not the host)"
	} else {
		s += " (loopback only)"
	}
	if k.Why != "" {
		s += "; " + string(k.Wanted) + " not provided: " + k.Why
	}
	return s
}

const (
	recordFile = "keeper.json"
	usedFile   = "used"
	lockFile   = "lock"
	logFile    = "holder.log"
)

// startTimeout bounds a holder's start: pasta's, mostly.
const startTimeout = 30 * time.Second

// Ensure returns the network that dir's holder keeps, starting a holder
// when there is none (or its keeper is gone), and marks it used now. dir
// is the session's directory for it, in the state directory, which the
// turn cannot reach; idle is how long a holder whose namespace holds no
// process outlives its last use.
func Ensure(dir string, want Mode, idle time.Duration) (*Keeper, error) {
	if want == Host {
		return nil, errors.New("netwall: host mode has no namespace")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("netwall: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("netwall: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return nil, fmt.Errorf("netwall: lock: %w", err)
	}
	touch(dir)
	if k := running(dir); k != nil && k.Wanted == want && k.Gate != "" {
		return k, nil
	}
	if err := startHolder(dir, want, idle); err != nil {
		return nil, err
	}
	k := running(dir)
	if k == nil {
		return nil, fmt.Errorf("netwall: the holder started but its network is not there (see %s)", filepath.Join(dir, logFile))
	}
	return k, nil
}

// touch marks the network used now.
func touch(dir string) {
	now := time.Now()
	p := filepath.Join(dir, usedFile)
	if os.Chtimes(p, now, now) != nil {
		os.WriteFile(p, nil, 0o600)
	}
}

// running returns dir's recorded keeper if it is still the process that
// was recorded, else nil.
func running(dir string) *Keeper {
	data, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		return nil
	}
	var k Keeper
	if json.Unmarshal(data, &k) != nil || k.Pid <= 0 {
		return nil
	}
	if st, err := procs.StartTime(k.Pid); err != nil || st != k.Start {
		return nil
	}
	if _, err := os.Stat(k.NetNS()); err != nil {
		return nil
	}
	return &k
}

// startHolder starts a holder for dir, detached, and waits until it says
// its network is ready (or why not).
func startHolder(dir string, want Mode, idle time.Duration) error {
	os.Remove(filepath.Join(dir, recordFile))
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("netwall: %w", err)
	}
	defer r.Close()
	log, err := os.OpenFile(filepath.Join(dir, logFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		w.Close()
		return fmt.Errorf("netwall: %w", err)
	}
	defer log.Close()
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{os.Args[0], HolderArg, dir, string(want), strconv.FormatInt(int64(idle/time.Second), 10)},
		Stderr:      log,
		ExtraFiles:  []*os.File{w},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("netwall: starting the holder: %w", err)
	}
	go cmd.Wait() // it lives on, detached; reaped should it end first
	type answer struct {
		line string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		done <- answer{strings.TrimSpace(line), err}
	}()
	select {
	case a := <-done:
		if a.line == "ok" {
			return nil
		}
		if msg, ok := strings.CutPrefix(a.line, "error "); ok {
			return errors.New(msg)
		}
		if a.err == io.EOF {
			return fmt.Errorf("netwall: the holder ended before its network was ready (see %s)", filepath.Join(dir, logFile))
		}
		return fmt.Errorf("netwall: the holder said %q", a.line)
	case <-time.After(startTimeout):
		cmd.Process.Kill()
		return fmt.Errorf("netwall: the holder's network was not ready within %s (see %s)", startTimeout, filepath.Join(dir, logFile))
	}
}

// Stop ends dir's holder, if one runs, and waits a little for its keeper
// to go. It reports whether there was one.
func Stop(dir string) bool {
	k := running(dir)
	if k == nil {
		return false
	}
	syscall.Kill(k.Holder, syscall.SIGTERM)
	for i := 0; i < 100 && running(dir) != nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// writeRecord writes k as dir's record, atomically.
func writeRecord(dir string, k *Keeper) error {
	data, err := json.Marshal(k)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, recordFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, recordFile))
}

// gone reports whether dir was removed (the state directory deleted).
func gone(dir string) bool {
	_, err := os.Stat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

// Describe says what a turn's network is in mode on this system, without
// starting anything: the mechanism, or what is missing and how to get it.
// spear-capability check's terminal line and the audit trail's terminal
// field carry it.
func Describe(mode Mode) string {
	switch mode {
	case Host:
		return "network: host (SPEAR_NETWORK=host: the operator accepts that the turn's shell reaches the host's loopback services and sockets)"
	case None:
		return "network: a namespace of the session's, its loopback only (SPEAR_NETWORK=none); unix socket connects gated"
	}
	if why := pastaUnusable(); why != "" {
		return "network: a namespace of the session's, its loopback only: outbound is not provided: " + why + "; unix socket connects gated"
	}
	return "network: a namespace of the session's + pasta (the outside world, not the host); unix socket connects gated"
}

// pastaUnusable says why pasta cannot link a namespace to the outside
// here, or "".
func pastaUnusable() string {
	if _, err := confine.SystemProgram("pasta", filepath.SplitList(systemPath)...); err != nil {
		return "pasta is not installed (Debian's and Ubuntu's passt package, Fedora's passt)"
	}
	if os.Geteuid() != 0 && unix.Access("/dev/net/tun", unix.R_OK|unix.W_OK) != nil {
		return "pasta cannot open /dev/net/tun as this user (as root: chmod 0666 /dev/net/tun, the mode udev gives it)"
	}
	return ""
}

// Dir is where the network of session (a turn file's session; "" for
// terminals in no turn) in mode is kept, in stateDir.
func Dir(stateDir, session string, mode Mode) string {
	key := "no-turn"
	if session != "" {
		key = "s-" + session
	}
	return filepath.Join(stateDir, "net", key+"."+string(mode))
}

// StopSessions ends the holders of session's networks in stateDir (of
// every session's when session is ""), and returns the sessions whose
// network it stopped. A process the turn left running in one then
// reaches nothing outside it.
func StopSessions(stateDir, session string) []string {
	ents, err := os.ReadDir(filepath.Join(stateDir, "net"))
	if err != nil {
		return nil
	}
	var stopped []string
	for _, e := range ents {
		key, _, ok := strings.Cut(e.Name(), ".")
		if !ok {
			continue
		}
		name := strings.TrimPrefix(key, "s-")
		if key == "no-turn" {
			name = ""
		}
		if session != "" && name != session {
			continue
		}
		if Stop(filepath.Join(stateDir, "net", e.Name())) {
			stopped = append(stopped, name)
		}
	}
	return stopped
}
