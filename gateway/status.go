package gateway

// Exit statuses of an answered spear-capability command, as a turn sees them.
const (
	ExitOK          = 0 // a result, framed on stdout
	ExitToolError   = 1 // the tool reported an error (isError), framed on stdout
	ExitRefused     = 2 // refused: spear-capability: refused: <why>, on stderr
	ExitUnavailable = 3 // the provider is unavailable, on stderr
)
