package harness

import (
	"fmt"

	"spear/shellparse"
)

// Classify classifies a submission as spear-term must: a known wrapper by
// the model's text inside it (the wrapper's own commands are the
// harness's), anything else whole (shellparse.Classify). The match is
// non-nil for a known wrapper. A submission that mentions the command and
// looks like a harness's wrapper that is not known exactly is refused,
// saying so: it is never run.
func Classify(src string) (shellparse.Verdict, *Match) {
	if m := Find(src); m != nil {
		v := shellparse.Classify(m.Model)
		if v.Kind == shellparse.Refused {
			// The model's text is what was refused: the trail keeps it,
			// not the wrapper's start (Codex's alone is 38 KB).
			v.Text = m.Model
			r := *v.Refusal
			r.Why = fmt.Sprintf("%s (in the model's command, inside %s's wrapper %s)", r.Why, m.Wrapper.Harness, m.Wrapper.Name)
			v.Refusal = &r
		}
		return v, m
	}
	v := shellparse.Classify(src)
	if v.Kind == shellparse.Refused && v.Refusal != nil {
		if h := Guess(src); h != "" {
			r := *v.Refusal
			r.Why = fmt.Sprintf("%s (the submission looks like %s's wrapper around the model's command, but not one of the wrappers spear-term knows: %s; a newer spear-term may know it)", r.Why, h, knownOf(h))
			v.Refusal = &r
		}
	}
	return v, nil
}

// knownOf lists the known wrappers of harness h, with their versions.
func knownOf(h string) string {
	s := ""
	for _, w := range Known {
		if w.Harness != h {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += w.Name + " (" + w.Harness + " " + w.Version + ")"
	}
	if s == "" {
		return "none"
	}
	return s
}
