package procs

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// EndingSignals are the signals that end a command (SIGINT, SIGTERM,
// SIGHUP) which this process was not started ignoring: one it was started
// ignoring (SIGINT in a background job) stays ignored.
func EndingSignals() []os.Signal {
	var out []os.Signal
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			out = append(out, sig)
		}
	}
	return out
}

// Reraise ends the process by sig, as it would have ended had sig not been
// caught: its parent sees it killed by sig. It does not return.
func Reraise(sig os.Signal) {
	signal.Reset(sig)
	if s, ok := sig.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), s)
		time.Sleep(time.Second) // the signal ends the process; if not, so does this
		os.Exit(128 + int(s))
	}
	os.Exit(1)
}
