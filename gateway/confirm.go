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
// on stdin. Only exit status 0 approves; anything else, or no answer within
// limit, refuses. The program runs in its own process group, which is
// killed when the limit passes.
func confirm(ctx context.Context, command string, req []byte, limit time.Duration) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdin = bytes.NewReader(req)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return procs.KillGroup(cmd.Process.Pid) }
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
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
