package gateway

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spear/audit"
	"spear/deploy"
	"spear/mcp"
)

// TestServerGetenv: a provider's server gets PATH without the directories
// the turn's shell may write in, HOME as it is, and, when its env names
// PATH, that PATH as given.
func TestServerGetenv(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"PATH": "/home/u/.local/bin:/usr/local/bin:bin::/srv/ws/node_modules/.bin:/tmp/x:/usr/bin", "HOME": "/home/u", "TOKEN": "t"}[k]
	}
	for _, tc := range []struct {
		name      string
		env       map[string]string
		workspace string
		path      string // what the server is given
		dropped   string
	}{
		{"harness PATH", nil, "/srv/ws", "/usr/local/bin:/usr/bin", "/home/u/.local/bin|bin||/srv/ws/node_modules/.bin|/tmp/x"},
		{"no workspace", nil, "", "/usr/local/bin:/srv/ws/node_modules/.bin:/usr/bin", "/home/u/.local/bin|bin||/tmp/x"},
		{"other env", map[string]string{"TOKEN": "x"}, "/srv/ws", "/usr/local/bin:/usr/bin", "/home/u/.local/bin|bin||/srv/ws/node_modules/.bin|/tmp/x"},
		{"env names PATH", map[string]string{"PATH": "/home/u/.nvm/bin:/usr/bin"}, "/srv/ws", "/home/u/.nvm/bin:/usr/bin", ""},
		{"env names an empty PATH", map[string]string{"PATH": ""}, "/srv/ws", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &deploy.Provider{ID: "p", Command: []string{"server"}, Env: tc.env}
			server, dropped := serverGetenv(p, getenv, tc.workspace)
			opts := clientOptions(p, server)
			if got := opts.Path(); got != tc.path {
				t.Errorf("PATH %q, want %q", got, tc.path)
			}
			if got := strings.Join(dropped, "|"); got != tc.dropped {
				t.Errorf("dropped %q, want %q", got, tc.dropped)
			}
			if server("HOME") != "/home/u" {
				t.Errorf("HOME %q", server("HOME"))
			}
		})
	}
}

// TestTurnServerPath: the servers a turn starts, and those check starts,
// get PATH without HOME's directories, unless their env names PATH.
func TestTurnServerPath(t *testing.T) {
	d := newDeployment(t)
	d.g.Getenv = func(k string) string {
		return map[string]string{"PATH": "/home/u/.local/bin:/usr/bin:" + d.ws + "/bin:/bin", "HOME": "/home/u"}[k]
	}
	d.register(fake("plain"), with(fake("own", "-tag", "own"), "env", map[string]string{"PATH": "/home/u/.local/bin:/usr/bin"}))
	if st, out, errs := d.answer("list"); st != 0 {
		t.Fatalf("list: %d %q %q", st, out, errs)
	}
	t.Setenv("PATH", "/home/u/.local/bin:/usr/bin")
	t.Setenv("HOME", "/home/u")
	if _, _, err := d.g.Inspect(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var got []string
	for _, o := range d.opts {
		getenv := o.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		got = append(got, o.Command[len(o.Command)-1]+" "+o.Path()+" "+getenv("HOME"))
	}
	want := map[string]bool{
		"fake /usr/bin:/bin /home/u":              true, // the turn's
		"own /home/u/.local/bin:/usr/bin /home/u": true, // the turn's and check's
		"fake /usr/bin /home/u":                   true, // check's
	}
	if len(got) != 4 {
		t.Fatalf("starts %q", got)
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("started with %q; want one of %v", g, want)
		}
	}
}

