// Package present turns what providers say and what the gateway decides
// into the text a turn or an operator reads: cleaned, bounded and framed.
//
// It owns the family as a turn is shown it (capabilities, unavailable
// providers, whole or index), the index, describe and context text, the
// frame around every result, and the wording of refusals. See
// docs/design.md, "Packages".
package present
