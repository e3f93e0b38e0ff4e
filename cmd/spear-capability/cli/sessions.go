package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"spear/netwall"
	"spear/outcome"
	"spear/warm"
)

type sessionsOptions struct {
	json bool
}

func newSessions(e *env) *cobra.Command {
	var o sessionsOptions
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List the providers' servers each session keeps running",
		Long: `sessions lists, for every session whose process keeps providers' servers
running, each server: its provider, pid, lifetime, when it started, how many
tools/call it has served and how long it has been idle. "sessions stop"
stops one session's servers, or every session's.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			all, err := warm.List(cmd.Context(), e.gw.Settings.StateDir)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if o.json {
				return printJSON(e.stdout, nonNilStatuses(all))
			}
			writeSessions(e.stdout, all)
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	stop := &cobra.Command{
		Use:   "stop [SESSION]",
		Short: "Stop one session's servers and its session process, or every session's",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			session := ""
			if len(args) == 1 {
				session = args[0]
			}
			stopped, err := warm.StopSessions(cmd.Context(), e.gw.Settings.StateDir, session)
			nets := netwall.StopSessions(e.gw.Settings.StateDir, session)
			if o.json {
				if jerr := printJSON(e.stdout, nonNilStatuses(stopped)); jerr != nil {
					return jerr
				}
			} else {
				if len(stopped) == 0 && err == nil {
					fmt.Fprintln(e.stdout, "no session process was running")
				}
				for _, n := range nets {
					if n == "" {
						n = "(terminals in no turn)"
					}
					fmt.Fprintf(e.stdout, "stopped the network of session %s: its commands' processes still running reach nothing outside it now\n", n)
				}
				for _, st := range stopped {
					if st.Unanswered != "" {
						fmt.Fprintf(e.stdout, "stopped session %s with SIGTERM (pid %d): its session process did not answer (%s); its servers' stops are in the audit trail\n", st.Session, st.Pid, st.Unanswered)
						continue
					}
					var names []string
					for _, s := range st.Servers {
						names = append(names, fmt.Sprintf("%s (pid %d)", s.Provider, s.Pid))
					}
					if len(names) == 0 {
						names = []string{"no server was running"}
					}
					fmt.Fprintf(e.stdout, "stopped session %s: %s\n", st.Session, strings.Join(names, ", "))
				}
			}
			if errors.Is(err, warm.ErrNotSession) {
				return &exitError{code: outcome.ExitRefused, msg: err.Error()}
			}
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			return nil
		},
	}
	stop.Flags().BoolVar(&o.json, "json", false, "print JSON")
	cmd.AddCommand(stop)
	return cmd
}

func nonNilStatuses(s []warm.Status) []warm.Status {
	if s == nil {
		return []warm.Status{}
	}
	return s
}

func writeSessions(w io.Writer, all []warm.Status) {
	if len(all) == 0 {
		fmt.Fprintln(w, "no session keeps a server running")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// ANSWERED is the session process's, shown on each of its rows.
	fmt.Fprintln(tw, "SESSION\tPROVIDER\tPID\tLIFETIME\tSTARTED\tCALLS\tIDLE\tANSWERED")
	for _, st := range all {
		if len(st.Servers) == 0 {
			fmt.Fprintf(tw, "%s\t(none)\t\t\t\t\t\t%d\n", st.Session, st.Answered)
		}
		for _, s := range st.Servers {
			idle := time.Duration(s.Idle * float64(time.Second)).Round(time.Second)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\t%d\n", st.Session, s.Provider, s.Pid, s.Lifetime, s.Started.Format(time.RFC3339), s.Calls, idle, st.Answered)
		}
	}
	tw.Flush()
	for _, st := range all {
		if st.Panics > 0 {
			fmt.Fprintf(w, "session %s: its session process recovered from %s; each is in %s, with its stack\n", st.Session, plural(st.Panics, "panic"), st.Log)
		}
		if st.AuditFailures > 0 {
			fmt.Fprintf(w, "session %s: %s could not be written to the audit trail (spear-capability check says the latest)\n", st.Session, plural(st.AuditFailures, "event"))
		}
	}
}

// plural says n of a thing: "1 panic", "2 panics".
func plural(n int, thing string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", thing)
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