// TestBareCommandNotOnServerPath: a bare command found only in a
// directory the server's PATH leaves out is unavailable, and the trail
// says what was left out and how to name it instead; an absolute one, or
// a PATH that left nothing out, says nothing more.
func TestBareCommandNotOnServerPath(t *testing.T) {
	d := newDeployment(t)
	bin := filepath.Join(d.dir, "bin")
	d.writeFile(filepath.Join(bin, "local-server"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(bin, "local-server"), 0o755)
	d.g.Getenv = func(k string) string {
		return map[string]string{"PATH": bin + ":/usr/bin", "HOME": "/home/u"}[k]
	}
	d.register(map[string]any{"id": "bare", "command": []string{"local-server"}, "scope": "global"})
	if st, out, errs := d.answer("list"); st != 0 || !strings.Contains(out, "bare  unavailable: could not be started") || strings.Contains(out, bin) {
		t.Fatalf("list: %d %q %q", st, out, errs)
	}
	why, _ := d.lastEvent(audit.ProviderFailed).Fields["why"].(string)
	if !strings.Contains(why, "it runs with PATH without the directories the turn's shell can write ("+bin+"): name it by an absolute path outside them, or name PATH in the entry's env") {
		t.Errorf("why %q", why)
	}

	started := &mcp.StartError{Command: "x", Err: errors.New("no such file or directory")}
	for _, tc := range []struct {
		command string
		env     map[string]string
		dropped []string
		hint    bool
	}{
		{"local-server", nil, []string{bin}, true},
		{"no-such-server", nil, []string{bin}, true},
		{"sh", nil, []string{bin}, false},                                   // found: it failed for another reason
		{bin + "/local-server", nil, []string{bin}, false},                  // a path
		{"local-server", nil, nil, false},                                   // nothing left out
		{"local-server", map[string]string{"PATH": "/usr/bin"}, nil, false}, // the entry's own PATH
	} {
		p := &deploy.Provider{ID: "p", Command: []string{tc.command}, Env: tc.env}
		server, _ := serverGetenv(p, d.g.Getenv, "")
		err := explainStart(clientOptions(p, server), tc.dropped, started)
		if hint := strings.Contains(err.Error(), "name it by an absolute path"); hint != tc.hint {
			t.Errorf("%s %v: %v", tc.command, tc.env, err)
		}
		var se *mcp.StartError
		if !errors.As(err, &se) {
			t.Errorf("%s: %T is no longer a start error", tc.command, err)
		}
	}
}

// TestParseShebang: the interpreter and its one argument, as the kernel
// reads them.
func TestParseShebang(t *testing.T) {
	for _, tc := range []struct {
		head, interp, arg string
		ok                bool
	}{
		{"#!/bin/sh\necho", "/bin/sh", "", true},
		{"#!/usr/bin/env node\n", "/usr/bin/env", "node", true},
		{"#! /usr/bin/env  node  \n", "/usr/bin/env", "node", true},
		{"#!/usr/bin/env\tpython3\n", "/usr/bin/env", "python3", true},
		{"#!/usr/bin/env -S node --max-old-space-size=100\n", "/usr/bin/env", "-S node --max-old-space-size=100", true},
		{"#!/usr/bin/python3", "/usr/bin/python3", "", true},
		{"#!\n", "", "", false},
		{"#!   \n", "", "", false},
		{"\x7fELF\x02\x01", "", "", false},
		{"", "", "", false},
		{" #!/bin/sh\n", "", "", false},
	} {
		interp, arg, ok := parseShebang([]byte(tc.head))
		if interp != tc.interp || arg != tc.arg || ok != tc.ok {
			t.Errorf("%q: %q %q %v; want %q %q %v", tc.head, interp, arg, ok, tc.interp, tc.arg, tc.ok)
		}
	}
}

// TestEnvProgram: the program env runs for a #! line's argument.
func TestEnvProgram(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"node", "node"},
		{"node --flag", "node"},
		{"-S node --flag", "node"},
		{"-Snode --flag", "node"},
		{"-S NODE_ENV=production node", "node"},
		{"-i PATH=/x node", "node"},
		{"-u HOME -C /tmp python3", "python3"},
		{"--split-string=python3 -u", "python3"},
		{"--split-string= -v", ""},
		{"-S ./bin/tool", "./bin/tool"},
		{"", ""},
		{"-S", ""},
	} {
		if got := envProgram(tc.arg); got != tc.want {
			t.Errorf("envProgram(%q) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}

// TestWritableInterpreter: check names the interpreter a provider's #!
// script runs when the turn's shell may write it: an absolute one, one the
// server's PATH finds, and one only the harness's PATH finds (its
// directory left out of the server's); not one a private path covers, one
// in a system directory, or a program that is no script.
func TestWritableInterpreter(t *testing.T) {
	sh := findOnPath("sh", "/usr/bin:/bin", "/")
	if sh == "" {
		t.Skip("no sh in /usr/bin or /bin")
	}
	dir := t.TempDir() // a temporary directory: the turn's shell writes there
	bin := filepath.Join(dir, "bin")
	scripts := filepath.Join(dir, "scripts")
	for _, d := range []string{bin, scripts} {
		os.MkdirAll(d, 0o755)
	}
	exe := func(path, content string) string {
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	exe(filepath.Join(bin, "fakeinterp"), "#!/bin/sh\n")
	exe(filepath.Join(bin, "sh"), "#!/bin/sh\n")
	script := func(name, line string) string { return exe(filepath.Join(scripts, name), line+"\nbody\n") }
	getenv := func(k string) string {
		return map[string]string{"PATH": bin + ":/usr/bin:/bin", "HOME": "/home/u"}[k]
	}
	for _, tc := range []struct {
		name    string
		command string
		env     map[string]string
		private []string
		want    *Interpreter
	}{
		{"env, the harness's PATH only", script("a", "#!/usr/bin/env fakeinterp"), nil, nil,
			&Interpreter{Name: "fakeinterp", Path: filepath.Join(bin, "fakeinterp"), LeftOut: true}},
		{"env, another on the server's PATH", script("b", "#!/usr/bin/env sh"), nil, nil,
			&Interpreter{Name: "sh", Path: filepath.Join(bin, "sh"), LeftOut: true, Instead: sh}},
		{"env -S", script("c", "#!/usr/bin/env -S fakeinterp -x"), nil, nil,
			&Interpreter{Name: "fakeinterp", Path: filepath.Join(bin, "fakeinterp"), LeftOut: true}},
		{"env, the entry's PATH", script("d", "#!/usr/bin/env fakeinterp"), map[string]string{"PATH": bin + ":/usr/bin"}, nil,
			&Interpreter{Name: "fakeinterp", Path: filepath.Join(bin, "fakeinterp")}},
		{"env, the entry's PATH, private", script("e", "#!/usr/bin/env fakeinterp"), map[string]string{"PATH": bin + ":/usr/bin"}, []string{bin}, nil},
		{"env, the entry's PATH without it", script("f", "#!/usr/bin/env sh"), map[string]string{"PATH": "/usr/bin:/bin"}, nil, nil},
		{"absolute", script("g", "#!"+filepath.Join(bin, "fakeinterp")+" -x"), nil, nil,
			&Interpreter{Name: filepath.Join(bin, "fakeinterp"), Path: filepath.Join(bin, "fakeinterp")}},
		{"absolute, private", script("h", "#!"+filepath.Join(bin, "fakeinterp")), nil, []string{bin}, nil},
		{"env with a path", script("i", "#!/usr/bin/env "+filepath.Join(bin, "fakeinterp")), nil, nil,
			&Interpreter{Name: filepath.Join(bin, "fakeinterp"), Path: filepath.Join(bin, "fakeinterp")}},
		{"a system interpreter", script("j", "#!/bin/sh"), nil, nil, nil},
		{"no script", script("k", "echo"), nil, nil, nil},
		{"no program", filepath.Join(scripts, "absent"), nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &deploy.Provider{ID: "p", Command: []string{tc.command}, Env: tc.env, Private: tc.private, Dir: dir}
			got := writableInterpreter(p, getenv, "")
			if tc.want != nil {
				tc.want.Script = tc.command
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
