package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"spear/deploy"
	"spear/mcp"
)

func TestKeepTools(t *testing.T) {
	p := &deploy.Provider{ID: "p", Read: []string{"r"}}
	schema := func(n int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"object","description":%q}`, strings.Repeat("x", n)))
	}
	tools := []mcp.Tool{
		{Name: "r", InputSchema: schema(10)},
		{Name: "w", InputSchema: schema(10)},
		{Name: "bad name", InputSchema: schema(10)},
		{Name: "huge", InputSchema: schema(MaxSchemaBytes)},
		{Name: "hugeout", InputSchema: schema(10), OutputSchema: schema(MaxSchemaBytes)},
	}
	k := keepTools(p, tools, false)
	if len(k.caps) != 2 || k.over != nil {
		t.Fatalf("kept %d, over %v", len(k.caps), k.over)
	}
	want := []string{
		`p: a tool named "bad name"`,
		"p/huge: its schema takes 64.1 KiB, over the 64 KiB a schema may take",
		"p/hugeout: its schema takes 64.1 KiB",
	}
	if len(k.excluded) != len(want) {
		t.Fatalf("excluded %q", k.excluded)
	}
	for i, w := range want {
		if !strings.HasPrefix(k.excluded[i], w) {
			t.Errorf("excluded[%d] = %q, want %q…", i, k.excluded[i], w)
		}
	}
	if k := keepTools(p, tools, true); len(k.caps) != 1 || k.caps[0].Tool != "r" {
		t.Errorf("read-only kept %v", k.caps)
	}

	// Tools within bounds each, over MaxProviderBytes in all: the
	// provider is left out, and says why.
	var many []mcp.Tool
	for i := 0; i < 70; i++ {
		many = append(many, mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: schema(60000)})
	}
	k = keepTools(p, many, false)
	if k.caps != nil || k.over == nil || k.over.Phase != "list" ||
		k.over.Reason != "offers tools that take 4.1 MiB in all, over the 4 MiB a provider may take" {
		t.Fatalf("over: %+v, kept %d", k.over, len(k.caps))
	}
	if got := k.excluded[len(k.excluded)-1]; got != "p: the whole provider, which "+k.over.Reason {
		t.Errorf("excluded %q", got)
	}
	// READ ones only, for a general turn, fit.
	if k := keepTools(&deploy.Provider{ID: "p", Read: []string{"t1"}}, many, true); k.over != nil || len(k.caps) != 1 {
		t.Errorf("read-only: %+v", k.over)
	}
}

func TestListTime(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		time.Second: 3 * time.Second, 10 * time.Second: 30 * time.Second,
		20 * time.Second: 60 * time.Second, 300 * time.Second: 60 * time.Second,
	} {
		if got := ListTime(&deploy.Provider{Timeout: timeout}); got != want {
			t.Errorf("ListTime(%s) = %s, want %s", timeout, got, want)
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int]string{900: "900 bytes", 64 << 10: "64 KiB", 70000: "68.4 KiB", 4<<20 + 1: "4.1 MiB", 4 << 20: "4 MiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
