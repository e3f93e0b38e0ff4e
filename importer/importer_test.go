package importer

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"spear/deploy"
	"spear/internal/strictjson"
)

// Samples of each format, as the hosts write them: stdio servers with
// env, HTTP and SSE servers, disabled ones, odd names and unknown keys.
const (
	sampleMCPJSON = `{
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}", "LOG": "warn"}
    },
    "My Notes!": {"command": "/opt/notes/server", "args": ["--dir", "/srv/notes"], "cwd": "/srv", "color": "red"},
    "linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer x"}},
    "events": {"type": "sse", "url": "https://example.com/sse"},
    "old": {"command": "uvx", "args": ["old-server"], "disabled": true}
  },
  "version": 2
}`
	sampleClaudeJSON = `{
  "numStartups": 12,
  "theme": "dark",
  "mcpServers": {
    "fs": {"type": "stdio", "command": "/usr/local/bin/fs-mcp", "args": [], "env": {}}
  },
  "projects": {
    "/src/web": {
      "allowedTools": [],
      "mcpServers": {
        "db": {"command": "db-mcp", "env": {"DB_URL": "postgres://localhost/web"}},
        "gone": {"command": "gone-mcp"}
      },
      "disabledMcpServers": ["fs", "gone"]
    },
    "/src/api": {"mcpServers": {"db": {"command": "db-mcp", "args": ["--api"]}}}
  }
}`
	sampleCodex = `model = "o4-mini"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs"]
env = { "API_KEY" = "value", "PORT" = 8080 }
startup_timeout_sec = 20
cwd = "/srv/docs"

[mcp_servers."Figma Dev"]
url = "https://figma.example/mcp"
bearer_token_env_var = "FIGMA_TOKEN"

[mcp_servers.off]
command = "/usr/bin/off"
enabled = false

[mcp_servers.search]
command = "/opt/search/bin/search"
env_vars = ["HOME_TOKEN"]

[mcp_servers.search.env]
INDEX = "/var/index"

[profiles.fast]
model = "o4-mini"
`
	sampleGemini = `{
  // Gemini CLI allows comments
  "theme": "Dracula",
  "mcp": {"excluded": ["experimental"]},
  "mcpServers": {
    "git": {"command": "uvx", "args": ["mcp-server-git"], "trust": true, "timeout": 30000},
    "github": {"httpUrl": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "x"}},
    "events": {"url": "http://localhost:8080/sse"},
    "experimental": {"command": "/opt/exp/server"},
    "py": {"command": "python3", "args": ["-m", "tools"], "env": {"KEY": "$MY_KEY"}, "includeTools": ["a"]},
  },
}`
	sampleVSCode = `{
  "inputs": [{"type": "promptString", "id": "token", "description": "Token", "password": true}],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
    "perplexity": {"type": "stdio", "command": "npx", "args": ["-y", "server-perplexity-ask"], "env": {"PERPLEXITY_API_KEY": "${input:token}"}, "envFile": "${workspaceFolder}/.env"},
    "remote": {"type": "http", "url": "https://api.example.com/mcp"},
    "local": {"type": "stdio", "command": "${workspaceFolder}/bin/server"},
    "weird": {"type": "websocket", "command": "x"}
  }
}`
	sampleCursor = `{
  "mcpServers": {
    "postgres": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"], "env": {"N": 1, "1BAD": "x", "GOOD": "y"}},
    "web-search": {"url": "https://search.example/mcp"},
    "rel": {"command": "./bin/server"},
    "ÜberTool": {"command": "/opt/uber/server"}
  }
}`
)

// summary is a server as the tests compare it.
type summary struct {
	Name, Where string
	Command     []string
	Env         map[string]string
	Skip        string
	Notes       []string
}

func summarize(f *File) []summary {
	var out []summary
	for _, s := range f.Servers {
		var notes []string
		for _, n := range s.Notes {
			notes = append(notes, n.Kind+": "+n.Text)
		}
		out = append(out, summary{s.Name, s.Where, s.Command, s.Env, s.Skip, notes})
	}
	return out
}

