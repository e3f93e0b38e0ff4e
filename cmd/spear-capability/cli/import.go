package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"spear/deploy"
	"spear/importer"
	"spear/mcp"
)

type importOptions struct {
	format      string
	scope       string
	only        []string
	dryRun      bool
	suggestRead bool
}

// maxImportFile bounds the file import reads.
const maxImportFile = 16 << 20

func newImport(e *env) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Register the stdio servers that another MCP host's file lists",
		Long: `import reads the MCP servers another host keeps and adds its stdio servers to
capabilities.json as providers:

  Claude Code   .mcp.json, ~/.claude.json (mcpServers and each project's own)
  Codex CLI     ~/.codex/config.toml, .codex/config.toml ([mcp_servers.<name>])
  Gemini CLI    ~/.gemini/settings.json, .gemini/settings.json (mcpServers)
  VS Code       .vscode/mcp.json (servers)
  Cursor        .cursor/mcp.json, ~/.cursor/mcp.json (mcpServers)

The format is recognised from the file's name and keys; --format says it when
they do not. Server names become valid, unique ids, and import says so.
Commands are resolved as add resolves them. env values are copied as written
(SPEAR expands no variables, and import says which hold one). HTTP and SSE
servers, disabled ones, and keys that are not carried are listed as skipped,
each with the reason.

Nothing a server says decides a class: every imported entry starts with
"read": [] and "write": "refuse". --suggest-read starts each imported server
and prints the tools whose annotations claim readOnlyHint, for you to copy into
"read" by hand; it never writes them.

An id the registry already has, a command that is not found, or a broken file
stops the import, and the registry is not touched. Without --scope the entries
apply nowhere until each has a scope. --dry-run prints the entries it would
write and writes nothing.`,
		Example: `  spear-capability import ~/.claude.json --scope global --dry-run
  spear-capability import .vscode/mcp.json --scope 'corpus web' --only fetch,github
  spear-capability import ~/.codex/config.toml --scope 'family firmware' --suggest-read`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return runImport(cmd, e, o, args[0]) },
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "the file's format when its name does not say: claude, codex, gemini, vscode or cursor")
	f.StringVar(&o.scope, "scope", "", `where the entries apply: global, 'corpus a, b', 'family x, y' or 'path /dir' (default: none, so nowhere)`)
	f.StringSliceVar(&o.only, "only", nil, "import just these servers, by their names in the file or their ids")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the entries that would be written, and write nothing")
	f.BoolVar(&o.suggestRead, "suggest-read", false, "start each imported server and print the tools whose annotations claim readOnlyHint (never written)")
	return cmd
}

func runImport(cmd *cobra.Command, e *env, o importOptions, src string) error {
	var format importer.Format
	if o.format != "" {
		f, err := importer.ParseFormat(o.format)
		if err != nil {
			return &usageError{fmt.Errorf("--format: %w", err)}
		}
		format = f
	}
	registry, err := registryFile(e)
	if err != nil {
		return err
	}
	data, err := readSource(src)
	if err != nil {
		return failed(err)
	}
	file, err := importer.Read(src, data, format)
	if err != nil {
		return failed(err)
	}
	current, err := deploy.ReadRegistryFile(registry)
	if err != nil {
		return failed(err)
	}
	taken, err := deploy.RegistryIDs(registry, current)
	if err != nil {
		return failed(fmt.Errorf("%w; fix the registry first (spear-capability check shows its problems)", err))
	}
	cwd, err := os.Getwd()
	if err != nil {
		return failed(fmt.Errorf("finding the current directory: %w", err))
	}
	plan, err := file.Plan(importer.Options{
		Registry: registry,
		Scope:    o.scope,
		Only:     o.only,
		Taken:    taken,
		Resolve:  func(name string) (string, error) { return deploy.ResolveCommand(name, e.getenv("PATH"), cwd) },
	})
	var pe *importer.PlanError
	if errors.As(err, &pe) {
		return &exitError{code: 1, msg: strings.Join(pe.Problems, "\nspear-capability: ") + "\nspear-capability: nothing was written"}
	}
	if err != nil {
		return failed(err)
	}

	w := e.stdout
	fmt.Fprintf(w, "read      %s (%s): %s\n", src, file.Format.Host(), count(len(file.Servers), "server", "servers"))
	for _, l := range plan.Lines {
		fmt.Fprintf(w, "%-9s %s\n", l.Tag, l.Text)
	}
	if len(plan.Entries) == 0 {
		fmt.Fprintf(w, "nothing to import; %s is not touched\n", registry)
		return nil
	}
	add := func(data []byte) ([]byte, error) {
		for _, entry := range plan.Entries {
			var err error
			if data, err = deploy.AddEntry(registry, data, entry, false); err != nil {
				return nil, err
			}
		}
		return data, nil
	}
	if o.dryRun {
		if _, err := add(current); err != nil {
			return failed(err)
		}
		fmt.Fprintf(w, "dry run: nothing is written; %s would be added to %s:\n", count(len(plan.Entries), "entry", "entries"), registry)
		for _, entry := range plan.Entries {
			fmt.Fprintln(w, "  "+entry.Text())
		}
	} else {
		if _, err := deploy.EditRegistryFile(registry, add); err != nil {
			return failed(err)
		}
		fmt.Fprintf(w, "wrote     %s to %s\n", count(len(plan.Entries), "entry", "entries"), registry)
	}
	if o.scope == "" {
		these := "these entries apply nowhere until each has"
		if len(plan.Entries) == 1 {
			these = "this entry applies nowhere until it has"
		}
		fmt.Fprintf(e.stderr, "spear-capability: warning: no --scope: %s a scope; set \"scope\" in %s, or import again with --scope (global, 'corpus a, b', 'family x, y' or 'path /dir')\n", these, registry)
	}
	if o.suggestRead {
		return suggestForImport(cmd, e, registry, plan.Entries)
	}
	return nil
}

// count writes n and a noun, made plural when n is not 1.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// suggestForImport starts every imported server at once, then prints, in
// order, what check says of each and the tools whose annotations claim
// readOnlyHint.
func suggestForImport(cmd *cobra.Command, e *env, registry string, entries []*deploy.Entry) error {
	type result struct {
		p     *deploy.Provider
		out   strings.Builder
		tools []mcp.Tool
		err   error
	}
	results := make([]result, len(entries))
	var wg sync.WaitGroup
	stop := progress(e, "starting the imported servers")
	for i, entry := range entries {
		p, err := entry.Check(registry)
		if err != nil {
			return failed(err)
		}
		results[i].p = p
		wg.Add(1)
		go func(r *result) {
			defer wg.Done()
			sub := *e
			sub.stdout = &r.out
			sub.stderr = &strings.Builder{} // no progress line per server
			r.tools, r.err = probe(cmd.Context(), &sub, r.p)
		}(&results[i])
	}
	wg.Wait()
	stop()
	failures := 0
	for i := range results {
		r := &results[i]
		fmt.Fprint(e.stdout, r.out.String())
		if r.err != nil {
			failures++
			continue
		}
		writeSuggestions(e.stdout, registry, r.p, r.tools)
	}
	if failures > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d of the servers did not list their tools; fix them and run spear-capability check", failures)}
	}
	return nil
}

// readSource reads the file to import, of bounded size.
func readSource(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, errors.Unwrap(err))
	}
	if fi.Size() > maxImportFile {
		return nil, fmt.Errorf("%s is %d bytes; at most %d are read", path, fi.Size(), maxImportFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}
