package termesc

import "testing"

func TestLen(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"\x1b", 1},
		{"\x1b[1;31mred", 7},
		{"\x1b[1;31", 6},             // unterminated: to the end
		{"\x1b[1\nx", 3},             // a control character ends it
		{"\x1b[1é", 3},               // so does a byte that is not ASCII
		{"\x1b]0;title\x07rest", 10}, // OSC up to BEL
		{"\x1b]8;;u\x1b\\link", 8},   // up to ESC \
		{"\x1b]0;t\x1b[0m", 5},       // a new ESC ends an unterminated one
		{"\x1b]0;t\nnext", 5},
		{"\x1bPdcs", 5},
		{"\x1b(Bx", 3}, // intermediate, final
		{"\x1b7saved", 2},
		{"\x1bé", 1}, // the letter stays
		{"\x1b(é", 2},
	} {
		if got := Len(tc.in); got != tc.want {
			t.Errorf("Len(%q) = %d, want %d", tc.in, got, tc.want)
		}
		if got := Len([]byte(tc.in)); got != tc.want {
			t.Errorf("Len([]byte(%q)) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzLen: a sequence is at least ESC itself, never past the end, and
// never ends inside a character that is not ASCII.
func FuzzLen(f *testing.F) {
	for _, s := range []string{"\x1b[31m", "\x1b]0;t\x07", "\x1b(B", "\x1bé", "\x1b[1é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		s := "\x1b" + rest
		n := Len(s)
		if n < 1 || n > len(s) {
			t.Fatalf("Len(%q) = %d", s, n)
		}
		if n < len(s) && s[n]&0xc0 == 0x80 && s[n-1] >= 0x80 {
			t.Fatalf("Len(%q) = %d ends inside a character", s, n)
		}
	})
}
