package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"spear/deploy"
	"spear/internal/procs"
	"spear/present"
)

// ConfirmRequest is what SPEAR_CONFIRM_COMMAND reads on stdin, as JSON.
type ConfirmRequest struct {
	Session     string         `json:"session"`
	Turn        string         `json:"turn"`
	Workspace   string         `json:"workspace"`
	Capability  string         `json:"capability"`
	Class       deploy.Access  `json:"class"`
	Description string         `json:"description"`
	Arguments   map[string]any `json:"arguments"`
}

// confirm runs the confirmation program through /bin/sh with the request
// on stdin. Only exit status 0 approves; anything else, no answer within
// limit, or ctx ending first, refuses. The program runs in its own process
// group, which is killed when the limit passes or ctx ends.
func confirm(ctx context.Context, command string, req []byte, limit time.Duration) (bool, string) {
	waitCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(waitCtx, "/bin/sh", "-c", command)
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
