// Command spear-answer is the quick entry point spear-term hands an
// invocation to (package entry); installed beside spear-term and
// spear-capability, it is not run by hand.
package main

import (
	"os"

	"spear/entry"
)

func main() {
	os.Exit(entry.Main())
}
