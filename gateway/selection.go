package gateway

import (
	"fmt"
	"path/filepath"

	"spear/deploy"
)

// Offer says what kind of capabilities a turn may be offered at all.
type Offer struct {
	// Task is the task class providers must serve; empty when the turn is
	// offered nothing.
	Task deploy.Task
	// ReadOnly limits the turn to READ capabilities (general questions).
	ReadOnly bool
	// Why says why nothing is offered.
	Why string
	// EarlierRuntime is true when the turn runs on the earlier runtime,
	// which has no gateway.
	EarlierRuntime bool
}

// turnOffer applies the table of what each turn is offered (docs/design.md,
// "The turn").
func turnOffer(t *deploy.Turn) Offer {
	if t.StandardBound && !t.ConcernsStandard && (t.Class == deploy.ClassImplementation || t.Class == deploy.ClassMixed) {
		return Offer{EarlierRuntime: true, Why: "this change in a standard-bound session does not concern the standard, so it runs on the earlier runtime, which has no capability gateway"}
	}
	switch t.Class {
	case deploy.ClassImplementation:
		return Offer{Task: deploy.TaskImplementation}
	case deploy.ClassMixed:
		if t.Pass == deploy.PassImplementation {
			return Offer{Task: deploy.TaskMixed}
		}
		return Offer{Why: fmt.Sprintf("the %s pass of a mixed change is never offered external capabilities", t.Pass)}
	case deploy.ClassGeneral:
		return Offer{Task: deploy.TaskGeneral, ReadOnly: true}
	default:
		return Offer{Why: "a question about a bound standard is never offered external capabilities"}
	}
}

// Decision is whether one registered provider reaches a turn, and why not.
type Decision struct {
	Provider *deploy.Provider
	Admitted bool
	Reason   string
}

// Selection is what a turn is offered before any provider is started.
type Selection struct {
	Turn      *deploy.Turn
	Project   *deploy.Project // nil for an unregistered tree
	Workspace string          // resolved
	Given     string          // the workspace as the turn file gives it, absolute
	Offer     Offer
	Decisions []Decision
}

// Admitted returns the admitted providers, in registry order.
func (s *Selection) Admitted() []*deploy.Provider {
	var out []*deploy.Provider
	for _, d := range s.Decisions {
		if d.Admitted {
			out = append(out, d.Provider)
		}
	}
	return out
}

// selectProviders decides, for every registered provider, whether it reaches the
// turn.
func selectProviders(reg *deploy.Registry, projects *deploy.Projects, t *deploy.Turn) *Selection {
	proj, ws, conflict := projects.Resolve(t.Workspace)
	given, err := filepath.Abs(t.Workspace)
	if err != nil {
		given = filepath.Clean(t.Workspace)
	}
	sel := &Selection{Turn: t, Project: proj, Workspace: ws, Given: given, Offer: turnOffer(t)}
	if sel.Offer.Task != "" && conflict != nil {
		sel.Offer = Offer{Why: conflict.Error() + ", so no provider reaches it"}
	} else if sel.Offer.Task != "" && proj == nil {
		sel.Offer = Offer{Why: "the workspace " + ws + " is in no registered project, so no provider reaches it"}
	}
	for _, p := range reg.Providers {
		sel.Decisions = append(sel.Decisions, decide(p, sel))
	}
	return sel
}

func decide(p *deploy.Provider, sel *Selection) Decision {
	no := func(why string) Decision { return Decision{Provider: p, Reason: why} }
	if sel.Offer.Task == "" {
		return no(sel.Offer.Why)
	}
	if !p.Enabled {
		return no("the entry is disabled (enabled: false)")
	}
	if ok, why := p.Scope.Covers(sel.Project, sel.Given, sel.Workspace); !ok {
		return no(why)
	}
	if !p.Serves(sel.Offer.Task) {
		return no(fmt.Sprintf("its tasks do not include %s", sel.Offer.Task))
	}
	if sel.Offer.ReadOnly && len(p.Read) == 0 {
		return no("general questions get READ capabilities only, and its entry names no tool in read")
	}
	return Decision{Provider: p, Admitted: true}
}
