package gateway

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Bounds on a schema and on checking arguments against it. A provider's
// schema is hostile input: it must not make the gateway fetch anything,
// recurse without end, or work without bound (docs/formats.md, "Checks on
// every invocation").
const (
	// maxSchemaDepth bounds how deeply a schema's JSON nests.
	maxSchemaDepth = 64
	// maxArgumentsDepth bounds how deeply a turn's arguments nest.
	maxArgumentsDepth = 64
	// maxArgumentsBytes bounds a call's arguments: they are recorded
	// twice in the audit trail, and each line of it must stay readable.
	maxArgumentsBytes = 1 << 20
	// maxInPlaceChain bounds how many references and combinations
	// (allOf, anyOf, oneOf, not, if, then, else, dependencies) apply to one
	// value, one after another.
	maxInPlaceChain = 256
	// maxCheckSteps bounds the work of checking arguments: how many times
	// a subschema is applied to a value, counted over every path.
	maxCheckSteps = 200_000
	// maxNumberLen and maxExponent bound a number in a schema or in the
	// arguments: big enough for any real bound, small enough to compare
	// quickly.
	maxNumberLen = 100
	maxExponent  = 400
)

// inPlaceKeywords hold subschemas that apply to the value itself.
var inPlaceKeywords = map[string]bool{"not": true, "if": true, "then": true, "else": true}

// combinations hold lists of subschemas that apply to the value itself.
var combinations = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true}

// memberKeywords hold one subschema that applies to members or elements.
var memberKeywords = map[string]bool{"additionalProperties": true, "additionalItems": true, "contains": true, "propertyNames": true}

// namedSchemas hold an object of subschemas, one per name.
var namedSchemas = map[string]bool{"properties": true, "patternProperties": true, "definitions": true, "$defs": true, "dependencies": true}

// schemaNode is one subschema and how its own subschemas apply.
type schemaNode struct {
	path    string         // JSON pointer, for messages
	inPlace []int          // to the same value
	props   map[string]int // to the member of that name
	members []int          // to every member or element (over-counted: patternProperties, additionalProperties, additionalItems, contains, items as one schema)
	items   []int          // items as a list: to the element at that index
	names   []int          // propertyNames: to every member's name
}

// schemaGraph is a vetted schema's subschemas; node 0 is the root.
type schemaGraph struct {
	nodes []schemaNode
}

// vetSchema checks a decoded schema before the validator ever sees it: its
// nesting and numbers are bounded; every $ref is a JSON pointer into the
// document itself that resolves; no $id or id re-bases references; no
// chain of references and combinations applies a schema to the very value
// it is already checking without end. It removes default and examples,
// which never change what validates, so that data in them is not read as
// schema. It returns how subschemas apply, to bound the work of a check.
func vetSchema(doc map[string]any) (*schemaGraph, error) {
	if err := vetJSON(doc, 0, maxSchemaDepth, "its input schema"); err != nil {
		return nil, err
	}
	stripAnnotations(doc)
	if err := vetIdentifiers(doc, ""); err != nil {
		return nil, err
	}
	g := &schemaGraph{}
	index := map[string]int{}
	var add func(path string, v any) (int, error)
	add = func(path string, v any) (int, error) {
		if i, ok := index[path]; ok {
			return i, nil
		}
		i := len(g.nodes)
		index[path] = i
		g.nodes = append(g.nodes, schemaNode{path: path})
		m, ok := v.(map[string]any)
		if !ok {
			return i, nil // true, false, or something the validator refuses
		}
		var n schemaNode
		n.path = path
		one := func(key string, sub any) (int, error) { return add(path+"/"+escapeToken(key), sub) }
		for _, k := range sortedKeys(m) {
			sub := m[k]
			switch {
			case k == "$ref":
				ref, ok := sub.(string)
				if !ok {
					continue // the validator refuses it
				}
				target, tpath, err := resolveRef(doc, ref)
				if err != nil {
					return 0, err
				}
				j, err := add(tpath, target)
				if err != nil {
					return 0, err
				}
				n.inPlace = append(n.inPlace, j)
			case inPlaceKeywords[k]:
				j, err := one(k, sub)
				if err != nil {
					return 0, err
				}
				n.inPlace = append(n.inPlace, j)
			case combinations[k]:
				list, _ := sub.([]any)
				for x, e := range list {
					j, err := add(path+"/"+k+"/"+strconv.Itoa(x), e)
					if err != nil {
						return 0, err
					}
					n.inPlace = append(n.inPlace, j)
				}
			case memberKeywords[k]:
				j, err := one(k, sub)
				if err != nil {
					return 0, err
				}
				if k == "propertyNames" {
					n.names = append(n.names, j)
				} else {
					n.members = append(n.members, j)
				}
			case k == "items":
				if list, ok := sub.([]any); ok {
					for x, e := range list {
						j, err := add(path+"/items/"+strconv.Itoa(x), e)
						if err != nil {
							return 0, err
						}
						n.items = append(n.items, j)
					}
					continue
				}
				j, err := one(k, sub)
				if err != nil {
					return 0, err
				}
				n.members = append(n.members, j)
			case namedSchemas[k]:
				named, _ := sub.(map[string]any)
				for _, name := range sortedKeys(named) {
					s := named[name]
					if _, isList := s.([]any); k == "dependencies" && isList {
						continue // a list of names, not a schema
					}
					j, err := add(path+"/"+escapeToken(k)+"/"+escapeToken(name), s)
					if err != nil {
						return 0, err
					}
					switch k {
					case "properties":
						if n.props == nil {
							n.props = map[string]int{}
						}
						n.props[name] = j
					case "patternProperties":
						n.members = append(n.members, j)
					case "dependencies":
						n.inPlace = append(n.inPlace, j)
					}
				}
			}
		}
		g.nodes[i] = n
		return i, nil
	}
	if _, err := add("", doc); err != nil {
		return nil, err
	}
	if err := g.vetChains(); err != nil {
		return nil, err
	}
	return g, nil
}

