package deploy

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"spear/internal/strictjson"
)

// Turn is the turn file the harness writes.
type Turn struct {
	Session          string         `json:"session"`
	Turn             string         `json:"turn"`
	Workspace        string         `json:"workspace"`
	Class            TurnClass      `json:"class"`
	Pass             Pass           `json:"pass"`
	StandardBound    bool           `json:"standard_bound"`
	ConcernsStandard bool           `json:"concerns_standard"`
	PermissionMode   PermissionMode `json:"permission_mode"`
}

// TurnError reports a turn file that offers nothing, naming the field.
// Path is empty for a turn an operator previews by hand.
type TurnError struct {
	Path  string
	Field string
	Msg   string
}

func (e *TurnError) Error() string {
	where := "previewed turn"
	if e.Path != "" {
		where = "turn file " + e.Path
	}
	if e.Field == "" {
		return where + ": " + e.Msg
	}
	return fmt.Sprintf("%s: field %q: %s", where, e.Field, e.Msg)
}

// Problem is what is wrong, without the file's path: the harness's path is
// its own, and the turn is told only this.
func (e *TurnError) Problem() string {
	if e.Field == "" {
		return e.Msg
	}
	return fmt.Sprintf("field %q %s", e.Field, e.Msg)
}

var turnFields = []string{"session", "turn", "workspace", "class", "pass", "standard_bound", "concerns_standard", "permission_mode"}

// LoadTurn reads and strictly checks the turn file: an unknown field, a
// missing required field or a value outside the allowed ones is a
// *TurnError (or a *FileError for a file that is not JSON). An empty file is
// a missing one: the confinement creates it empty where the turn's shell
// could otherwise create it (Protected), until the harness writes it.
func LoadTurn(path string) (*Turn, error) {
	if path == "" {
		return nil, &TurnError{Msg: "SPEAR_TURN_FILE is not set, so this terminal is in no turn"}
	}
	data, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, &FileError{Path: path, Err: fmt.Errorf("%w: the file is empty (the harness has not written this turn's file yet)", fs.ErrNotExist)}
	}
	return ParseTurn(path, data)
}

// ParseTurn reads a turn file's content; path names it in errors.
func ParseTurn(path string, data []byte) (*Turn, error) {
	top, err := decodeObject(path, data)
	if err != nil {
		return nil, err
	}
	bad := func(field, format string, args ...any) error {
		return &TurnError{Path: path, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := &Turn{}
	for _, k := range keys {
		v := top[k]
		var target any
		switch k {
		case "session":
			target = &t.Session
		case "turn":
			target = &t.Turn
		case "workspace":
			target = &t.Workspace
		case "class":
			target = &t.Class
		case "pass":
			target = &t.Pass
		case "permission_mode":
			target = &t.PermissionMode
		case "standard_bound":
			target = &t.StandardBound
		case "concerns_standard":
			target = &t.ConcernsStandard
		default:
			return nil, bad(k, "unknown field; allowed: %s", strings.Join(turnFields, ", "))
		}
		if err := json.Unmarshal(v, target); err != nil {
			want := "a string"
			if k == "standard_bound" || k == "concerns_standard" {
				want = "true or false"
			}
			return nil, bad(k, "must be %s, found %s", want, strictjson.TypeName(v))
		}
	}
	if err := t.validate(path); err != nil {
		return nil, err
	}
	return t, nil
}

// validate checks the fields' values against the turn file's table
// (docs/design.md, "The turn").
func (t *Turn) validate(path string) error {
	bad := func(field, format string, args ...any) error {
		return &TurnError{Path: path, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	for _, f := range []struct{ name, val string }{{"session", t.Session}, {"turn", t.Turn}} {
		if f.val == "" {
			return bad(f.name, "missing")
		}
		if !validTurnID(f.val) {
			return bad(f.name, "%q is not a valid id: use up to 128 letters, digits, '.', '_' or '-'", f.val)
		}
	}
	switch {
	case t.Workspace == "":
		return bad("workspace", "missing; give the turn's workspace directory")
	case !filepath.IsAbs(t.Workspace):
		// Made absolute against whichever process read it first: a
		// harness that starts spear-term where the turn cd'ed would let
		// the turn pick its project.
		return bad("workspace", "%q is not an absolute path", t.Workspace)
	case HasDotDot(t.Workspace):
		return bad("workspace", "%q has a \"..\" in it, which a symlink before it would make mean another place; give the path without it", t.Workspace)
	}
	switch t.Class {
	case "":
		return bad("class", "missing; allowed: implementation, mixed, general, standard-question")
	case ClassImplementation, ClassGeneral, ClassStandardQuestion:
		if t.Pass != "" {
			return bad("pass", "is for mixed turns only; class %s takes no pass", t.Class)
		}
	case ClassMixed:
		switch t.Pass {
		case PassNormative, PassImplementation, PassCompliance:
		case "":
			return bad("pass", "missing; a mixed turn names its pass: normative, implementation or compliance")
		default:
			return bad("pass", "%q is not a pass; allowed: normative, implementation, compliance", t.Pass)
		}
	default:
		return bad("class", "%q is not a class; allowed: implementation, mixed, general, standard-question", t.Class)
	}
	switch t.PermissionMode {
	case "":
		t.PermissionMode = ModeAsk
	case ModeAsk, ModeAuto, ModeReadOnly:
	default:
		return bad("permission_mode", "%q is not a permission mode; allowed: ask, auto, read-only", t.PermissionMode)
	}
	return nil
}

// PreviewTurn is a turn that an operator describes by hand, to see what it
// would be offered; it is checked like a turn file.
func PreviewTurn(workspace string, class TurnClass, pass Pass) (*Turn, error) {
	if wd, err := os.Getwd(); err == nil && workspace != "" && !filepath.IsAbs(workspace) {
		// the operator's own working directory, given by hand; not
		// cleaned, so that a ".." in it is refused as in a turn file
		workspace = wd + "/" + workspace
	}
	t := &Turn{Session: "preview", Turn: "preview", Workspace: workspace, Class: class, Pass: pass, PermissionMode: ModeAsk}
	if err := t.validate(""); err != nil {
		return nil, err
	}
	return t, nil
}
