package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"spear/deploy"
	"spear/internal/procs"
	"spear/present"
)

// ConfirmRequest is what SPEAR_CONFIRM_COMMAND reads on stdin, as JSON
// (docs/formats.md, "The confirm request"). Every string in it is shown to a
// person, so each has its hidden characters made visible (present.Visible).
type ConfirmRequest struct {
	Session    string        `json:"session"`
	Turn       string        `json:"turn"`
	Workspace  string        `json:"workspace"`
	Capability string        `json:"capability"`
	Provider   string        `json:"provider"`
	Tool       string        `json:"tool"`
	Class      deploy.Access `json:"class"`
	// Description is the gateway's own account of what is asked.
	Description string `json:"description"`
	// ProviderTitle and ProviderDescription are the provider's words for
	// the tool: claims the gateway has not checked.
	ProviderTitle       string `json:"provider_title,omitempty"`
	ProviderDescription string `json:"provider_description"`
	// Arguments are the turn's arguments as they will be sent, with hidden
	// characters in keys and strings written as <U+XXXX>.
	Arguments map[string]any `json:"arguments"`
}

// newConfirmRequest builds the request that asks a person about a call of c
// with args.
func newConfirmRequest(t *deploy.Turn, c *present.Capability, args map[string]json.RawMessage) ConfirmRequest {
	visible := map[string]any{}
	for k, raw := range args {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		dec.Decode(&v)
		putVisible(visible, k, v)
	}
	title := ""
	if c.Title != c.Tool {
		title = present.Visible(c.Title)
	}
	return ConfirmRequest{
		Session: present.Visible(t.Session), Turn: present.Visible(t.Turn), Workspace: present.Visible(t.Workspace),
		Capability: c.Name, Provider: c.Provider, Tool: c.Tool, Class: c.Class,
		Description: fmt.Sprintf("The turn asks to run %s, which the registry classes %s, with the arguments below. "+
			"provider_title and provider_description are the provider's own words, which the gateway has not checked.", c.Name, c.Class),
		ProviderTitle:       title,
		ProviderDescription: present.Visible(present.Bound(c.Description, 2000)),
		Arguments:           visible,
	}
}

// JSON is the request as the confirmation program reads it: one line of
// JSON, with < and > as they are (the request is read by a person's
// program, not a web page) and every hidden character escaped.
func (r ConfirmRequest) JSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(r)
	return []byte(present.SafeJSON(b.String()))
}

// visibleValue returns v with hidden characters made visible in every
// string and key.
func visibleValue(v any) any {
	switch t := v.(type) {
	case string:
		return present.Visible(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = visibleValue(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			putVisible(out, k, e)
		}
		return out
	}
	return v
}

// putVisible sets m[k] with k and v made visible; two keys that look alike
// once visible are both kept, the second marked.
func putVisible(m map[string]any, k string, v any) {
	vk := present.Visible(k)
	for n := 2; ; n++ {
		if _, taken := m[vk]; !taken {
			break
		}
		vk = fmt.Sprintf("%s <another key that looks alike %d>", present.Visible(k), n)
	}
	m[vk] = visibleValue(v)
}

// confirm runs the confirmation program through /bin/sh with the request
// on stdin. Only exit status 0 approves; anything else, no answer within
// limit, or ctx ending first, refuses. The program runs in its own process
// group, which is killed when the limit passes or ctx ends.
func confirm(ctx context.Context, command string, env []string, req []byte, limit time.Duration) (bool, string) {
	waitCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(waitCtx, "/bin/sh", "-c", command)
	cmd.Env = env
	cmd.Dir = "/" // not the workspace, whose files the turn writes
	cmd.Stdin = bytes.NewReader(req)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return procs.KillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		// The command was cancelled, or ran out of its own time: that says
		// nothing about the person asked.
		return false, "the command ended before the confirmation program answered"
	case waitCtx.Err() != nil:
		return false, fmt.Sprintf("no answer from the confirmation program within %s", seconds(limit))
	case err == nil:
		return true, ""
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		why := fmt.Sprintf("the confirmation program did not approve (%s)", ee.ProcessState)
		if msg := present.OneLine(string(out), 200); msg != "" {
			why += ": " + msg
		}
		return false, why
	}
	return false, fmt.Sprintf("the confirmation program could not run: %v", err)
}

// confirmEnv is the environment the confirmation program runs with: env,
// with HOME set to home (a directory the turn's shell cannot write, see
// confirmHome), PATH kept to the directories the turn's shell cannot
// write in, and every other variable that names a path there left out
// (XDG_RUNTIME_DIR excepted). The program runs outside the confinement:
// a ~/bin on PATH, or a HOME the turn can write (Python's usercustomize,
// git's and ssh's configuration, node's modules), would let the turn run
// code of its own there, or approve every WRITE. It also returns the PATH
// directories left out.
func confirmEnv(env []string, userHome, workspace, home string) ([]string, []string) {
	out := make([]string, 0, len(env)+1)
	var dropped []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME":
			continue
		case k == "PATH":
			v, dropped = deploy.PathOutsideTurn(v, userHome, workspace)
			kv = "PATH=" + v
		case k == "XDG_RUNTIME_DIR":
			// kept: a display or bus socket is there (security.md,
			// Limits)
		case namesTurnPath(v, userHome, workspace):
			// BASH_ENV, PYTHONPATH, NODE_OPTIONS, LD_PRELOAD, an
			// XDG_*_HOME, TMPDIR: anything naming a place the turn
			// writes could hand the program the turn's code
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+home), dropped
}

// confirmHome is the HOME the confirmation program runs with: a directory
// of its own in the configuration directory, which the turn's shell can
// neither read nor write; the operator puts there what the program needs
// from a HOME. It is made (0700) when it does not exist.
func confirmHome(configDir string) (string, error) {
	dir := filepath.Join(configDir, "confirm-home")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("making the confirmation program's HOME: %w", err)
	}
	return dir, nil
}

// namesTurnPath reports whether value names an absolute path the turn's
// shell may write, alone or as one element of a list separated by colons
// or spaces (PYTHONPATH, LD_PRELOAD, NODE_OPTIONS' --require /x.js).
func namesTurnPath(value, userHome, workspace string) bool {
	for _, f := range strings.FieldsFunc(value, func(r rune) bool { return r == ':' || r == ' ' || r == '=' }) {
		if strings.HasPrefix(f, "/") && deploy.TurnWritable(f, userHome, workspace) {
			return true
		}
	}
	return false
}
