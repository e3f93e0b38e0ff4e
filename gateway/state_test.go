package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"spear/audit"
	"spear/deploy"
	"spear/outcome"
	"spear/present"
)

// TestDamagedState: a state file that cannot be read refuses the turn
// without telling it where the state is, and the trail has the cause.
func TestDamagedState(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":      "{half",
		"other version": `{"version": 99, "offered": false, "described": []}`,
	} {
		t.Run(name, func(t *testing.T) {
			d := newDeployment(t)
			d.register(with(fake("notes"), "read", []string{"echo"}))
			d.writeFile(d.statePath("s1", "t1"), content)
			st, out, errs := d.answer("list")
			if st != outcome.ExitRefused || out != "" || errs != "spear-capability: refused: the gateway cannot serve this turn: its state cannot be read or written (the audit trail has the cause)\n" {
				t.Errorf("%d %q %q", st, out, errs)
			}
			if strings.Contains(errs, d.dir) {
				t.Errorf("the turn was told a path")
			}
			ref := d.lastEvent(audit.CapabilityRefused)
			wantField(t, ref, "words", `["list"]`)
			if why, _ := ref.Fields["why"].(string); !strings.Contains(why, "is damaged or from another version; remove it to start the turn afresh") {
				t.Errorf("recorded %s", ref.Raw)
			}
			if n := d.connects.Load(); n != 0 {
				t.Errorf("%d starts", n)
			}
		})
	}
}

// TestStateUnreadable: a state that cannot be read is an error that names
// it for the trail.
func TestStateUnreadable(t *testing.T) {
	d := newDeployment(t)
	d.register(fake("notes"))
	os.MkdirAll(d.statePath("s1", "t1"), 0o700) // a directory where the file belongs
	_, err := d.g.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "reading the turn's state") {
		t.Errorf("Open: %v", err)
	}
	if n := d.connects.Load(); n != 0 {
		t.Errorf("%d starts", n)
	}
}

// TestStateDirUnusable: a state directory that cannot be made refuses the
// turn in the same words.
func TestStateDirUnusable(t *testing.T) {
	d := newDeployment(t)
	d.register(fake("notes"))
	blocker := filepath.Join(d.dir, "blocker")
	d.writeFile(blocker, "a file, not a directory")
	d.g.Settings.StateDir = filepath.Join(blocker, "state")
	st, _, errs := d.answer("list")
	if st != outcome.ExitRefused || errs != "spear-capability: refused: the gateway cannot serve this turn: its state cannot be read or written (the audit trail has the cause)\n" {
		t.Errorf("%d %q", st, errs)
	}
	if why, _ := d.lastEvent(audit.CapabilityRefused).Fields["why"].(string); !strings.Contains(why, "creating the turn's state directory") {
		t.Errorf("recorded %q", why)
	}
}

// TestConcurrentOpens: commands of one turn that open it at once build its
// family once.
func TestConcurrentOpens(t *testing.T) {
	d := newDeployment(t)
	d.register(with(fake("notes", "-start-delay", "20ms"), "read", []string{"echo"}), with(fake("wiki"), "read", []string{"echo"}))
	const n = 8
	var wg sync.WaitGroup
	built := make([]time.Time, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			ts, err := d.g.Open(context.Background())
			if err != nil {
				errs[i] = err
				return
			}
			defer ts.Close()
			built[i] = ts.State.Built
		}(i)
	}
	close(start)
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		if !built[i].Equal(built[0]) {
			t.Errorf("Open %d saw a family built at %v, Open 0 at %v", i, built[i], built[0])
		}
	}
	if c := d.connects.Load(); c != 2 {
		t.Errorf("%d starts for 2 providers", c)
	}
	if got := len(d.events(audit.CapabilityFamilySelected)); got != 1 {
		t.Errorf("%d families selected", got)
	}
}

// TestStatePersisted: the family is built once per turn; a later Open
// reads it and starts nothing.
func TestStatePersisted(t *testing.T) {
	d := newDeployment(t)
	d.register(with(fake("notes"), "read", []string{"echo"}))
	first := d.open()
	if c := d.connects.Load(); c != 1 {
		t.Fatalf("%d starts", c)
	}
	d.register(with(fake("notes"), "read", []string{"echo", "fail"}), fake("wiki"))
	second := d.open()
	if c := d.connects.Load(); c != 1 {
		t.Errorf("the second Open started %d providers", c-1)
	}
	if jsonOf(first.State) != jsonOf(second.State) {
		t.Errorf("states differ:\n%s\n%s", jsonOf(first.State), jsonOf(second.State))
	}
	if second.State.Family.Capability("notes/fail").Class != deploy.Write {
		t.Errorf("the class changed with the registry after the build")
	}
	if len(d.events(audit.ProviderRegistered)) != 1 {
		t.Errorf("the registry was recorded again")
	}
}

