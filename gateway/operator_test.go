package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckWantsAScope(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "capabilities.json"), []byte(`{"providers": [{"id": "nowhere", "command": ["/bin/true"], "enabled": false}, {"id": "here", "command": ["/bin/true"], "scope": "global", "enabled": false}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "projects.json"), []byte(`{"projects": []}`), 0o644)
	g := New(func(k string) string { return map[string]string{"HOME": dir, "SPEAR_CONFIG_DIR": dir}[k] })
	r, _, err := g.Inspect(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK || len(r.Problems) != 1 || r.Problems[0].Entry != "nowhere" || r.Problems[0].Key != "scope" ||
		!strings.HasPrefix(r.Problems[0].Message, "applies nowhere: add a scope") {
		t.Errorf("problems %+v", r.Problems)
	}
}