func TestRead(t *testing.T) {
	cases := []struct {
		path, data string
		format     Format
		want       []summary
		fileNotes  []string
	}{
		{"/p/.mcp.json", sampleMCPJSON, Claude, []summary{
			{"github", "mcpServers.github", []string{"npx", "-y", "@modelcontextprotocol/server-github"},
				map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}", "LOG": "warn"}, "",
				[]string{"note: env GITHUB_PERSONAL_ACCESS_TOKEN holds a variable reference, copied as written: SPEAR expands no variables, so write the value itself in the registry"}},
			{"My Notes!", `mcpServers["My Notes!"]`, []string{"/opt/notes/server", "--dir", "/srv/notes"}, nil, "",
				[]string{"skipped: key \"cwd\": " + whyCwd, "skipped: key \"color\": " + whyUnknown}},
			{"linear", "mcpServers.linear", nil, nil, `an HTTP server (type "http"); SPEAR starts stdio servers only`, nil},
			{"events", "mcpServers.events", nil, nil, `an SSE server (type "sse"); SPEAR starts stdio servers only`, nil},
			{"old", "mcpServers.old", nil, nil, `disabled in the file ("disabled": true)`, nil},
		}, []string{`skipped: key "version": ` + whyUnknown}},
		{"/home/u/.claude.json", sampleClaudeJSON, Claude, []summary{
			{"fs", "mcpServers.fs", []string{"/usr/local/bin/fs-mcp"}, nil, "",
				[]string{"note: Claude Code has it disabled in project /src/web (disabledMcpServers)"}},
			{"db", `projects["/src/web"].mcpServers.db`, []string{"db-mcp"}, map[string]string{"DB_URL": "postgres://localhost/web"}, "",
				[]string{"note: Claude Code starts it in project /src/web only; --scope 'path /src/web' says the same here"}},
			{"gone", `projects["/src/web"].mcpServers.gone`, nil, nil, "disabled in project /src/web (disabledMcpServers)", nil},
			{"db", `projects["/src/api"].mcpServers.db`, []string{"db-mcp", "--api"}, nil, "",
				[]string{"note: Claude Code starts it in project /src/api only; --scope 'path /src/api' says the same here"}},
		}, nil},
		{"/home/u/.codex/config.toml", sampleCodex, Codex, []summary{
			{"docs", "[mcp_servers.docs]", []string{"npx", "-y", "mcp-docs"}, map[string]string{"API_KEY": "value"}, "",
				[]string{"skipped: key \"startup_timeout_sec\": " + whyTimeout, "skipped: key \"cwd\": " + whyCwd, `skipped: env "PORT": its value is a number, not a string; write it in the registry as a string`}},
			{"Figma Dev", `[mcp_servers."Figma Dev"]`, nil, nil, `an HTTP server ("url"); SPEAR starts stdio servers only`, nil},
			{"off", "[mcp_servers.off]", nil, nil, "disabled in the file (enabled = false)", nil},
			{"search", "[mcp_servers.search]", []string{"/opt/search/bin/search"}, map[string]string{"INDEX": "/var/index"}, "",
				[]string{"skipped: key \"env_vars\": " + whyEnvNames}},
		}, nil},
		{"/home/u/.gemini/settings.json", sampleGemini, Gemini, []summary{
			{"git", "mcpServers.git", []string{"uvx", "mcp-server-git"}, nil, "",
				[]string{"skipped: key \"trust\": " + whyTrust, "skipped: key \"timeout\": " + whyTimeout}},
			{"github", "mcpServers.github", nil, nil, `an HTTP server ("httpUrl"); SPEAR starts stdio servers only`, nil},
			{"events", "mcpServers.events", nil, nil, `an SSE server ("url"); SPEAR starts stdio servers only`, nil},
			{"experimental", "mcpServers.experimental", nil, nil, "disabled in the file (Gemini CLI's excluded list names it)", nil},
			{"py", "mcpServers.py", []string{"python3", "-m", "tools"}, map[string]string{"KEY": "$MY_KEY"}, "",
				[]string{"skipped: key \"includeTools\": " + whyTools, "note: env KEY holds a variable reference, copied as written: SPEAR expands no variables, so write the value itself in the registry"}},
		}, nil},
		{"/w/.vscode/mcp.json", sampleVSCode, VSCode, []summary{
			{"fetch", "servers.fetch", []string{"uvx", "mcp-server-fetch"}, nil, "", nil},
			{"perplexity", "servers.perplexity", []string{"npx", "-y", "server-perplexity-ask"}, map[string]string{"PERPLEXITY_API_KEY": "${input:token}"}, "",
				[]string{"skipped: key \"envFile\": " + whyEnvFile, "note: env PERPLEXITY_API_KEY holds a variable reference, copied as written: SPEAR expands no variables, so write the value itself in the registry"}},
			{"remote", "servers.remote", nil, nil, `an HTTP server (type "http"); SPEAR starts stdio servers only`, nil},
			{"local", "servers.local", nil, nil, `its command "${workspaceFolder}/bin/server" holds a variable SPEAR cannot expand; register it with spear-capability add and the real path`, nil},
			{"weird", "servers.weird", nil, nil, `type "websocket" is not a transport SPEAR knows; it starts stdio servers only`, nil},
		}, nil},
		{"/w/.cursor/mcp.json", sampleCursor, Cursor, []summary{
			{"postgres", "mcpServers.postgres", []string{"npx", "-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"}, map[string]string{"GOOD": "y"}, "",
				[]string{`skipped: env "1BAD": not a variable name (letters, digits and _, not starting with a digit)`, `skipped: env "N": its value is a number, not a string; write it in the registry as a string`}},
			{"web-search", "mcpServers.web-search", nil, nil, `a remote server ("url"); SPEAR starts stdio servers only`, nil},
			{"rel", "mcpServers.rel", nil, nil, `its command "./bin/server" is a relative path, and the directory it is relative to is not known here; register it with spear-capability add and an absolute path`, nil},
			{"ÜberTool", `mcpServers["ÜberTool"]`, []string{"/opt/uber/server"}, nil, "", nil},
		}, nil},
	}
	for _, c := range cases {
		for _, format := range []Format{c.format, ""} {
			f, err := Read(c.path, []byte(c.data), format)
			if err != nil {
				t.Fatalf("%s as %q: %v", c.path, format, err)
			}
			if f.Format != c.format {
				t.Errorf("%s: format %s, want %s", c.path, f.Format, c.format)
			}
			if got := summarize(f); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s:\n got %#v\nwant %#v", c.path, got, c.want)
			}
			var notes []string
			for _, n := range f.Notes {
				notes = append(notes, n.Kind+": "+n.Text)
			}
			if !reflect.DeepEqual(notes, c.fileNotes) {
				t.Errorf("%s: file notes %q, want %q", c.path, notes, c.fileNotes)
			}
		}
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		path, data string
		want       Format
		err        string
	}{
		{"/x/config.toml", "[mcp_servers.a]\ncommand = \"a\"\n", Codex, ""},
		{"/x/codex-config", "[mcp_servers.a]\ncommand = \"a\"\n", Codex, ""},
		{"/x/.claude.json", `{}`, Claude, ""},
		{"/x/.mcp.json", `{"mcpServers": {}}`, Claude, ""},
		{"/x/claude_desktop_config.json", `{"mcpServers": {}}`, Claude, ""},
		{"/x/backup.json", `{"projects": {}}`, Claude, ""},
		{"/x/.vscode/mcp.json", `{"servers": {}}`, VSCode, ""},
		{"/x/servers.json", `{"servers": {}}`, VSCode, ""},
		{"/x/.vscode/settings.json", `{"mcp": {"servers": {}}}`, VSCode, ""},
		{"/x/user/settings.json", `{"mcp": {"servers": {}}}`, VSCode, ""},
		{"/x/.gemini/settings.json", `{"theme": "x"}`, Gemini, ""},
		{"/x/settings.json", `{"mcpServers": {}}`, Gemini, ""},
		{"/x/.cursor/mcp.json", `{"mcpServers": {}}`, Cursor, ""},
		{"/x/mcp.json", `{"mcpServers": {}}`, "", "give --format claude, gemini or cursor"},
		{"/x/package.json", `{"name": "x"}`, "", "it is not a server list this command reads"},
		{"/x/broken.json", "{\n  \"mcpServers\": {\n    \"a\": }\n}", "", "/x/broken.json:3:10: not valid JSON: invalid character '}' looking for beginning of value"},
		{"/x/list.json", `[1, 2]`, "", "the file must hold one JSON object"},
	}
	for _, c := range cases {
		got, err := Detect(c.path, []byte(c.data))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.path, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.path, got, err, c.want)
		}
	}
}

