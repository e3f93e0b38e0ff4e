package procs

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
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

// CatchEnding catches the ending signals (EndingSignals) until stop is
// called: at the first, it remembers it and calls onSignal, once, from a
// goroutine of its own. caught says which signal came, or nil.
func CatchEnding(onSignal func()) (caught func() os.Signal, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, EndingSignals()...)
	var got atomic.Value
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			got.Store(sig)
			onSignal()
		case <-done:
		}
	}()
	var once sync.Once
	caught = func() os.Signal {
		sig, _ := got.Load().(os.Signal)
		return sig
	}
	stop = func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
	}
	return caught, stop
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
