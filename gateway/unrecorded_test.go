package gateway

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestEndUnrecorded: a call whose end cannot be recorded (the trail can
// grow no more once its start is written: a full disk, a file size
// limit) has run; its result is delivered, with a word that its end is
// not recorded, and it is not called refused, which would hide a WRITE
// that took effect.
func TestEndUnrecorded(t *testing.T) {
	d := newDeployment(t)
	d.register(with(fake("notes"), "read", []string{"sleep"}))
	if st, _, errs := d.answer("list"); st != 0 {
		t.Fatalf("list: status %d: %s", st, errs)
	}
	trail := d.g.Settings.AuditFile
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	limited := make(chan struct{})
	go func() {
		defer close(limited)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			data, _ := os.ReadFile(trail)
			if bytes.Contains(data, []byte(`"outcome":"started"`)) {
				lim := unix.Rlimit{Cur: uint64(len(data)), Max: old.Max}
				if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
					t.Error(err)
				}
				return
			}
		}
		t.Error("the call's start was never recorded")
	}()
	st, out, errs := d.answer("invoke", "notes/sleep", `{"seconds": 0.5}`)
	<-limited
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if st != 0 || !strings.Contains(out, "BEGIN EXTERNAL CONTENT") {
		t.Fatalf("status %d, stdout %q, stderr %q", st, out, errs)
	}
	if !strings.Contains(errs, "the call ran, but its end could not be recorded in the audit trail") || strings.Contains(errs, "refused") {
		t.Errorf("stderr %q", errs)
	}
	if strings.Contains(errs, trail) {
		t.Errorf("the turn is told where the trail is: %q", errs)
	}
	invoked := d.events("capability_invoked")
	if len(invoked) != 1 || invoked[0].Fields["outcome"] != "started" {
		t.Errorf("capability_invoked %v", invoked)
	}
}
