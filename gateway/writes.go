package gateway

import "spear/deploy"

// writeVerdict is check 6's answer for a WRITE, before anyone is asked.
type writeVerdict int

// What a WRITE comes to under a write policy and a permission mode.
const (
	writeRefused  writeVerdict = iota // it does not run
	writeApproved                     // it runs; the policy or the mode approved it
	writeAsk                          // a person decides, through SPEAR_CONFIRM_COMMAND
)

func (v writeVerdict) String() string {
	switch v {
	case writeApproved:
		return "approved"
	case writeAsk:
		return "ask"
	default:
		return "refused"
	}
}

// decideWrite is the write policy × permission mode table of
// docs/design.md ("Checks on every call"): refuse never runs; allow runs
// unless the mode is read-only; confirm runs when the mode is auto, asks a
// person when it is ask, and never runs when it is read-only. It returns
// the verdict and, for a refusal or an approval, why in words.
func decideWrite(policy deploy.WritePolicy, mode deploy.PermissionMode) (writeVerdict, string) {
	switch {
	case policy == deploy.WriteRefuse:
		return writeRefused, "the provider's write policy refuses every WRITE"
	case mode == deploy.ModeReadOnly:
		return writeRefused, "this session's permission mode is read-only"
	case policy == deploy.WriteAllow:
		return writeApproved, "policy allow"
	case policy == deploy.WriteConfirm && mode == deploy.ModeAuto:
		return writeApproved, "permission mode auto"
	case policy == deploy.WriteConfirm && mode == deploy.ModeAsk:
		return writeAsk, ""
	default:
		// A policy or mode outside the tables never runs a WRITE.
		return writeRefused, "the write policy or permission mode is not one the gateway knows"
	}
}
