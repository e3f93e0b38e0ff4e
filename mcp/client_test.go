package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"spear/internal/fakemcp"
	"spear/internal/procs"
)

func TestMain(m *testing.M) {
	switch os.Getenv("MCPTEST_SERVER") {
	case "fake":
		os.Exit(fakemcp.Main(os.Args[1:]))
	case "sdk":
		os.Exit(runSDKServer())
	}
	os.Exit(m.Run())
}

// fake returns options that start the fake server with args.
func fake(args ...string) Options {
	return Options{
		Command:    append([]string{os.Args[0]}, args...),
		Env:        map[string]string{"MCPTEST_SERVER": "fake"},
		Timeout:    5 * time.Second,
		CloseGrace: 200 * time.Millisecond,
	}
}

func connect(t *testing.T, opts Options) *Client {
	t.Helper()
	c, err := Connect(context.Background(), opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for procs.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConnectListCall(t *testing.T) {
	c := connect(t, fake())
	init := c.InitializeResult()
	if init.ProtocolVersion != ProtocolVersion || init.ServerInfo.Name != "fake-mcp" {
		t.Fatalf("initialize result %+v", init)
	}
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 6 || tools[0].Name != "echo" || !strings.Contains(string(tools[0].InputSchema), `"text"`) {
		t.Fatalf("tools = %+v", tools)
	}
	res, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != `echo called with {"text":"hi"}` {
		t.Fatalf("result %+v", res)
	}
}

func TestCallResultTypes(t *testing.T) {
	c := connect(t, fake())
	res, err := c.CallTool(context.Background(), "mixed", nil)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, b := range res.Content {
		types = append(types, b.Type)
	}
	if got := strings.Join(types, ","); got != "text,image,audio,resource_link,resource" {
		t.Fatalf("content types %s", got)
	}
	if res.Content[1].MimeType != "image/png" || res.Content[1].Data != "aGVsbG8=" {
		t.Errorf("image %+v", res.Content[1])
	}
	if res.Content[3].URI != "file:///x" || res.Content[3].Size == nil || *res.Content[3].Size != 42 {
		t.Errorf("resource link %+v", res.Content[3])
	}
	if res.Content[4].Resource == nil || res.Content[4].Resource.Text != "embedded" {
		t.Errorf("resource %+v", res.Content[4])
	}
	if string(res.StructuredContent) != `{"ok":true}` {
		t.Errorf("structured %s", res.StructuredContent)
	}

	res, err = c.CallTool(context.Background(), "fail", nil)
	if err != nil || !res.IsError {
		t.Fatalf("fail: %+v, %v", res, err)
	}
	_, err = c.CallTool(context.Background(), "nosuch", nil)
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != CodeInvalidParams {
		t.Fatalf("unknown tool: %v", err)
	}
}

func TestEnvironmentIsOnlyPathHomeAndNamed(t *testing.T) {
	t.Setenv("SECRET_TOKEN", "hunter2")
	opts := fake()
	opts.Env["EXTRA"] = "yes"
	c := connect(t, opts)
	res, err := c.CallTool(context.Background(), "env", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kv := range strings.Split(res.Content[0].Text, "\n") {
		names = append(names, strings.SplitN(kv, "=", 2)[0])
	}
	if got := strings.Join(names, ","); got != "EXTRA,HOME,MCPTEST_SERVER,PATH" {
		t.Fatalf("server environment has %s", got)
	}
}

func TestPagination(t *testing.T) {
	c := connect(t, fake("-tools", "25", "-page", "7"))
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 31 {
		t.Fatalf("got %d tools, want 31", len(tools))
	}
}

func TestVersionRefused(t *testing.T) {
	c, err := Start(fake("-version", "2025-03-26"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Initialize(context.Background())
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Got != "2025-03-26" {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), `"2025-03-26"`) {
		t.Errorf("message does not name the version: %v", err)
	}
	assertGone(t, c.Pid())
}

func TestTolerated(t *testing.T) {
	for _, behave := range []string{"notify-before-init", "ping-before-init", "weird-ids", "flood-stderr"} {
		t.Run(behave, func(t *testing.T) {
			rec := t.TempDir() + "/rec"
			c := connect(t, fake("-behave", behave, "-record", rec))
			if _, err := c.ListTools(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			if len(c.Stderr()) > DefaultStderrTail {
				t.Errorf("stderr tail is %d bytes", len(c.Stderr()))
			}
			if behave == "ping-before-init" {
				data, _ := os.ReadFile(rec)
				for _, want := range []string{`{"id":"srv-1","jsonrpc":"2.0","result":{}}`, `"id":99`, `"code":-32601`, `"id":"srv-2"`} {
					if !strings.Contains(string(data), want) {
						t.Errorf("server did not receive %s; got\n%s", want, data)
					}
				}
			}
		})
	}
}

func TestProtocolErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-behave", "batch"}, "JSON array"},
		{[]string{"-behave", "garbage"}, "not JSON-RPC"},
		{[]string{"-behave", "error-init"}, "server error -32603"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := Start(fake(tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Initialize(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestListLimits(t *testing.T) {
	cases := []struct {
		args []string
		opts func(*Options)
		want string
	}{
		{[]string{"-behave", "repeat-cursor"}, nil, `repeated the cursor "same"`},
		{[]string{"-behave", "endless"}, func(o *Options) { o.MaxPages = 50 }, "within 50 pages"},
		{[]string{"-tools", "30", "-page", "10"}, func(o *Options) { o.MaxTools = 20 }, "more than 20 tools"},
		{[]string{"-huge", "4096"}, func(o *Options) { o.MaxMessage = 2048 }, "larger than 2048 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			opts := fake(tc.args...)
			if tc.opts != nil {
				tc.opts(&opts)
			}
			c := connect(t, opts)
			_, err := c.ListTools(context.Background())
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want protocol error %q", err, tc.want)
			}
		})
	}
}

func TestServerExits(t *testing.T) {
	for _, method := range []string{"initialize", "tools/list", "tools/call"} {
		t.Run(method, func(t *testing.T) {
			c, err := Start(fake("-exit-at", method))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if _, err = c.Initialize(ctx); err == nil {
				if _, err = c.ListTools(ctx); err == nil {
					_, err = c.CallTool(ctx, "echo", nil)
				}
			}
			var ee *ExitError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), "exit status 3") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestTimeoutCancelsAndStops(t *testing.T) {
	rec := t.TempDir() + "/rec"
	opts := fake("-hang-at", "tools/call", "-record", rec)
	opts.Timeout = 300 * time.Millisecond
	c := connect(t, opts)
	_, err := c.CallTool(context.Background(), "echo", nil)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Method != "tools/call" {
		t.Fatalf("err = %v", err)
	}
	assertGone(t, c.Pid())
	data, _ := os.ReadFile(rec)
	if !regexp.MustCompile(`"method":"notifications/cancelled","params":\{"reason":"timed out after 300ms","requestId":1\}`).Match(data) {
		t.Fatalf("no cancellation recorded:\n%s", data)
	}
	if _, err := c.CallTool(context.Background(), "echo", nil); err == nil {
		t.Fatal("call after timeout succeeded")
	}
}

func TestInitializeTimeoutIsNotCancelled(t *testing.T) {
	rec := t.TempDir() + "/rec"
	opts := fake("-hang-at", "initialize", "-record", rec)
	opts.Timeout = 200 * time.Millisecond
	c, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Initialize(context.Background())
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
	assertGone(t, c.Pid())
	data, _ := os.ReadFile(rec)
	if strings.Contains(string(data), "cancelled") {
		t.Fatalf("initialize was cancelled:\n%s", data)
	}
}

func TestNoNewlineIsATimeoutNotAHang(t *testing.T) {
	opts := fake("-behave", "no-newline")
	opts.Timeout = 200 * time.Millisecond
	c, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var te *TimeoutError
	if _, err := c.Initialize(context.Background()); !errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
}

func TestContextCancel(t *testing.T) {
	c := connect(t, fake("-hang-at", "tools/call"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.CallTool(ctx, "echo", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	assertGone(t, c.Pid())
}

func TestCloseStubbornServerAndGrandchild(t *testing.T) {
	opts := fake("-behave", "ignore-term,grandchild")
	opts.CloseGrace = 100 * time.Millisecond
	c := connect(t, opts)
	var grandchild int
	deadline := time.Now().Add(3 * time.Second)
	for grandchild == 0 && time.Now().Before(deadline) {
		if m := regexp.MustCompile(`grandchild (\d+)`).FindStringSubmatch(c.Stderr()); m != nil {
			grandchild, _ = strconv.Atoi(m[1])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if grandchild == 0 {
		t.Fatal("fake server did not report its grandchild")
	}
	start := time.Now()
	c.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	assertGone(t, c.Pid())
	assertGone(t, grandchild)
	c.Close() // a second Close is harmless
}

func TestStartErrors(t *testing.T) {
	for _, cmd := range [][]string{nil, {"/nonexistent/server"}, {"no-such-server-anywhere"}} {
		_, err := Start(Options{Command: cmd})
		var se *StartError
		if !errors.As(err, &se) {
			t.Errorf("%q: err = %v", cmd, err)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	c := connect(t, fake("-call-delay", "50ms"))
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func(i int) {
			res, err := c.CallTool(context.Background(), "echo", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
			if err == nil && res.Content[0].Text != fmt.Sprintf(`echo called with {"n":%d}`, i) {
				err = fmt.Errorf("call %d got %q", i, res.Content[0].Text)
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
