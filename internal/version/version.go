// Package version says which version of SPEAR this binary is, from the
// build information the Go toolchain records.
package version

import "runtime/debug"

// String returns the main module's version as the build recorded it, or
// "devel" for a build from a work tree.
func String() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
