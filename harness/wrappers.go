package harness

import (
	_ "embed"
	"strings"
)

// codexSnapshot is Codex's wrapper once its shell snapshot is ready: it
// saves the variables it sets itself, sources the snapshot, restores
// them, puts its own tools first on PATH and executes the shell on the
// model's command. 38 KB, kept as captured, with its file names and the
// command made placeholders.
//
//go:embed templates/codex-snapshot.tmpl
var codexSnapshot string

// Known are the wrappers spear-term knows, one entry per harness and
// wrapper generation, each with a real wrapper the harness sent, in
// testdata/wrappers (docs/harnesses.md says how each was captured).
var Known = []*Wrapper{
	// Claude Code runs each Bash tool call as CLAUDE_CODE_SHELL -c TEXT:
	// it sources its snapshot of the user's shell, turns extended globs
	// off, evals the model's command with stdin from /dev/null, and, when
	// that succeeds, writes the working directory to a file it reads
	// back. The bash form and the zsh form (chosen by the shell's path).
	newWrapper("claude-code-bash", "Claude Code", "2.1.197", "claude-code-2.1.197-bash.txt", quoted,
		`source {{PATH}} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval {{CMD}} < /dev/null && pwd -P >| {{PATH}}`),
	newWrapper("claude-code-zsh", "Claude Code", "2.1.197", "claude-code-2.1.197-zsh.txt", quoted,
		`source {{PATH}} 2>/dev/null || true && setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true && eval {{CMD}} < /dev/null && pwd -P >| {{PATH}}`),
	// Before its snapshot exists (or when it could not be made), a login
	// shell (-c -l) without the source.
	newWrapper("claude-code-bash-login", "Claude Code", "2.1.197", "claude-code-2.1.197-bash-login.txt", quoted,
		`shopt -u extglob 2>/dev/null || true && eval {{CMD}} < /dev/null && pwd -P >| {{PATH}}`),
	// With CLAUDE_CODE_SHELL_PREFIX="spear-term -c", the text the prefix
	// is given, which works in bash and zsh alike.
	newWrapper("claude-code-prefix", "Claude Code", "2.1.197", "claude-code-2.1.197-prefix.txt", quoted,
		`source {{PATH}} 2>/dev/null || true && { shopt -u extglob || setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL; } >/dev/null 2>&1 || true && eval {{CMD}} < /dev/null && pwd -P >| {{PATH}}`),
	// Codex runs the user's login shell (its /etc/passwd entry, not
	// $SHELL). Before its shell snapshot is ready, or with the snapshot
	// turned off, as SHELL -lc CMD: no wrapper at all. Once it is ready,
	// as SHELL -c with this wrapper, which ends by executing SHELL -c CMD.
	newWrapper("codex-snapshot", "Codex", "0.171.0", "codex-0.171.0-snapshot.txt", quoted, codexSnapshot),
	// Gemini CLI runs each run_shell_command as bash -c TEXT (bash found
	// on PATH; $SHELL is not read), the model's command as lines of its
	// own in a group. Each generation, newest first: a subshell whose
	// EXIT trap writes the background jobs' pids to a file (0.44 on);
	// before that a subshell, then a brace group, followed by pgrep of the
	// shell's process group into a file; from 0.13 on behind a shopt that
	// turns off options that would change how the command reads.
	newWrapper("gemini-cli-bgpids", "Gemini CLI", "0.61.0", "gemini-cli-0.61.0.txt", lines,
		"shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file={{PATH}}\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{{CMD}}\n)\n__code=$?\nexit $__code"),
	newWrapper("gemini-cli-pgrep-subshell", "Gemini CLI", "0.40.0", "gemini-cli-0.40.0.txt", lines,
		"shopt -u promptvars nullglob extglob nocaseglob dotglob; (\n{{CMD}}\n)\n__code=$?; pgrep -g 0 >{{PATH}} 2>&1; exit $__code;"),
	newWrapper("gemini-cli-pgrep-subshell-0.38", "Gemini CLI", "0.38.0", "gemini-cli-0.38.0.txt", lines,
		"shopt -u promptvars nullglob extglob nocaseglob dotglob; (\n{{CMD}}\n); __code=$?; pgrep -g 0 >{{PATH}} 2>&1; exit $__code;"),
	newWrapper("gemini-cli-pgrep-group", "Gemini CLI", "0.36.0", "gemini-cli-0.36.0.txt", lines,
		"shopt -u promptvars nullglob extglob nocaseglob dotglob; { {{CMD}}; }; __code=$?; pgrep -g 0 >{{PATH}} 2>&1; exit $__code;"),
	newWrapper("gemini-cli-pgrep-group-0.1", "Gemini CLI", "0.1.22", "gemini-cli-0.1.22.txt", lines,
		"{ {{CMD}}; }; __code=$?; pgrep -g 0 >{{PATH}} 2>&1; exit $__code;"),
}

// guesses are marks of a harness's wrapper, for a refusal that names the
// harness whose wrapper was not recognised.
var guesses = []struct{ marker, harness string }{
	{"/shell-snapshots/snapshot-", "Claude Code"},
	{"&& pwd -P >| ", "Claude Code"},
	{"__CODEX_SNAPSHOT_", "Codex"},
	{"__code=$?", "Gemini CLI"},
}

// newWrapper makes a table entry; its template is compiled when a
// submission first starts as it does.
func newWrapper(name, harness, version, captured string, hold holding, template string) *Wrapper {
	prefix, _, _ := strings.Cut(template, "{{")
	return &Wrapper{Name: name, Harness: harness, Version: version, Captured: captured, Template: template, hold: hold, prefix: prefix}
}
