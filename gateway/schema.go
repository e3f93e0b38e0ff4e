package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"spear/internal/strictjson"

	"github.com/xeipuuv/gojsonschema"
)

// parseArguments reads an invocation's arguments: exactly one JSON object,
// with no key twice. Omitted arguments are {}.
func parseArguments(text string) (map[string]json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return map[string]json.RawMessage{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("the arguments hold more than one JSON value; give exactly one object")
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("the arguments must be one JSON object, found %s", strictjson.TypeName(raw))
	}
	if err := strictjson.CheckDuplicateKeys(raw); err != nil {
		return nil, fmt.Errorf("the arguments are ambiguous: %v", err)
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	return args, nil
}

// unsupportedKeywords change what validates under 2019-09 and 2020-12, and
// the validator (draft-07) does not know them: a schema that uses one is
// refused rather than checked more loosely than it says.
var unsupportedKeywords = []string{
	"prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
	"dependentSchemas", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
	"minContains", "maxContains",
}

// validator checks arguments against one tool's input schema.
type validator struct {
	declared map[string]bool
	schema   *gojsonschema.Schema
}

// compileSchema prepares a tool's input schema. Schemas for draft-04, -06
// and -07 are compiled as they say; 2019-09 and 2020-12 schemas (what the
// official SDKs emit) are compiled as draft-07 when they use nothing whose
// meaning differs; anything else is an error, and the call is refused.
func compileSchema(raw json.RawMessage) (*validator, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, errors.New("its input schema is not a JSON object")
	}
	draft := gojsonschema.Draft7
	if s, ok := doc["$schema"].(string); ok {
		switch {
		case strings.Contains(s, "draft-04"):
			draft = gojsonschema.Draft4
		case strings.Contains(s, "draft-06"):
			draft = gojsonschema.Draft6
		case strings.Contains(s, "draft-07"):
		case strings.Contains(s, "2019-09"), strings.Contains(s, "2020-12"):
			if kw := findKeyword(doc, unsupportedKeywords); kw != "" {
				return nil, fmt.Errorf("its input schema uses %q, which the validator does not support", kw)
			}
		default:
			return nil, fmt.Errorf("its input schema names the unknown dialect %q", s)
		}
		delete(doc, "$schema")
	}
	v := &validator{declared: map[string]bool{}}
	if props, ok := doc["properties"].(map[string]any); ok {
		for k := range props {
			v.declared[k] = true
		}
	}
	sl := gojsonschema.NewSchemaLoader()
	sl.Draft = draft
	sl.AutoDetect = false
	sl.Validate = true
	schema, err := sl.Compile(gojsonschema.NewGoLoader(doc))
	if err != nil {
		return nil, fmt.Errorf("its input schema cannot be compiled: %v", err)
	}
	v.schema = schema
	return v, nil
}

// findKeyword returns the first of keywords used as a key anywhere in v.
func findKeyword(v any, keywords []string) string {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, kw := range keywords {
				if k == kw {
					return kw
				}
			}
			if kw := findKeyword(t[k], keywords); kw != "" {
				return kw
			}
		}
	case []any:
		for _, e := range t {
			if kw := findKeyword(e, keywords); kw != "" {
				return kw
			}
		}
	}
	return ""
}

// Check refuses a property the schema does not declare, then validates.
// The error's text is the validator's.
func (v *validator) Check(args map[string]json.RawMessage) error {
	var undeclared []string
	for k := range args {
		if !v.declared[k] {
			undeclared = append(undeclared, k)
		}
	}
	if len(undeclared) > 0 {
		sort.Strings(undeclared)
		known := make([]string, 0, len(v.declared))
		for k := range v.declared {
			known = append(known, k)
		}
		sort.Strings(known)
		allowed := "it declares none"
		if len(known) > 0 {
			allowed = "it declares " + strings.Join(known, ", ")
		}
		return fmt.Errorf("the schema does not declare %s (%s)", quoteList(undeclared), allowed)
	}
	doc, _ := json.Marshal(args)
	res, err := v.schema.Validate(gojsonschema.NewBytesLoader(doc))
	if err != nil {
		return fmt.Errorf("the arguments could not be validated: %v", err)
	}
	if res.Valid() {
		return nil
	}
	var msgs []string
	for _, e := range res.Errors() {
		msgs = append(msgs, e.String())
	}
	return errors.New(strings.Join(msgs, "; "))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
