// Package termesc measures terminal escape sequences, so that text from
// outside can have them removed whole before a person or a turn reads it.
// present cleans provider text with it and mcp the sample of a server's
// stray stdout; mcp cannot import present, which imports mcp.
package termesc

// Len is the length of the escape sequence at the start of s, which begins
// with ESC: a control sequence (ESC [, parameters, a final byte), a control
// string (ESC ] P ^ _ X, up to BEL or ESC \), ESC with intermediate bytes
// and a final byte (ESC ( B), ESC and the ASCII character after it, or ESC
// alone when what follows is not ASCII, which stays as text.
func Len[T ~string | ~[]byte](s T) int {
	if len(s) < 2 || s[1] >= 0x80 {
		return 1
	}
	switch s[1] {
	case '[':
		return 2 + CSILen(s[2:])
	case ']', 'P', '^', '_', 'X':
		return 2 + StringLen(s[2:])
	}
	if s[1] >= 0x20 && s[1] <= 0x2f { // intermediate bytes, then a final byte
		j := 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] < 0x80 {
			j++
		}
		return j
	}
	return 2
}

// CSILen is the length of a control sequence's parameters and final byte,
// s starting after its introducer (ESC [ or the C1 CSI). It stops before a
// byte that cannot belong to one (a control character, or one that is not
// ASCII), so that text after a broken sequence stays.
func CSILen[T ~string | ~[]byte](s T) int {
	for j := 0; j < len(s); j++ {
		switch c := s[j]; {
		case c >= 0x40 && c <= 0x7e:
			return j + 1
		case c < 0x20 || c > 0x7e:
			return j
		}
	}
	return len(s)
}

// StringLen is the length of a control string (OSC, DCS and the like) up to
// and including its terminator (BEL or ESC \), s starting after its
// introducer; an unterminated one ends before ESC or a line's end.
func StringLen[T ~string | ~[]byte](s T) int {
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case 0x07:
			return j + 1
		case 0x1b:
			if j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
			return j
		case '\n':
			return j
		}
	}
	return len(s)
}
