package deploy

// Name checks, written out rather than as regular expressions: they run at
// every start of spear-term, where compiling bounded repetitions costs more
// than the checks themselves.

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// validID: 1 to 64 of a-z 0-9 - _, starting with a letter (a provider id).
func validID(s string) bool {
	if len(s) < 1 || len(s) > 64 || !isLower(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isDigit(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// ValidEnvName reports whether s is a shell variable name, as a provider's
// env key must be.
func ValidEnvName(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isUpper(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// validTurnID: up to 128 of A-Z a-z 0-9 . _ -, starting with a letter or
// digit (so never "." or ".."), for session and turn ids used in paths.
func validTurnID(s string) bool {
	if len(s) < 1 || len(s) > 128 || !(isLower(s[0]) || isUpper(s[0]) || isDigit(s[0])) {
		return false
	}
	return allToolChars(s)
}

// ValidToolName: 1 to 128 of A-Z a-z 0-9 _ . - (a tool a turn can type).
func ValidToolName(s string) bool {
	return len(s) >= 1 && len(s) <= 128 && allToolChars(s)
}

func allToolChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isUpper(c) && !isDigit(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}
