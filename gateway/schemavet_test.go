package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xeipuuv/gojsonschema"
)

// refusingTransport fails every HTTP request, and counts them.
type refusingTransport struct{ n atomic.Int64 }

func (r *refusingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	r.n.Add(1)
	return nil, errors.New("no network in this test")
}

// noNetwork makes any HTTP request through the default client fail for the
// rest of the test, and returns how many were tried.
func noNetwork(t testing.TB) func() int64 {
	rt := &refusingTransport{}
	old := http.DefaultTransport
	http.DefaultTransport = rt
	t.Cleanup(func() { http.DefaultTransport = old })
	return func() int64 { return rt.n.Load() }
}

// hangingServer answers nothing, ever, and counts who asked.
func hangingServer(t *testing.T) (string, func() int64) {
	var n atomic.Int64
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		<-stop
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL, func() int64 { return n.Load() }
}

func chain(n int, link func(i int) string) string {
	defs := make([]string, n)
	for i := range defs {
		defs[i] = fmt.Sprintf(`"d%d": %s`, i, link(i))
	}
	return strings.Join(defs, ",")
}

// TestHostileSchemas: a provider's schema never makes the gateway fetch,
// read a file, recurse without end or work without bound; each is refused
// with its reason, quickly.
func TestHostileSchemas(t *testing.T) {
	url, asked := hangingServer(t)
	deep := strings.Repeat(`{"items":`, 70) + `{}` + strings.Repeat(`}`, 70)
	cases := map[string]string{
		`{"properties": {"q": {"$ref": "#/properties/q"}}}`: `refers to itself without end: #/properties/q → #/properties/q`,
		`{"$ref": "#"}`:              `refers to itself without end: # → #`,
		`{"allOf": [{"$ref": "#"}]}`: `refers to itself without end`,
		`{"properties": {"x": {"$ref": "#/definitions/a"}}, "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"anyOf": [{"not": {"$ref": "#/definitions/a"}}]}}}`: `refers to itself without end`,
		`{"properties": {"q": {"$ref": "` + url + `/s.json"}}}`:                                               `refers outside itself: "` + url + `/s.json"`,
		`{"properties": {"q": {"$ref": "file:///etc/passwd"}}}`:                                               `refers outside itself: "file:///etc/passwd"`,
		`{"properties": {"q": {"$ref": "s.json#/x"}}}`:                                                        `refers outside itself: "s.json#/x"`,
		`{"properties": {"q": {"$ref": "//evil.example/s"}}}`:                                                 `refers outside itself`,
		`{"properties": {"q": {"$ref": "#anchor"}}}`:                                                          `names an anchor`,
		`{"$id": "` + url + `/", "properties": {"q": {"$ref": "#/definitions/s"}}, "definitions": {"s": {}}}`: `sets $id`,
		`{"id": "http://example.com/s", "properties": {}}`:                                                    `sets id "http://example.com/s"`,
		// an $id in data the validator walks could stand for a reference
		`{"x-data": {"$id": "#/definitions/a", "$ref": "#/definitions/a"}, "definitions": {"a": {}}, "properties": {"q": {"$ref": "#/definitions/a"}}}`: `sets $id "#/definitions/a" (at #/x-data)`,
		`{"properties": {"q": {"$ref": "#/required/0"}}, "required": ["q"]}`:                                                                            `which is not a schema`,
		`{"properties": {"n": {"type": "number", "minimum": 1e999999}}}`:                                                                                `holds the number 1e999999, which is too long or too large`,
		`{"properties": {"n": {"type": "number", "minimum": 1` + strings.Repeat("0", 120) + `}}}`:                                                       `too long or too large`,
		deep: `nests deeper than 64 levels`,
		`{"properties": {"x": {"$ref": "#/definitions/d0"}}, "definitions": {` + chain(300, func(i int) string { return fmt.Sprintf(`{"$ref": "#/definitions/d%d"}`, i+1) }) + `, "d300": {}}}`: `more than 256 references and combinations`,
		`{"properties": {"q": {"type": "string", "description": "` + strings.Repeat("x", 70<<10) + `"}}}`:                                                                                       `takes 70`,
	}
	for schema, want := range cases {
		start := time.Now()
		_, err := compileSchema(json.RawMessage(schema))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.120s: %v, want %q", schema, err, want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%.120s: took %s", schema, d)
		}
	}
	if n := asked(); n != 0 {
		t.Errorf("the schema server was asked %d times", n)
	}
}

