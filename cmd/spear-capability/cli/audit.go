package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"spear/audit"
	"spear/present"
)

type auditOptions struct {
	audit.Filter
	since  string
	follow bool
	json   bool
}

func newAudit(e *env) *cobra.Command {
	var o auditOptions
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print the audit trail readably, filtered",
		Long: `audit prints the audit trail (SPEAR_AUDIT_FILE), one event a line:
time, session/turn, event, then the event's fields. --json prints the
matching lines as they are stored. --since takes a duration (30m, 2h) or an
RFC 3339 time. --follow keeps printing events as they are appended.

A line that cannot be read is reported on stderr with its number, and the
rest is still shown; audit then exits with status 1.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error { return runAudit(cmd, e, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Session, "session", "", "only this session")
	f.StringVar(&o.Turn, "turn", "", "only this turn")
	f.StringVar(&o.Event, "event", "", "only this event, such as capability_invoked")
	f.StringVar(&o.since, "since", "", "only events since this duration ago or RFC 3339 time")
	f.BoolVarP(&o.follow, "follow", "f", false, "keep printing events as they are appended")
	f.BoolVar(&o.json, "json", false, "print the stored JSON lines")
	return cmd
}

func runAudit(cmd *cobra.Command, e *env, o auditOptions) error {
	if o.since != "" {
		t, err := audit.ParseSince(o.since, time.Now())
		if err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
		o.Since = t
	}
	path := e.gw.Settings.AuditFile
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && !o.follow {
		fmt.Fprintf(e.stderr, "spear-capability: no audit trail at %s yet\n", path)
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &exitError{code: 1, msg: err.Error()}
	}
	show := func(en audit.Entry) error {
		if !o.Match(en) {
			return nil
		}
		// What a turn or a provider put in the trail reaches the reader
		// with its hidden characters shown, not acted on.
		if o.json {
			_, err := fmt.Fprintln(e.stdout, present.SafeJSON(en.Raw))
			return err
		}
		_, err := fmt.Fprintln(e.stdout, present.Visible(audit.Format(en)))
		return err
	}
	// A line that does not decode is reported with its number, and the
	// rest is still shown; that any was found shows in the exit status.
	badLines := 0
	bad := func(le *audit.LineError) {
		badLines++
		fmt.Fprintf(e.stderr, "spear-capability: audit: %v\n", le)
	}
	if !o.follow {
		defer f.Close()
		if err := audit.Read(f, show, bad); err != nil {
			return &exitError{code: 1, msg: fmt.Sprintf("%s: %v", path, err)}
		}
		return badLinesError(badLines, path)
	}
	var r io.Reader
	if f != nil {
		defer f.Close()
		r = f
	}
	// Ctrl-C (or SIGTERM) ends following; that is how it is meant to end.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := audit.Follow(ctx, path, r, 200*time.Millisecond, show, bad); err != nil {
		return err
	}
	return badLinesError(badLines, path)
}

// badLinesError is the exit error of an audit that met n lines it could not
// read, or nil when it met none.
func badLinesError(n int, path string) error {
	switch n {
	case 0:
		return nil
	case 1:
		return &exitError{code: 1, msg: fmt.Sprintf("audit: 1 line of %s could not be read; the rest is shown", path)}
	default:
		return &exitError{code: 1, msg: fmt.Sprintf("audit: %d lines of %s could not be read; the rest is shown", n, path)}
	}
}