func TestReadErrors(t *testing.T) {
	cases := []struct {
		path, data string
		format     Format
		err        string
	}{
		{"/x/config.toml", "[mcp_servers.a\ncommand = 1", Codex, "/x/config.toml:2:15: not valid TOML: expected '.' or ']' to end table name"},
		{"/x/config.toml", "model = \"x\"\n", Codex, "it has no [mcp_servers.<name>] table"},
		{"/x/config.toml", "mcp_servers = 3\n", Codex, "mcp_servers must be a table of servers"},
		{"/x/.mcp.json", `{"servers": {}}`, Claude, `it has neither "mcpServers" nor "projects"`},
		{"/x/.mcp.json", `{"mcpServers": []}`, Claude, `"mcpServers" must be an object of server names to servers`},
		{"/x/s.json", `{"mcpServers": {}}`, VSCode, `it has no "servers" object`},
		{"/x/s.json", `{"servers": {}}`, Cursor, `it has no "mcpServers" object`},
		{"/x/s.json", `{"servers": {}}`, Gemini, `it has no "mcpServers" object`},
		{"/x/s.json", `{"servers": {}}`, "yaml", `"yaml" is not a format`},
		{"/x/s.json", "/* open", Cursor, "not valid JSON"},
	}
	for _, c := range cases {
		_, err := Read(c.path, []byte(c.data), c.format)
		var ie *Error
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %q as %s: %v, want %q", c.path, c.data, c.format, err, c.err)
		}
	}
}

