package spear_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"spear/cmd/spear-capability/cli"
	"spear/cmd/spear-term/term"
	"spear/internal/fakemcp"
	"spear/warm"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"spear-term":       func() { os.Exit(term.Main()) },
		"spear-capability": func() { os.Exit(cli.Main()) },
		"fake-mcp":         func() { os.Exit(fakemcp.Main(os.Args[1:])) },
		"reach":            func() { os.Exit(reachMain(os.Args[1:])) },
		"nofile":           func() { os.Exit(nofileMain(os.Args[1:])) },
		"netprobe":         func() { os.Exit(netprobeMain(os.Args[1:])) },
	})
}

// buildNotesServer builds the example server once for the scripts.
func buildNotesServer(t *testing.T) string {
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", dir, "./examples/notes-server").CombinedOutput()
	if err != nil {
		t.Fatalf("building notes-server: %v\n%s", err, out)
	}
	return filepath.Join(dir, "notes-server")
}

func TestScripts(t *testing.T) {
	notes := buildNotesServer(t)
	repo, _ := os.Getwd()
	everything := filepath.Join(repo, "testdata/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(everything); err != nil {
		if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
			t.Fatalf("server-everything is not installed (make interop-deps): %v", err)
		}
		everything = ""
	}
	sequential := filepath.Join(repo, "testdata/interop/node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js")
	if _, err := os.Stat(sequential); err != nil {
		if os.Getenv("SPEAR_REQUIRE_INTEROP") == "1" {
			t.Fatalf("server-sequential-thinking is not installed (make interop-deps): %v", err)
		}
		sequential = ""
	}
	// A provider's server is not given the directories the turn's shell
	// may write on its PATH, and testscript installs its commands in a
	// temporary one: registries name the fake server by this path.
	fakeMCP, err := exec.LookPath("fake-mcp")
	if err != nil {
		t.Fatalf("fake-mcp is not on PATH: %v", err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/scripts",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("SPEAR_CONFIG_DIR", filepath.Join(work, "cfg"))
			env.Setenv("SPEAR_STATE_DIR", filepath.Join(work, "state"))
			env.Setenv("SPEAR_TURN_FILE", filepath.Join(work, "turn.json"))
			env.Setenv("NOTES_SERVER", notes)
			env.Setenv("EVERYTHING", everything)
			env.Setenv("SEQUENTIAL", sequential)
			env.Setenv("REPO", repo)
			env.Setenv("FAKE_MCP", fakeMCP)
			// A script that leaves a session's servers running has them
			// stopped when it ends, so that none outlives the test.
			state := filepath.Join(work, "state")
			env.Defer(func() { warm.StopSessions(context.Background(), state, "") })
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "everything":
				return everything != "", nil
			case "sequential":
				return sequential != "", nil
			case "root":
				return os.Geteuid() == 0, nil
			case "online":
				// the outside world, as the package registries are:
				// the outbound checks need it
				c, err := net.DialTimeout("tcp", "proxy.golang.org:443", 3*time.Second)
				if err == nil {
					c.Close()
				}
				return err == nil, nil
			case "pasta":
				_, err := exec.LookPath("pasta")
				return err == nil, nil
			}
			return false, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"expand":     expandCmd,
			"noprocs":    noprocsCmd,
			"count":      countCmd,
			"hangserver": hangserverCmd,
			"gone":       goneCmd,
			"ptysession": ptysessionCmd,
		},
	})
}

// expand FILE… replaces $VAR and ${VAR} in each file with the script's
// environment, so that configs can name $WORK. ${…} that holds no
// variable name (VS Code's ${input:id}, say) is left as written, and so
// are a shell script's special parameters ("$@", $0, $1, $#…).
func expandCmd(ts *testscript.TestScript, neg bool, args []string) {
	for _, f := range args {
		data := ts.ReadFile(f)
		out := os.Expand(data, func(name string) string {
			if strings.ContainsAny(name, ":/ ") {
				return "${" + name + "}"
			}
			if len(name) == 1 && strings.Contains("@*#?$!-0123456789", name) {
				return "$" + name
			}
			return ts.Getenv(name)
		})
		if err := os.WriteFile(ts.MkAbs(f), []byte(out), 0o644); err != nil {
			ts.Fatalf("expand: %v", err)
		}
	}
}

// noprocs PATTERN waits up to 5 s until no process's command line holds
// PATTERN (zombies excluded), and fails if one still does; ! noprocs fails
// unless one does, and returns as soon as it finds one.
func noprocsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: noprocs PATTERN")
	}
	pat := []byte(args[0])
	var found []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		found = found[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
				continue
			}
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if bytes.Contains(cmdline, pat) {
				found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
		if len(found) == 0 || neg || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if (len(found) > 0) != neg {
		ts.Fatalf("processes matching %q: %v", args[0], found)
	}
}

// gone FILE… reads a pid from each file and waits up to 5 s until none of
// those processes is running (zombies count as gone), and fails if one
// still is; ! gone fails unless every one of them is running now.
func goneCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: gone PIDFILE...")
	}
	var pids []int
	for _, f := range args {
		pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
		if err != nil || pid <= 1 {
			ts.Fatalf("gone: %s holds no pid: %q", f, ts.ReadFile(f))
		}
		pids = append(pids, pid)
	}
	running := func(pid int) bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		i := bytes.LastIndexByte(stat, ')')
		return i < 0 || len(stat) < i+3 || (stat[i+2] != 'Z' && stat[i+2] != 'X')
	}
	if neg {
		for i, pid := range pids {
			if !running(pid) {
				ts.Fatalf("process %d (%s) is not running", pid, args[i])
			}
		}
		return
	}
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left = left[:0]
		for i, pid := range pids {
			if running(pid) {
				left = append(left, fmt.Sprintf("%d (%s)", pid, args[i]))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("still running after 5 s: %s", strings.Join(left, ", "))
		}
	}
}

// hangserver starts an HTTP server that accepts connections and never
// answers, for the rest of the script; $HANG_URL is its address. Each
// connection it accepts is noted in $WORK/hangserver.log.
func hangserverCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: hangserver")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("hangserver: %v", err)
	}
	log := ts.MkAbs("hangserver.log")
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			if f, err := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, "accepted", c.RemoteAddr())
				f.Close()
			}
		}
	}()
	ts.Defer(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	ts.Setenv("HANG_URL", "http://"+l.Addr().String())
}

// count N PATTERN FILE checks that FILE has exactly N lines containing
// PATTERN (a plain string).
func countCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: count N PATTERN FILE")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("count: %v", err)
	}
	n := 0
	for _, line := range strings.Split(ts.ReadFile(args[2]), "\n") {
		if strings.Contains(line, args[1]) {
			n++
		}
	}
	if (n == want) == neg {
		ts.Fatalf("%s has %d lines with %q, want %d", args[2], n, args[1], want)
	}
}