// vetChains refuses a cycle of subschemas that apply to the same value (a
// check that would never end) and a chain of them longer than
// maxInPlaceChain.
func (g *schemaGraph) vetChains() error {
	const (
		unseen = iota
		open
		done
	)
	state := make([]int, len(g.nodes))
	longest := make([]int, len(g.nodes))
	var visit func(i int, trail []int) error
	visit = func(i int, trail []int) error {
		switch state[i] {
		case open:
			// trail ends where the cycle starts again
			start := 0
			for x, t := range trail {
				if t == i {
					start = x
				}
			}
			var hops []string
			for _, t := range trail[start:] {
				hops = append(hops, "#"+g.nodes[t].path)
			}
			hops = append(hops, "#"+g.nodes[i].path)
			return fmt.Errorf("its input schema refers to itself without end: %s", strings.Join(hops, " → "))
		case done:
			return nil
		}
		state[i] = open
		trail = append(trail, i)
		for _, j := range g.nodes[i].inPlace {
			if err := visit(j, trail); err != nil {
				return err
			}
			longest[i] = max(longest[i], longest[j]+1)
		}
		if longest[i] > maxInPlaceChain {
			return fmt.Errorf("its input schema applies more than %d references and combinations, one after another, to one value (from #%s)", maxInPlaceChain, g.nodes[i].path)
		}
		state[i] = done
		return nil
	}
	for i := range g.nodes {
		if err := visit(i, nil); err != nil {
			return err
		}
	}
	return nil
}

// value is a JSON value as checkSteps walks it: each member, element and
// member name once, so that work on it can be remembered.
type value struct {
	names   []string // sorted
	members map[string]*value
	labels  map[string]*value // each member's name, as a string value
	elems   []*value
}

func newValue(v any) *value {
	switch t := v.(type) {
	case map[string]any:
		out := &value{names: sortedKeys(t), members: map[string]*value{}, labels: map[string]*value{}}
		for k, e := range t {
			out.members[k] = newValue(e)
			out.labels[k] = &value{}
		}
		return out
	case []any:
		out := &value{elems: make([]*value, len(t))}
		for i, e := range t {
			out.elems[i] = newValue(e)
		}
		return out
	}
	return &value{}
}

// checkSteps counts how many times checking v against the schema applies a
// subschema, over every path the validator takes, and returns more than
// limit as soon as the count passes it. It over-counts (every
// patternProperties and additionalProperties schema counts for every
// member), never under-counts. Its own work is at most limit steps: each
// pair of subschema and value is counted once and remembered.
func (g *schemaGraph) checkSteps(v any, limit int) int {
	type key struct {
		node  int
		value *value
	}
	memo := map[key]int{}
	work := 0
	var steps func(node int, v *value) int
	steps = func(node int, v *value) int {
		k := key{node, v}
		if n, ok := memo[k]; ok {
			return n
		}
		n := 1
		apply := func(j int, on *value) {
			work++
			if work > limit || n > limit {
				n = limit + 1
				return
			}
			n = min(n+steps(j, on), limit+1)
		}
		sn := &g.nodes[node]
		for _, j := range sn.inPlace {
			apply(j, v)
		}
		for _, name := range v.names {
			member := v.members[name]
			if j, ok := sn.props[name]; ok {
				apply(j, member)
			}
			for _, j := range sn.members {
				apply(j, member)
			}
			for _, j := range sn.names {
				apply(j, v.labels[name])
			}
		}
		for x, elem := range v.elems {
			if x < len(sn.items) {
				apply(sn.items[x], elem)
			}
			for _, j := range sn.members {
				apply(j, elem)
			}
		}
		memo[k] = n
		return n
	}
	return steps(0, newValue(v))
}