// TestSchemasThatStay: what looks like a reference or an identifier but is
// a name or data is fine, and so is a schema that refers to itself through
// a member.
func TestSchemasThatStay(t *testing.T) {
	for schema, args := range map[string]string{
		`{"type": "object", "properties": {"id": {"type": "string"}, "$ref": {"type": "string"}, "$id": {"type": "integer"}}}`:          `{"id": "x", "$ref": "y", "$id": 3}`,
		`{"type": "object", "properties": {"u": {"type": "object", "default": {"id": "abc"}, "examples": [{"$id": "http://x"}]}}}`:      `{"u": {}}`,
		`{"type": "object", "properties": {"e": {"enum": [{"$ref": "http://x"}, {"id": "y"}]}}}`:                                        `{"e": {"id": "y"}}`,
		`{"type": "object", "properties": {"child": {"$ref": "#"}, "name": {"type": "string"}}}`:                                        `{"child": {"child": {"name": "leaf"}}}`,
		`{"type": "object", "properties": {"a/b": {"type": "string"}, "c": {"$ref": "#/properties/a~1b"}}}`:                             `{"c": "ok"}`,
		`{"type": "object", "properties": {"t": {"$ref": "#/$defs/t"}}, "$defs": {"t": {"type": "boolean"}}}`:                           `{"t": true}`,
		`{"type": "object", "properties": {"l": {"type": "array", "items": [{"type": "string"}, {"$ref": "#/properties/l/items/0"}]}}}`: `{"l": ["a", "b"]}`,
	} {
		v, err := compileSchema(json.RawMessage(schema))
		if err != nil {
			t.Errorf("%s: %v", schema, err)
			continue
		}
		a, err := parseArguments(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Check(a); err != nil {
			t.Errorf("%s with %s: %v", schema, args, err)
		}
	}
}

// TestCheckIsBounded: schemas whose checks multiply are refused before the
// validator runs, and quickly.
func TestCheckIsBounded(t *testing.T) {
	doubling := `{"type": "object", "properties": {"x": {"$ref": "#/definitions/d0"}}, "definitions": {` +
		chain(40, func(i int) string {
			return fmt.Sprintf(`{"allOf": [{"$ref": "#/definitions/d%d"}, {"$ref": "#/definitions/d%d"}]}`, i+1, i+1)
		}) + `, "d40": {"type": "integer"}}}`
	// each level applies the whole schema twice to the member below it
	nested := `{"type": "object", "properties": {"a": {"$ref": "#"}}, "allOf": [{"$ref": "#/definitions/t"}, {"$ref": "#/definitions/t"}], "definitions": {"t": {"properties": {"a": {"$ref": "#"}}}}}`
	deepArgs := strings.Repeat(`{"a": `, 40) + `{}` + strings.Repeat(`}`, 40)
	for schema, args := range map[string]string{doubling: `{"x": 1}`, nested: deepArgs} {
		v, err := compileSchema(json.RawMessage(schema))
		if err != nil {
			t.Fatalf("%.80s: %v", schema, err)
		}
		a, err := parseArguments(args)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = v.Check(a)
		var le *limitError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "more than 200000 times") {
			t.Errorf("%.80s: %v", schema, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%.80s: the check took %s", schema, d)
		}
	}
	// the same shapes, shallow, are checked
	v, _ := compileSchema(json.RawMessage(nested))
	a, _ := parseArguments(`{"a": {"a": {}}}`)
	if err := v.Check(a); err != nil {
		t.Errorf("shallow: %v", err)
	}
}

func TestArgumentsAreBounded(t *testing.T) {
	for args, want := range map[string]string{
		strings.Repeat(`{"a": `, 70) + `{}` + strings.Repeat(`}`, 70): "the arguments nest deeper than 64 levels",
		`{"n": 1e999999}`: "the arguments hold the number 1e999999",
		`{"s": "` + strings.Repeat("a", 1<<20) + `"}`: "the arguments take 1.1 MiB, over the 1 MiB a call's arguments may take",
	} {
		if _, err := parseArguments(args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60s: %v, want %q", args, err, want)
		}
	}
}

// TestValidatorLoadsNothing: whatever reaches the validator, it is only
// given the document in memory: an outside reference fails at once,
// without a request or a file read.
func TestValidatorLoadsNothing(t *testing.T) {
	url, asked := hangingServer(t)
	tried := noNetwork(t)
	for _, ref := range []string{url + "/s.json", "file:///etc/passwd", "http://json-schema.org/draft-07/schema#"} {
		doc := fmt.Sprintf(`{"properties": {"q": {"$ref": %q}}}`, ref)
		sl := gojsonschema.NewSchemaLoader()
		sl.AutoDetect = false
		sl.Draft = gojsonschema.Draft7
		done := make(chan error, 1)
		go func() { _, err := sl.Compile(memoryLoader(doc)); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "refers outside itself") {
				t.Errorf("%s: %v", ref, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the compiler waited for the reference", ref)
		}
	}
	// the meta-schemas come from the library's own copies
	for d := range metaSchemaURLs {
		if _, err := compileMetaSchema(d); err != nil {
			t.Errorf("draft %d: %v", d, err)
		}
	}
	if n, m := asked(), tried(); n != 0 || m != 0 {
		t.Errorf("%d requests reached the server, %d were tried", n, m)
	}
}

func FuzzCompileSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"properties": {"q": {"$ref": "#/properties/q"}}}`,
		`{"$ref": "#"}`,
		`{"allOf": [{"$ref": "#/definitions/a"}], "definitions": {"a": {"properties": {"b": {"$ref": "#"}}}}}`,
		`{"properties": {"q": {"$ref": "http://127.0.0.1:1/s.json"}}}`,
		`{"properties": {"q": {"$ref": "file:///etc/passwd"}}}`,
		`{"$id": "http://x/", "properties": {"q": {"$ref": "#/definitions/a"}}, "definitions": {"a": {}}}`,
		`{"properties": {"q": {"$ref": "#/properties/r"}, "r": {"items": {"$ref": "#/properties/q"}}}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"t": {"$ref": "#/$defs/t"}}, "$defs": {"t": {"type": "boolean"}}}`,
		`{"properties": {"a~1b": {"$ref": "#/properties/a~01b"}}}`,
		`{"dependencies": {"a": {"$ref": "#"}}}`,
	} {
		f.Add(s, `{"q": [1, {"q": "x"}], "a": {"b": {}}}`)
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		noNetwork(t)
		v, err := compileSchema(json.RawMessage(schema))
		if err != nil {
			return
		}
		a, err := parseArguments(args)
		if err != nil {
			return
		}
		done := make(chan struct{})
		go func() { v.Check(a); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * schemaTime):
			t.Fatalf("checking %q against %q did not end", args, schema)
		}
	})
}

// TestOverrunBounded: checks that overran their time and still run are
// bounded; past the bound a check is refused at once, without running,
// and once they finish checks run again.
func TestOverrunBounded(t *testing.T) {
	release := make(chan struct{})
	for i := 0; i < maxOverrun; i++ {
		err := withinTime(10*time.Millisecond, "stuck", func() error { <-release; return nil })
		var le *limitError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "did not finish within") {
			t.Fatalf("overrun %d: %v", i, err)
		}
	}
	ran := false
	err := withinTime(time.Second, "next", func() error { ran = true; return nil })
	var le *limitError
	if !errors.As(err, &le) || ran || !strings.Contains(err.Error(), "next was not started: 4 earlier checks") {
		t.Fatalf("past the bound: ran=%v, %v", ran, err)
	}
	close(release)
	for deadline := time.Now().Add(5 * time.Second); overrun.Load() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d overruns left after they finished", overrun.Load())
		}
	}
	if err := withinTime(time.Second, "again", func() error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("after the overruns finished: ran=%v, %v", ran, err)
	}
	// a panic is an error, and leaves no overrun counted
	if err := withinTime(time.Second, "panicking", func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "panicking failed: boom") {
		t.Fatalf("panic: %v", err)
	}
	if n := overrun.Load(); n != 0 {
		t.Fatalf("%d overruns after a panic", n)
	}
}