func TestStripJSONC(t *testing.T) {
	in := "\xef\xbb\xbf{\"a\": \"// not a comment\", // a comment\n \"b\": [1, 2,], /* block\n */ \"c\": \"/* kept */\",\n}"
	out := stripJSONC([]byte(in))
	if len(out) != len(in) || strings.Count(string(out), "\n") != strings.Count(in, "\n") {
		t.Fatalf("offsets moved: %q", out)
	}
	ms, err := strictjson.Members(out)
	if err != nil || len(ms) != 3 || string(ms[0].Raw) != `"// not a comment"` || string(ms[2].Raw) != `"/* kept */"` {
		t.Errorf("%q → %v %v", out, ms, err)
	}
}

func TestMakeID(t *testing.T) {
	cases := map[string]string{
		"github":                       "github",
		"GitHub":                       "github",
		"My Notes!":                    "my-notes",
		"awslabs.ccapi-server":         "awslabs-ccapi-server",
		"1password":                    "mcp-1password",
		"_x":                           "mcp-_x",
		"ÜberTool":                     "bertool",
		"日本":                           "mcp",
		"":                             "mcp",
		"--a--b--":                     "a-b",
		strings.Repeat("a", 70):        strings.Repeat("a", 64),
		strings.Repeat("a", 63) + "-b": strings.Repeat("a", 63),
	}
	for in, want := range cases {
		if got := MakeID(in); got != want {
			t.Errorf("MakeID(%q) = %q, want %q", in, got, want)
		}
		if _, err := (&deploy.Entry{ID: MakeID(in), Command: []string{"x"}}).Check("c.json"); err != nil {
			t.Errorf("MakeID(%q) is not a valid id: %v", in, err)
		}
	}
	if got := withSuffix(strings.Repeat("a", 64), 12); len(got) != 64 || !strings.HasSuffix(got, "a-12") {
		t.Errorf("withSuffix: %q", got)
	}
}

