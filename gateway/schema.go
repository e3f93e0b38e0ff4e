package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"spear/internal/strictjson"

	"github.com/xeipuuv/gojsonschema"
)

// parseArguments reads an invocation's arguments: exactly one JSON object,
// with no key twice, nested at most maxArgumentsDepth levels, its numbers
// bounded as a schema's are. Omitted arguments are {}.
func parseArguments(text string) (map[string]json.RawMessage, error) {
	if len(text) > maxArgumentsBytes {
		return nil, fmt.Errorf("the arguments take %s, over the %s a call's arguments may take", byteSize(len(text)), byteSize(maxArgumentsBytes))
	}
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
	var whole any
	numbers := json.NewDecoder(bytes.NewReader(raw))
	numbers.UseNumber()
	if err := numbers.Decode(&whole); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	if err := vetJSON(whole, 0, maxArgumentsDepth, "the arguments"); err != nil {
		return nil, err
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
	graph    *schemaGraph
}

// schemaTime bounds compiling a schema, and checking arguments against it,
// each. The bounds in vetSchema make both quick; this one holds whatever
// they miss.
const schemaTime = 2 * time.Second

// limitError is a check the gateway will not run because it would take too
// long; the arguments may be fine.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// compileSchema prepares a tool's input schema. Schemas for draft-04, -06
// and -07 are compiled as they say; 2019-09 and 2020-12 schemas (what the
// official SDKs emit) are compiled as draft-07 when they use nothing whose
// meaning differs; anything else is an error, and the call is refused. The
// schema is vetted first (vetSchema), and the validator only ever sees
// this one document in memory.
func compileSchema(raw json.RawMessage) (*validator, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("its input schema takes %s, over the %s a schema may take", byteSize(len(raw)), byteSize(MaxSchemaBytes))
	}
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
	graph, err := vetSchema(doc)
	if err != nil {
		return nil, err
	}
	v := &validator{declared: map[string]bool{}, graph: graph}
	if props, ok := doc["properties"].(map[string]any); ok {
		for k := range props {
			v.declared[k] = true
		}
	}
	vetted, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("its input schema cannot be compiled: %v", err)
	}
	err = withinTime(schemaTime, "compiling its input schema", func() error {
		meta, err := metaSchemas[draft]()
		if err != nil {
			return fmt.Errorf("the validator's own meta-schema cannot be compiled: %v", err)
		}
		res, err := meta.Validate(memoryLoader(vetted))
		if err != nil {
			return fmt.Errorf("its input schema cannot be compiled: %v", err)
		}
		if !res.Valid() {
			var msgs []string
			for _, e := range res.Errors() {
				msgs = append(msgs, e.String())
			}
			return fmt.Errorf("its input schema cannot be compiled: %s", strings.Join(msgs, "; "))
		}
		sl := gojsonschema.NewSchemaLoader()
		sl.Draft = draft
		sl.AutoDetect = false
		sl.Validate = false // done above, against the meta-schema in memory
		schema, err := sl.Compile(memoryLoader(vetted))
		if err != nil {
			return fmt.Errorf("its input schema cannot be compiled: %v", err)
		}
		v.schema = schema
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// maxOverrun bounds the checks that overran their time and still run:
// gojsonschema cannot be stopped, and in a long-lived process (the
// session's) each overrun would otherwise keep a goroutine busy for as
// long as it takes. Past the bound, new checks are refused at once.
const maxOverrun = 4

// overrun counts the checks that overran their time and still run.
var overrun atomic.Int32

// withinTime runs fn on its own goroutine and waits at most limit for it.
// A panic in fn is an error; what names the work in messages. While
// maxOverrun earlier checks that overran still run, fn is not started.
func withinTime(limit time.Duration, what string, fn func() error) error {
	if n := overrun.Load(); n >= maxOverrun {
		return &limitError{fmt.Sprintf("%s was not started: %d earlier checks that overran their %s are still running", what, n, seconds(limit))}
	}
	done := make(chan error, 1)
	var mu sync.Mutex
	finished, abandoned := false, false
	go func() {
		defer func() { // runs last, once done has its error
			mu.Lock()
			finished = true
			if abandoned {
				overrun.Add(-1)
			}
			mu.Unlock()
		}()
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("%s failed: %v", what, r)
			}
		}()
		done <- fn()
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	mu.Lock()
	defer mu.Unlock()
	if finished { // just in time
		return <-done
	}
	abandoned = true
	overrun.Add(1)
	return &limitError{fmt.Sprintf("%s did not finish within %s", what, seconds(limit))}
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
	var instance any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	dec.Decode(&instance)
	if n := v.graph.checkSteps(instance, maxCheckSteps); n > maxCheckSteps {
		return &limitError{fmt.Sprintf("checking these arguments would apply its subschemas more than %d times", maxCheckSteps)}
	}
	var res *gojsonschema.Result
	err := withinTime(schemaTime, "checking the arguments", func() error {
		var err error
		res, err = v.schema.Validate(memoryLoader(doc))
		return err
	})
	var le *limitError
	if errors.As(err, &le) {
		return err
	}
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
