package procs

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// CatchEnding calls onSignal once for an ending signal and remembers it;
// after stop, nothing is caught.
func TestCatchEnding(t *testing.T) {
	ending := EndingSignals()
	if len(ending) == 0 {
		t.Skip("this process was started ignoring every ending signal")
	}
	sig := ending[len(ending)-1].(syscall.Signal)
	called := make(chan struct{})
	caught, stop := CatchEnding(func() { close(called) })
	defer stop()
	if caught() != nil {
		t.Fatal("caught before any signal")
	}
	syscall.Kill(os.Getpid(), sig)
	select {
	case <-called:
	case <-time.After(5 * time.Second):
		t.Fatalf("%v was not caught", sig)
	}
	if caught() != sig {
		t.Errorf("caught %v, want %v", caught(), sig)
	}
	stop()
	stop() // twice is fine
}
