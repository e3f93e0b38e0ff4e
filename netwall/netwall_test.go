package netwall

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the holder and the keeper, as Ensure
// re-executes it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case HolderArg:
			os.Exit(HolderMain(os.Args[2:]))
		case KeeperArg:
			os.Exit(KeeperMain(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": Outbound, "outbound": Outbound, "none": None, "host": Host} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"Outbound", "hots", " none", "off"} {
		if _, err := ParseMode(in); err == nil || !strings.Contains(err.Error(), "SPEAR_NETWORK") {
			t.Errorf("ParseMode(%q): %v, want an error naming SPEAR_NETWORK", in, err)
		}
	}
}

func TestDir(t *testing.T) {
	if got := Dir("/st", "s-1", None); got != "/st/net/s-s-1.none" {
		t.Errorf("Dir = %s", got)
	}
	if got := Dir("/st", "", Outbound); got != "/st/net/no-turn.outbound" {
		t.Errorf("Dir = %s", got)
	}
}

// TestEnsure starts a holder (none: no pasta needed), finds the same one
// again, and sees it end at Stop and when its directory goes.
func TestEnsure(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		t.Skip("no /proc/self/ns")
	}
	state := t.TempDir()
	dir := Dir(state, "s-1", None)
	k, err := Ensure(dir, None, time.Minute)
	if err != nil {
		t.Skipf("no network namespace here: %v", err)
	}
	ours, _ := os.Readlink("/proc/self/ns/net")
	theirs, err := os.Readlink(k.NetNS())
	if err != nil || theirs == ours {
		t.Fatalf("keeper's namespace %q (%v), ours %q: want another", theirs, err, ours)
	}
	if k.Mode != None || k.Wanted != None {
		t.Errorf("keeper %+v: want none", k)
	}
	again, err := Ensure(dir, None, time.Minute)
	if err != nil || again.Pid != k.Pid {
		t.Errorf("second Ensure: %+v, %v; want keeper %d again", again, err, k.Pid)
	}
	if got := StopSessions(state, "s-1"); len(got) != 1 || got[0] != "s-1" {
		t.Errorf("StopSessions = %q, want [s-1]", got)
	}
	if running(dir) != nil {
		t.Error("the keeper is still recorded after Stop")
	}
	// a new one, then its directory removed: it ends by itself
	k, err = Ensure(dir, None, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(state, "net"))
	for i := 0; ; i++ {
		if _, err := os.Stat(k.NetNS()); err != nil {
			break
		}
		if i == 200 {
			t.Fatalf("keeper %d still runs 10s after its directory was removed", k.Pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHolderRejectsGarbage: bad arguments are said on the readiness
// descriptor, and nothing starts.
func TestHolderRejectsGarbage(t *testing.T) {
	for _, args := range [][]string{nil, {"d", "host", "5"}, {"d", "outbound", "x"}, {"d", "sideways", "5"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], append([]string{HolderArg}, args...)...)
		cmd.ExtraFiles = []*os.File{w}
		err = cmd.Run()
		w.Close()
		said, _ := io.ReadAll(r)
		r.Close()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.HasPrefix(string(said), "error netwall: holder: ") {
			t.Errorf("holder %q: %v, said %q; want status 2 and an error", args, err, said)
		}
	}
}

func TestDescribe(t *testing.T) {
	if s := Describe(Host); !strings.Contains(s, "SPEAR_NETWORK=host") {
		t.Errorf("Describe(host) = %q", s)
	}
	if s := Describe(None); !strings.Contains(s, "loopback only") {
		t.Errorf("Describe(none) = %q", s)
	}
	if s := Describe(Outbound); !strings.Contains(s, "pasta") {
		t.Errorf("Describe(outbound) = %q: want it to name pasta, there or missing", s)
	}
}
