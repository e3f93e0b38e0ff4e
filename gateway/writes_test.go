package gateway

import (
	"strings"
	"testing"

	"spear/audit"
	"spear/deploy"
	"spear/outcome"
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

// TestWritesEndToEnd: a WRITE runs where the provider's write policy and
// the session's permission mode both allow it, as the registry says at the
// time of the call; the trail says who approved it.
func TestWritesEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		policy   deploy.WritePolicy
		mode     deploy.PermissionMode
		approved string // "" when refused
		why      string
	}{
		{deploy.WriteRefuse, deploy.ModeAuto, "", "notes/echo is a WRITE, and the provider's write policy refuses every WRITE"},
		{deploy.WriteRefuse, deploy.ModeAsk, "", "notes/echo is a WRITE, and the provider's write policy refuses every WRITE"},
		{deploy.WriteAllow, deploy.ModeAsk, "policy allow", ""},
		{deploy.WriteAllow, deploy.ModeAuto, "policy allow", ""},
		{deploy.WriteAllow, deploy.ModeReadOnly, "", "notes/echo is a WRITE, and this session's permission mode is read-only"},
		{deploy.WriteConfirm, deploy.ModeAuto, "permission mode auto", ""},
		{deploy.WriteConfirm, deploy.ModeReadOnly, "", "notes/echo is a WRITE, and this session's permission mode is read-only"},
		{deploy.WriteConfirm, deploy.ModeAsk, "", "notes/echo is a WRITE that needs a person's confirmation, and no way to ask is configured; the operator sets SPEAR_CONFIRM_COMMAND to a program that asks and exits 0 to approve"},
	} {
		t.Run(string(tc.policy)+"×"+string(tc.mode), func(t *testing.T) {
			d := newDeployment(t)
			d.register(with(fake("notes"), "write", tc.policy))
			d.writeTurn(map[string]any{"permission_mode": tc.mode})
			st, out, errs := d.answer("invoke", "notes/echo", `{"text": "x"}`)
			if tc.approved == "" {
				if st != outcome.ExitRefused || out != "" || errs != "spear-capability: refused: "+tc.why+"\n" {
					t.Errorf("%d %q %q", st, out, errs)
				}
				wantField(t, d.lastEvent(audit.CapabilityRefused), "why", jsonOf(tc.why))
				if n := d.connects.Load(); n != 1 {
					t.Errorf("a refused WRITE started its provider: %d starts", n)
				}
				return
			}
			if st != outcome.ExitOK || !strings.Contains(out, `echo called with {"text":"x"}`) {
				t.Fatalf("%d %q %q", st, out, errs)
			}
			wantField(t, d.lastEvent(audit.CapabilityInvoked), "approved_by", jsonOf(tc.approved))
		})
	}
}

// TestWritePolicyReadAfresh: the write policy of a call is the registry's
// at the time of the call.
func TestWritePolicyReadAfresh(t *testing.T) {
	d := newDeployment(t)
	d.register(with(fake("notes"), "write", "allow"))
	if st, _, errs := d.answer("invoke", "notes/echo", "{}"); st != outcome.ExitOK {
		t.Fatalf("allowed: %d %q", st, errs)
	}
	d.register(with(fake("notes"), "write", "refuse"))
	if st, _, errs := d.answer("invoke", "notes/echo", "{}"); st != outcome.ExitRefused || !strings.Contains(errs, "write policy refuses every WRITE") {
		t.Errorf("refused since: %d %q", st, errs)
	}
	// A registry that cannot be read refuses a WRITE; one without the
	// provider too.
	d.writeFile(d.g.Settings.CapabilitiesFile, "{")
	if st, _, errs := d.answer("invoke", "notes/echo", "{}"); st != outcome.ExitRefused || errs != "spear-capability: refused: notes/echo is a WRITE, and the provider registry cannot be read to check its write policy\n" {
		t.Errorf("unreadable registry: %d %q", st, errs)
	}
	d.register()
	if st, _, errs := d.answer("invoke", "notes/echo", "{}"); st != outcome.ExitRefused || errs != "spear-capability: refused: notes/echo is a WRITE, and its provider is no longer registered\n" {
		t.Errorf("removed: %d %q", st, errs)
	}
	if n := d.connects.Load(); n != 2 {
		t.Errorf("%d starts: a build and one call", n)
	}
}
