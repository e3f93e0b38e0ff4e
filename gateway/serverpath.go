package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"spear/deploy"
	"spear/mcp"
)

// serverGetenv is getenv as provider p's server gets it, for a turn in
// workspace ("" for none): PATH without the directories the turn's shell
// may write in (deploy.PathOutsideTurn), so that a program the turn put
// there (an interpreter that `#!/usr/bin/env node` finds, say) never runs
// with the provider's env. An entry whose env names PATH gets that PATH,
// as given. It also returns the directories left out.
func serverGetenv(p *deploy.Provider, getenv func(string) string, workspace string) (func(string) string, []string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if _, own := p.Env["PATH"]; own {
		return getenv, nil
	}
	path, dropped := deploy.PathOutsideTurn(getenv("PATH"), getenv("HOME"), workspace)
	return func(k string) string {
		if k == "PATH" {
			return path
		}
		return getenv(k)
	}, dropped
}

// explainStart adds to err, from starting a server with opts, what a bare
// command that its PATH does not find calls for: the directories that PATH
// left out (dropped), and how to name the program instead.
func explainStart(opts mcp.Options, dropped []string, err error) error {
	var se *mcp.StartError
	if len(dropped) == 0 || !errors.As(err, &se) {
		return err
	}
	if _, perr := opts.Program(); !errors.Is(perr, exec.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%w; it runs with PATH without the directories the turn's shell can write (%s): name it by an absolute path outside them, or name PATH in the entry's env", err, strings.Join(dropped, ", "))
}

// maxShebang is how much of a file the kernel reads for its #! line
// (BINPRM_BUF_SIZE); the rest of a longer line is not the interpreter's.
const maxShebang = 256

// shebang reads the #! line of the file at path: the interpreter it names
// and the one argument that follows, if any (the kernel passes the rest of
// the line as one). ok is false for a file that has no such line or
// cannot be read.
func shebang(path string) (interp, arg string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	buf := make([]byte, maxShebang)
	n, _ := f.Read(buf)
	return parseShebang(buf[:n])
}

// parseShebang reads a #! line from the start of a file.
func parseShebang(head []byte) (interp, arg string, ok bool) {
	line, found := bytes.CutPrefix(head, []byte("#!"))
	if !found {
		return "", "", false
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	s := strings.Trim(string(line), " \t")
	interp = s
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		interp, arg = s[:i], strings.TrimLeft(s[i:], " \t")
	}
	return interp, arg, interp != ""
}

// envProgram is the program `env ARG` runs, as a #! line's one argument
// gives it to env: its first word that is neither an option (with -u's
// and -C's values, and -S's split words read on) nor a NAME=VALUE; ""
// when there is none. (Without -S, env takes the whole argument for one
// name, spaces and all, and finds nothing; its first word is what its
// author meant.)
func envProgram(arg string) string {
	words := strings.Fields(arg)
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-u" || w == "--unset" || w == "-C" || w == "--chdir":
			i++
		case strings.HasPrefix(w, "-S") && len(w) > 2:
			words[i] = w[2:]
			i--
		case strings.HasPrefix(w, "--split-string="):
			words[i] = strings.TrimPrefix(w, "--split-string=")
			i--
		case strings.HasPrefix(w, "-"), strings.Contains(w, "="):
		default:
			return w
		}
	}
	return ""
}

// findOnPath is the file execvp finds for name on path, as a program
// started in dir would: an empty entry is dir, a relative one is taken
// from dir. "" when none is an executable file.
func findOnPath(name, path, dir string) string {
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		candidate := filepath.Join(d, name)
		if fi, err := os.Stat(candidate); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return candidate
		}
	}
	return ""
}
