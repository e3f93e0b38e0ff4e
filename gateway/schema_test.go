package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCompileSchema(t *testing.T) {
	cases := []struct {
		schema, args, want string
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"x"}`, ""},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1}`, "Invalid type"},
		{`{"type":"object"}`, `{"a":1}`, `does not declare "a" (it declares none)`},
		{`{"type":"object","properties":{"a":{"enum":["x","y"]}},"required":["a"]}`, `{}`, "a is required"},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","maximum":3,"exclusiveMaximum":true}}}`, `{"n":3}`, "less than 3"},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"integer","exclusiveMaximum":3}}}`, `{"n":3}`, "less than 3"},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"t":{"$ref":"#/$defs/t"}},"$defs":{"t":{"type":"boolean"}}}`, `{"t":"no"}`, "Invalid type"},
		{`{"$schema":"http://json-schema.org/draft-06/schema#","type":"object","properties":{"n":{"type":"number","exclusiveMaximum":3}}}`, `{"n":3}`, "less than 3"},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"s":{"const":"x"}}}`, `{"s":"y"}`, "does not match"},
	}
	for _, tc := range cases {
		v, err := compileSchema(json.RawMessage(tc.schema))
		if err != nil {
			t.Errorf("%s: %v", tc.schema, err)
			continue
		}
		args, err := parseArguments(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		err = v.Check(args)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s with %s: %v, want %q", tc.schema, tc.args, err, tc.want)
		}
	}
	for schema, want := range map[string]string{
		`[]`: "not a JSON object",
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","unevaluatedProperties":false}`:                                      `uses "unevaluatedProperties"`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"a":{"anyOf":[{"type":"array","prefixItems":[{}]}]}}}`: `uses "prefixItems"`,
		`{"$schema":"https://example.com/my-dialect","type":"object"}`:                                                                                  "unknown dialect",
		`{"type":"object","properties":{"a":{"type":"strin"}}}`:                                                                                         "cannot be compiled",
		`{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}`:                                                                                     "which is not in it",
	} {
		if _, err := compileSchema(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", schema, err, want)
		}
	}
}

func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":1,"a":2}`, `[1]`, `{} {}`, ``, `{"a":{"b":[{"c":null}]}}`, `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := parseArguments(s)
		if err == nil && args == nil {
			t.Fatalf("%q: no error and no arguments", s)
		}
	})
}