func TestIsDescribed(t *testing.T) {
	s := &TurnState{Described: []string{"a/b", "c/d"}}
	for name, want := range map[string]bool{"a/b": true, "c/d": true, "a/c": false, "a": false, "": false} {
		if s.IsDescribed(name) != want {
			t.Errorf("IsDescribed(%q) = %v", name, !want)
		}
	}
	if (&TurnState{}).IsDescribed("a/b") {
		t.Errorf("an empty state described something")
	}
}

// TestStoreRoundTrip: a turn with no state loads nil; a saved state loads
// back as it was, its described names sorted, under the session's and
// turn's directory, and no temporary file is left behind.
func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := newStore(dir, &deploy.Turn{Session: "s1", Turn: "t1"})
	if s.dir != filepath.Join(dir, "sessions", "s1", "turns", "t1") || s.session != filepath.Join(dir, "sessions", "s1") {
		t.Errorf("store at %s, session %s", s.dir, s.session)
	}
	err := s.locked(func() error {
		st, err := s.load()
		if st != nil || err != nil {
			t.Errorf("no state yet: %+v, %v", st, err)
		}
		return s.save(&TurnState{Offered: true, Family: &present.Family{Exposure: present.Index, Capabilities: []present.Capability{{Name: "a/b", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, Described: []string{"z/z", "a/b"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != stateVersion || !st.Offered || strings.Join(st.Described, ",") != "a/b,z/z" || st.Family.Exposure != present.Index || string(st.Family.Capabilities[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("loaded %+v", st)
	}
	entries, _ := os.ReadDir(s.dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "lock state.json" {
		t.Errorf("the turn's directory holds %v", names)
	}
	// The state is one line of JSON.
	data, _ := os.ReadFile(filepath.Join(s.dir, "state.json"))
	if strings.Count(string(data), "\n") != 1 || !strings.HasSuffix(string(data), "\n") {
		t.Errorf("state file:\n%s", data)
	}
}

// TestSayOnce: each unavailable provider is told once per session, across
// its turns; a damaged record of what was told tells again.
func TestSayOnce(t *testing.T) {
	dir := t.TempDir()
	t1 := newStore(dir, &deploy.Turn{Session: "s1", Turn: "t1"})
	t2 := newStore(dir, &deploy.Turn{Session: "s1", Turn: "t2"})
	other := newStore(dir, &deploy.Turn{Session: "s2", Turn: "t1"})
	a, b := outcome.Unavailable{Provider: "a"}, outcome.Unavailable{Provider: "b"}
	providers := func(us []outcome.Unavailable, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, u := range us {
			ids = append(ids, u.Provider)
		}
		return strings.Join(ids, ",")
	}
	if got := providers(t1.sayOnce(nil)); got != "" {
		t.Errorf("nothing to tell: %q", got)
	}
	if got := providers(t1.sayOnce([]outcome.Unavailable{a})); got != "a" {
		t.Errorf("first: %q", got)
	}
	if got := providers(t2.sayOnce([]outcome.Unavailable{a, b})); got != "b" {
		t.Errorf("another turn of the session: %q", got)
	}
	if got := providers(t1.sayOnce([]outcome.Unavailable{b, a})); got != "" {
		t.Errorf("told again: %q", got)
	}
	if got := providers(other.sayOnce([]outcome.Unavailable{a, b})); got != "a,b" {
		t.Errorf("another session: %q", got)
	}
	os.WriteFile(filepath.Join(t1.session, "told.json"), []byte("garbage"), 0o600)
	if got := providers(t1.sayOnce([]outcome.Unavailable{a})); got != "a" {
		t.Errorf("after a damaged record: %q", got)
	}
}

// TestTurnStateContextText: the harness's block is the family's, or the
// reason nothing is offered.
func TestTurnStateContextText(t *testing.T) {
	fam := &present.Family{Exposure: present.Whole, Capabilities: []present.Capability{{Name: "a/b", Class: deploy.Read, Description: "Reads", InputSchema: json.RawMessage(`{}`)}}}
	offered := &TurnState{Offered: true, Family: fam}
	if got, want := offered.ContextText(), present.ContextText(fam, ""); got != want || !strings.Contains(got, "a/b  READ   Reads") {
		t.Errorf("offered:\n%s", got)
	}
	nothing := &TurnState{Why: "no registered provider applies to it"}
	if got := nothing.ContextText(); got != "No external capabilities are offered to this turn: no registered provider applies to it.\n" {
		t.Errorf("nothing: %q", got)
	}
}