func resolveAll(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return name, nil
	}
	if name == "uvx" {
		return "", &deploy.CommandNotFoundError{Name: name, Why: "is not found in PATH"}
	}
	return "/usr/bin/" + name, nil
}

func TestPlan(t *testing.T) {
	f, err := Read("/p/.mcp.json", []byte(sampleMCPJSON), "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(Options{Registry: "/cfg/capabilities.json", Scope: "global", Resolve: resolveAll})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range p.Lines {
		lines = append(lines, l.Tag+" "+l.Text)
	}
	want := []string{
		`skipped the file's key "version": ` + whyUnknown,
		"import github from mcpServers.github",
		"command github: npx is /usr/bin/npx",
		"note github: env GITHUB_PERSONAL_ACCESS_TOKEN holds a variable reference, copied as written: SPEAR expands no variables, so write the value itself in the registry",
		`renamed my-notes: "My Notes!" from mcpServers["My Notes!"], because an id is 1 to 64 of a-z, 0-9, - and _, starting with a letter`,
		`import my-notes from mcpServers["My Notes!"]`,
		`skipped my-notes: key "cwd": ` + whyCwd,
		`skipped my-notes: key "color": ` + whyUnknown,
		`skipped mcpServers.linear: an HTTP server (type "http"); SPEAR starts stdio servers only`,
		`skipped mcpServers.events: an SSE server (type "sse"); SPEAR starts stdio servers only`,
		`skipped mcpServers.old: disabled in the file ("disabled": true)`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Entries) != 2 {
		t.Fatalf("entries: %v", p.Entries)
	}
	e := p.Entries[0]
	if e.ID != "github" || e.Command[0] != "/usr/bin/npx" || e.Scope != "global" || e.Write != deploy.WriteRefuse || e.Read == nil || len(e.Read) != 0 || e.Env["LOG"] != "warn" {
		t.Errorf("entry: %+v", e)
	}
	if !strings.Contains(e.Text(), `"read": [],`) || !strings.Contains(e.Text(), `"write": "refuse"`) {
		t.Errorf("an imported entry's text says nothing of its class:\n%s", e.Text())
	}

	// ids taken, commands not found and --only names that match nothing
	// are all reported at once
	_, err = f.Plan(Options{Registry: "/c.json", Taken: []string{"github"}, Resolve: resolveAll, Only: []string{"github", "my-notes", "old", "ghost"}})
	var pe *PlanError
	if !errors.As(err, &pe) || len(pe.Problems) != 2 ||
		!strings.Contains(pe.Problems[0], `server "github": the registry already has an entry with id github; leave the server out with --only, or remove that entry first (spear-capability remove github)`) ||
		!strings.Contains(pe.Problems[1], `--only names "ghost", which /p/.mcp.json does not list; it lists "github", "My Notes!", "linear", "events", "old"`) {
		t.Errorf("plan errors: %v", err)
	}
	f2, _ := Read("/g/settings.json", []byte(sampleGemini), Gemini)
	_, err = f2.Plan(Options{Registry: "/c.json", Resolve: resolveAll})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), `server "git": command "uvx" is not found in PATH; install it, write its absolute path in /g/settings.json, or leave the server out with --only`) {
		t.Errorf("command not found: %v", err)
	}
	if _, err := f2.Plan(Options{Registry: "/c.json", Scope: "everywhere"}); err == nil || !strings.Contains(err.Error(), `--scope: "everywhere" is not a scope`) {
		t.Errorf("bad scope: %v", err)
	}
	// --only by id, and ids made unique within the file
	f3, _ := Read("/h/.claude.json", []byte(sampleClaudeJSON), "")
	p3, err := f3.Plan(Options{Registry: "/c.json", Only: []string{"db"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p3.Entries) != 2 || p3.Entries[0].ID != "db" || p3.Entries[1].ID != "db-2" {
		t.Errorf("entries: %+v", p3.Entries)
	}
	found := false
	for _, l := range p3.Lines {
		found = found || l.Text == `db-2: "db" from projects["/src/api"].mcpServers.db, because db is another server's id in this file`
	}
	if !found {
		t.Errorf("no renamed line: %v", p3.Lines)
	}
}