// stripAnnotations removes default and examples from every subschema
// reached through the schema's keywords: they never change what validates,
// and what they hold is data, not schema.
func stripAnnotations(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	delete(m, "default")
	delete(m, "examples")
	for k, sub := range m {
		switch {
		case inPlaceKeywords[k], memberKeywords[k], k == "items":
			if list, ok := sub.([]any); ok {
				for _, e := range list {
					stripAnnotations(e)
				}
				continue
			}
			stripAnnotations(sub)
		case combinations[k]:
			list, _ := sub.([]any)
			for _, e := range list {
				stripAnnotations(e)
			}
		case namedSchemas[k]:
			named, _ := sub.(map[string]any)
			for _, s := range named {
				stripAnnotations(s)
			}
		}
	}
}

// vetIdentifiers walks the document as the validator's reference resolver
// does (everything but const and enum; the names under properties,
// patternProperties and dependencies are names) and refuses an $id or id
// that would re-base references, and any $ref that is not a JSON pointer
// into the document.
func vetIdentifiers(v any, path string) error {
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			if err := vetIdentifiers(e, path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range []string{"$id", "id"} {
			if id, ok := t[k].(string); ok {
				return fmt.Errorf("its input schema sets %s %q (at #%s), which would change what its references point to; a schema's references must stay within it", k, id, path)
			}
		}
		if ref, ok := t["$ref"].(string); ok {
			if err := localRef(ref); err != nil {
				return err
			}
		}
		for _, k := range sortedKeys(t) {
			sub := t[k]
			switch k {
			case "const", "enum":
				continue
			case "properties", "patternProperties", "dependencies":
				if named, ok := sub.(map[string]any); ok {
					for _, name := range sortedKeys(named) {
						if err := vetIdentifiers(named[name], path+"/"+escapeToken(k)+"/"+escapeToken(name)); err != nil {
							return err
						}
					}
					continue
				}
			}
			if err := vetIdentifiers(sub, path+"/"+escapeToken(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// localRef refuses a reference that is not a JSON pointer into the
// document itself: a URL, a file, another document, an anchor.
func localRef(ref string) error {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.Path != "" || u.RawQuery != "" || u.User != nil || !strings.HasPrefix(ref, "#") {
		return fmt.Errorf("its input schema refers outside itself: %q; only references within the schema (#/…) are followed", ref)
	}
	if u.Fragment != "" && !strings.HasPrefix(u.Fragment, "/") {
		return fmt.Errorf("its input schema uses the reference %q, which names an anchor; only JSON pointers within the schema (#/…) are followed", ref)
	}
	return nil
}

// resolveRef finds what a local reference points to, as the validator's
// JSON pointer does, and returns it with its canonical path.
func resolveRef(doc any, ref string) (any, string, error) {
	if err := localRef(ref); err != nil {
		return nil, "", err
	}
	u, _ := url.Parse(ref)
	if u.Fragment == "" {
		return doc, "", nil
	}
	node := doc
	var path strings.Builder
	for _, token := range strings.Split(u.Fragment[1:], "/") {
		switch t := node.(type) {
		case map[string]any:
			name := strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
			next, ok := t[name]
			if !ok {
				return nil, "", fmt.Errorf("its input schema refers to %q, which is not in it", ref)
			}
			node = next
			path.WriteString("/" + escapeToken(name))
		case []any:
			x, err := strconv.Atoi(token)
			if err != nil || x < 0 || x >= len(t) {
				return nil, "", fmt.Errorf("its input schema refers to %q, which is not in it", ref)
			}
			node = t[x]
			path.WriteString("/" + strconv.Itoa(x))
		default:
			return nil, "", fmt.Errorf("its input schema refers to %q, which is not in it", ref)
		}
	}
	switch node.(type) {
	case map[string]any, bool:
		return node, path.String(), nil
	}
	return nil, "", fmt.Errorf("its input schema refers to %q, which is not a schema", ref)
}

// vetJSON bounds how deeply v nests and the numbers it holds. what names
// v in messages: "its input schema" or, plural, "the arguments".
func vetJSON(v any, depth, maxDepth int, what string) error {
	verb := func(singular, plural string) string {
		if strings.HasSuffix(what, "s") {
			return what + " " + plural
		}
		return what + " " + singular
	}
	if depth > maxDepth {
		return fmt.Errorf("%s deeper than %d levels", verb("nests", "nest"), maxDepth)
	}
	switch t := v.(type) {
	case json.Number:
		if !smallNumber(string(t)) {
			return fmt.Errorf("%s the number %.40s, which is too long or too large to check (at most %d characters, exponent at most %d)", verb("holds", "hold"), string(t), maxNumberLen, maxExponent)
		}
	case []any:
		for _, e := range t {
			if err := vetJSON(e, depth+1, maxDepth, what); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if err := vetJSON(t[k], depth+1, maxDepth, what); err != nil {
				return err
			}
		}
	}
	return nil
}

// smallNumber reports whether a JSON number's text is short and its
// exponent small, so that exact arithmetic on it is quick.
func smallNumber(s string) bool {
	if len(s) > maxNumberLen {
		return false
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return true
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return err == nil && exp >= -maxExponent && exp <= maxExponent
}

// escapeToken writes a name as a JSON pointer token.
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
