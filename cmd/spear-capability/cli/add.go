package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"spear/deploy"
)

type addOptions struct {
	scope       string
	tasks       []string
	read        []string
	write       string
	env         []string
	private     []string
	timeout     float64
	lifetime    string
	replace     bool
	suggestRead bool
}

func newAdd(e *env) *cobra.Command {
	var o addOptions
	cmd := &cobra.Command{
		Use:   "add <id> --scope SCOPE [flags] -- <command> [args...]",
		Short: "Register one provider: write its entry, then start it and list its tools",
		Long: `add writes one provider entry into capabilities.json and then starts the
server once and prints what check prints for it, with each tool and the class
it gets.

The command after -- is resolved now, as your shell would run it: a bare name
is looked up in PATH (empty and relative entries skipped) and a relative path
is taken from the current directory; the absolute path is what is written, and
add says what it found. The entry is checked exactly as the registry loader
checks it before the file is touched. The file is rewritten atomically, with
every other entry's text kept byte for byte and this one written in the
registry's key order with a two-space indent. An id that is already
registered is refused unless --replace is given.

A provider with no scope applies nowhere, so --scope is required. Only the
tools named in --read are READ; every other tool is a WRITE, whatever the
server says of it. --suggest-read prints the tools whose annotations claim
readOnlyHint, as a suggestion to copy into --read by hand: it never writes
them.`,
		Example: `  spear-capability add notes --scope 'corpus firmware-a' --read list_notes,read_note -- /opt/notes/bin/notes-server -dir /srv/notes
  spear-capability add tracker --scope global --write confirm --env TRACKER_URL=https://tracker.internal -- tracker-mcp
  spear-capability add tracker --scope global --replace --read search_issues -- tracker-mcp`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch dash := cmd.ArgsLenAtDash(); {
			case dash < 0 && len(args) > 1:
				return &usageError{errors.New("write the server's command after --, as in: spear-capability add notes --scope global -- /opt/notes/bin/notes-server -dir /srv/notes")}
			case dash < 0 || dash == 0 && len(args) > 0 || len(args) < 2:
				return &usageError{errors.New("add takes an id, then -- and the server's command, as in: spear-capability add notes --scope global -- /opt/notes/bin/notes-server")}
			case dash > 1:
				return &usageError{fmt.Errorf("add takes one id before --, found %d words: %s", dash, strings.Join(args[:dash], " "))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runAdd(cmd, e, o, args[0], args[1:]) },
	}
	f := cmd.Flags()
	f.StringVar(&o.scope, "scope", "", `where it applies (required): global, 'corpus a, b', 'family x, y' or 'path /dir'`)
	f.StringSliceVar(&o.tasks, "tasks", nil, "the request classes it serves, from implementation, mixed, general (default implementation,mixed)")
	f.StringSliceVar(&o.read, "read", nil, "the tools that only read (READ); every other tool is a WRITE")
	f.StringVar(&o.write, "write", "refuse", "what a WRITE may do: refuse, confirm or allow")
	f.StringArrayVar(&o.env, "env", nil, "a variable for the server, KEY=VALUE (repeatable)")
	f.StringArrayVar(&o.private, "private", nil, "a path only the provider may read, such as a token file (repeatable)")
	f.Float64Var(&o.timeout, "timeout", 0, "seconds one request may take, above 0 and at most 300 (default 10)")
	f.StringVar(&o.lifetime, "lifetime", "", "session (the default: kept for the session) or call (started for each use)")
	f.BoolVar(&o.replace, "replace", false, "write over the entry that has this id")
	f.BoolVar(&o.suggestRead, "suggest-read", false, "also print the tools whose annotations claim readOnlyHint (never written)")
	return cmd
}

func runAdd(cmd *cobra.Command, e *env, o addOptions, id string, command []string) error {
	if o.scope == "" {
		return &usageError{errors.New("add needs --scope: a provider with no scope applies nowhere; give --scope global, 'corpus a, b', 'family x, y' or 'path /dir'")}
	}
	if cmd.Flags().Changed("timeout") && o.timeout == 0 {
		return &usageError{errors.New("--timeout 0 is out of range; give seconds above 0 and at most 300")}
	}
	registry, err := registryFile(e)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return failed(fmt.Errorf("finding the current directory: %w", err))
	}
	entry := &deploy.Entry{
		ID:       id,
		Scope:    o.scope,
		Read:     o.read,
		Write:    deploy.WritePolicy(o.write),
		Timeout:  o.timeout,
		Lifetime: deploy.Lifetime(o.lifetime),
	}
	if cmd.Flags().Changed("tasks") {
		entry.Tasks = []deploy.Task{}
		for _, t := range o.tasks {
			entry.Tasks = append(entry.Tasks, deploy.Task(t))
		}
	}
	for _, kv := range o.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return &usageError{fmt.Errorf("--env %q is not KEY=VALUE, as in --env TRACKER_URL=https://tracker.internal", kv)}
		}
		if _, twice := entry.Env[k]; twice {
			return &usageError{fmt.Errorf("--env gives %s twice", k)}
		}
		if entry.Env == nil {
			entry.Env = map[string]string{}
		}
		entry.Env[k] = v
	}
	var said []string
	for _, p := range o.private {
		if !filepath.IsAbs(p) {
			abs := filepath.Join(cwd, p)
			said = append(said, fmt.Sprintf("private   %s is %s", p, abs))
			p = abs
		}
		entry.Private = append(entry.Private, p)
	}
	path, err := deploy.ResolveCommand(command[0], e.getenv("PATH"), cwd)
	if err != nil {
		return failed(err)
	}
	if path != command[0] {
		said = append([]string{fmt.Sprintf("command   %s is %s", command[0], path)}, said...)
	}
	entry.Command = append([]string{path}, command[1:]...)

	replaced := false
	changed, err := deploy.EditRegistryFile(registry, func(data []byte) ([]byte, error) {
		ids, err := deploy.RegistryIDs(registry, data)
		if err != nil {
			return nil, err
		}
		for _, have := range ids {
			replaced = replaced || have == id
		}
		return deploy.AddEntry(registry, data, entry, o.replace)
	})
	var exists *deploy.EntryExistsError
	if errors.As(err, &exists) {
		return failed(fmt.Errorf("%w; pick another id, or give --replace to write over it", err))
	}
	if err != nil {
		return failed(err)
	}
	w := e.stdout
	for _, s := range said {
		fmt.Fprintln(w, s)
	}
	switch {
	case !changed:
		fmt.Fprintf(w, "unchanged %s: %s already holds this entry\n", id, registry)
	case replaced:
		fmt.Fprintf(w, "replaced  %s in %s\n", id, registry)
	default:
		fmt.Fprintf(w, "added     %s to %s\n", id, registry)
	}

	p, err := entry.Check(registry)
	if err != nil {
		return failed(err)
	}
	tools, err := probe(cmd.Context(), e, p)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("%s is registered, but its server did not list its tools; fix it and run spear-capability check, or take the entry out with spear-capability remove %s", id, id)}
	}
	if o.suggestRead {
		writeSuggestions(w, registry, p, tools)
	}
	return nil
}
