package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/mattn/go-isatty"
)

// progress shows "what…" on a terminal's stderr when the work takes more
// than a moment, and erases it when stop is called. Off a terminal it
// prints nothing.
func progress(e *env, what string) (stop func()) {
	f, ok := e.stderr.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-done:
			return
		case <-time.After(300 * time.Millisecond):
		}
		fmt.Fprintf(f, "spear-capability: %s…", what)
		<-done
		fmt.Fprint(f, "\r\033[K")
	}()
	return func() { close(done); <-finished }
}
