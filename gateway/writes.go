package gateway

import "spear/deploy"

// WriteVerdict is check 6's answer for a WRITE, before anyone is asked.
type WriteVerdict int

// What a WRITE comes to under a write policy and a permission mode.
const (
	WriteRefused  WriteVerdict = iota // it does not run
	WriteApproved                     // it runs; the policy or the mode approved it
	WriteAskOne                       // a person decides, through SPEAR_CONFIRM_COMMAND
)

func (v WriteVerdict) String() string {
	switch v {
	case WriteApproved:
		return "approved"
	case WriteAskOne:
		return "ask"
	default:
		return "refused"
	}
}

// DecideWrite is the write policy × permission mode table of
// docs/design.md ("Checks on every call"): refuse never runs; allow runs
// unless the mode is read-only; confirm runs when the mode is auto, asks a
// person when it is ask, and never runs when it is read-only. It returns
// the verdict and, for a refusal or an approval, why in words.
func DecideWrite(policy deploy.WritePolicy, mode deploy.PermissionMode) (WriteVerdict, string) {
	switch {
	case policy == deploy.WriteRefuse:
		return WriteRefused, "the provider's write policy refuses every WRITE"
	case mode == deploy.ModeReadOnly:
		return WriteRefused, "this session's permission mode is read-only"
	case policy == deploy.WriteAllow:
		return WriteApproved, "policy allow"
	case policy == deploy.WriteConfirm && mode == deploy.ModeAuto:
		return WriteApproved, "permission mode auto"
	case policy == deploy.WriteConfirm && mode == deploy.ModeAsk:
		return WriteAskOne, ""
	default:
		// A policy or mode outside the tables never runs a WRITE.
		return WriteRefused, "the write policy or permission mode is not one the gateway knows"
	}
}
