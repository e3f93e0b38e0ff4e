package hostwire

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// Output keeps runs in the order written, one run for consecutive writes
// to one descriptor, and past maxParts runs joins the last run of the
// descriptor written: nothing is lost.
func TestOutput(t *testing.T) {
	var o Output
	io.WriteString(o.Writer(2), "note\n")
	io.WriteString(o.Writer(1), "a")
	io.WriteString(o.Writer(1), "b\n")
	io.WriteString(o.Writer(1), "")
	io.WriteString(o.Writer(2), "warn\n")
	if want := []Part{{2, 5}, {1, 3}, {2, 5}}; !slices.Equal(o.Parts(), want) {
		t.Errorf("parts %v, want %v", o.Parts(), want)
	}
	if got := string(o.Bytes()); got != "note\nab\nwarn\n" {
		t.Errorf("bytes %q", got)
	}

	var many Output
	total := 0
	for i := 0; i < 2*maxParts; i++ {
		n, _ := io.WriteString(many.Writer(1+i%2), "x")
		total += n
	}
	parts := many.Parts()
	sum := 0
	for _, p := range parts {
		sum += p.Len
	}
	if len(parts) != maxParts || sum != total || len(many.Bytes()) != total || strings.Trim(string(many.Bytes()), "x") != "" {
		t.Errorf("%d parts holding %d bytes of %d written", len(parts), sum, total)
	}
}
