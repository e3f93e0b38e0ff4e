package gateway

import (
	"strings"
	"testing"

	"spear/deploy"
)

// TestDecideWrite covers every cell of the write policy × permission mode
// table, and values outside it.
func TestDecideWrite(t *testing.T) {
	for _, tc := range []struct {
		policy deploy.WritePolicy
		mode   deploy.PermissionMode
		want   writeVerdict
		why    string
	}{
		{deploy.WriteRefuse, deploy.ModeAsk, writeRefused, "refuses every WRITE"},
		{deploy.WriteRefuse, deploy.ModeAuto, writeRefused, "refuses every WRITE"},
		{deploy.WriteRefuse, deploy.ModeReadOnly, writeRefused, "refuses every WRITE"},
		{deploy.WriteConfirm, deploy.ModeAsk, writeAsk, ""},
		{deploy.WriteConfirm, deploy.ModeAuto, writeApproved, "permission mode auto"},
		{deploy.WriteConfirm, deploy.ModeReadOnly, writeRefused, "read-only"},
		{deploy.WriteAllow, deploy.ModeAsk, writeApproved, "policy allow"},
		{deploy.WriteAllow, deploy.ModeAuto, writeApproved, "policy allow"},
		{deploy.WriteAllow, deploy.ModeReadOnly, writeRefused, "read-only"},
		{"", deploy.ModeAuto, writeRefused, "not one the gateway knows"},
		{deploy.WriteConfirm, "", writeRefused, "not one the gateway knows"},
		{"sometimes", deploy.ModeAsk, writeRefused, "not one the gateway knows"},
	} {
		got, why := decideWrite(tc.policy, tc.mode)
		if got != tc.want || why != tc.why && !(tc.why != "" && contains(why, tc.why)) {
			t.Errorf("%s × %s = %v (%q), want %v (%q)", tc.policy, tc.mode, got, why, tc.want, tc.why)
		}
	}
	for v, s := range map[writeVerdict]string{writeRefused: "refused", writeApproved: "approved", writeAsk: "ask"} {
		if v.String() != s {
			t.Errorf("%d.String() = %q", v, v.String())
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
