package fakellm

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestCmd runs the scripts in testdata/scripts, which drive the fakellm
// command through a small HTTP client command, post.
func TestCmd(t *testing.T) {
	t.Run("scripts", func(t *testing.T) {
		testscript.Run(t, testscript.Params{
			Dir:                filepath.Join("testdata", "scripts"),
			RequireUniqueNames: true,
			Cmds:               map[string]func(*testscript.TestScript, bool, []string){"fakellm": Cmd, "post": cmdPost},
		})
	})
	// The parallel scripts have all ended here, so their servers must be gone.
	scripts.Lock()
	defer scripts.Unlock()
	if n := len(scripts.servers); n != 0 {
		t.Errorf("%d servers outlived their scripts", n)
	}
}

// cmdPost is the script command
//
//	post [-anthropic] <body-file> [path|url]
//
// It posts the file to $OPENAI_BASE_URL followed by path (default
// /chat/completions), with "Authorization: Bearer $OPENAI_API_KEY" when that
// is set; with -anthropic, to $ANTHROPIC_BASE_URL followed by path (default
// /v1/messages), with "x-api-key: $ANTHROPIC_API_KEY" when that is set and
// an anthropic-version header. An argument starting with http:// is the
// whole URL. It prints "status N", "retry-after V" when the header is
// present, and the body. With !, the request must fail to connect.
func cmdPost(ts *testscript.TestScript, neg bool, args []string) {
	anthropic := len(args) > 0 && args[0] == "-anthropic"
	if anthropic {
		args = args[1:]
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: post [-anthropic] <body-file> [path|url]")
	}
	body, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	base, path, keyVar := ts.Getenv("OPENAI_BASE_URL"), "/chat/completions", "OPENAI_API_KEY"
	if anthropic {
		base, path, keyVar = ts.Getenv("ANTHROPIC_BASE_URL"), "/v1/messages", "ANTHROPIC_API_KEY"
	}
	url := base + path
	if len(args) == 2 {
		url = base + args[1]
		if strings.HasPrefix(args[1], "http://") {
			url = args[1]
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	ts.Check(err)
	req.Header.Set("Content-Type", "application/json")
	if key := ts.Getenv(keyVar); key != "" && anthropic {
		req.Header.Set("X-Api-Key", key)
	} else if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if anthropic {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	resp, err := http.DefaultClient.Do(req)
	if neg {
		if err == nil {
			resp.Body.Close()
			ts.Fatalf("post %s: got status %d, want a failure to connect", url, resp.StatusCode)
		}
		return
	}
	ts.Check(err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "status %d\n", resp.StatusCode)
	if v := resp.Header.Get("Retry-After"); v != "" {
		fmt.Fprintf(ts.Stdout(), "retry-after %s\n", v)
	}
	ts.Stdout().Write(data)
}
