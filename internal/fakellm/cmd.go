package fakellm

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// scripts holds the server of each running script. Scripts run in parallel,
// so the map is shared; each script's commands run on that script's own
// goroutine, one at a time.
var scripts = struct {
	sync.Mutex
	servers map[*testscript.TestScript]*Server
}{servers: map[*testscript.TestScript]*Server{}}

// Cmd is the testscript command fakellm, for Params.Cmds:
//
//	fakellm start <rules.json> [key]   start a server for this script from the rules
//	                                   file; set OPENAI_BASE_URL (http://127.0.0.1:PORT/v1),
//	                                   ANTHROPIC_BASE_URL and FAKELLM_URL (both
//	                                   http://127.0.0.1:PORT) and, with key,
//	                                   OPENAI_API_KEY and ANTHROPIC_API_KEY (and
//	                                   expect that key)
//	fakellm codex-home <dir> [model]   write <dir>/config.toml, creating <dir>, so that
//	                                   Codex with CODEX_HOME=<dir> asks this server for
//	                                   model (default gpt-5.4); see Server.WriteCodexHome
//	fakellm stop                       close the server now: later requests are refused
//	                                   at connect; requests and stats still work
//	fakellm requests [-last] [-status N] [-api NAME]
//	                                   print the recorded requests as JSON lines,
//	                                   optionally only the last, those answered N, or
//	                                   those of protocol NAME (chat, anthropic, responses)
//	fakellm stats                      print "requests N", one "status S N" per status
//	                                   in ascending order, "prompt_tokens N" and
//	                                   "completion_tokens N", over all protocols
//
// The server answers POST /v1/chat/completions, POST /v1/messages (Claude
// Code) and POST /v1/responses (Codex) from the same rules, and HEAD
// /api/hello (Claude Code's probe) with 200.
//
// A script has at most one server; it stops when the script ends, and its
// log (one line per request) goes to the script's log. Paths are relative
// to the script's current directory. The ! prefix is not supported.
func Cmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! fakellm")
	}
	if len(args) == 0 {
		ts.Fatalf("usage: fakellm start|codex-home|stop|requests|stats ...")
	}
	switch args[0] {
	case "start":
		cmdStart(ts, args[1:])
	case "codex-home":
		cmdCodexHome(ts, args[1:])
	case "stop":
		cmdStop(ts, args[1:])
	case "requests":
		cmdRequests(ts, args[1:])
	case "stats":
		cmdStats(ts, args[1:])
	default:
		ts.Fatalf("fakellm: unknown subcommand %q; want start, codex-home, stop, requests or stats", args[0])
	}
}

func cmdStart(ts *testscript.TestScript, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: fakellm start <rules.json> [key]")
	}
	if scriptServer(ts) != nil {
		ts.Fatalf("fakellm start: this script already has a server")
	}
	rules, err := LoadRules(ts.MkAbs(args[0]))
	ts.Check(err)
	// Handlers write the log; it is read only after Close has waited for them.
	log := new(bytes.Buffer)
	s, err := Start(rules, log)
	ts.Check(err)
	scripts.Lock()
	scripts.servers[ts] = s
	scripts.Unlock()
	ts.Defer(func() {
		s.Close()
		scripts.Lock()
		delete(scripts.servers, ts)
		scripts.Unlock()
		if out := log.String(); out != "" {
			ts.Logf("%s", out)
		}
	})
	ts.Setenv("OPENAI_BASE_URL", s.URL())
	ts.Setenv("ANTHROPIC_BASE_URL", s.Origin())
	ts.Setenv("FAKELLM_URL", s.Origin())
	if len(args) == 2 {
		s.SetKey(args[1])
		ts.Setenv("OPENAI_API_KEY", args[1])
		ts.Setenv("ANTHROPIC_API_KEY", args[1])
	}
}

func cmdCodexHome(ts *testscript.TestScript, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: fakellm codex-home <dir> [model]")
	}
	model := ""
	if len(args) == 2 {
		model = args[1]
	}
	ts.Check(mustServer(ts, "codex-home").WriteCodexHome(ts.MkAbs(args[0]), model))
}

func cmdStop(ts *testscript.TestScript, args []string) {
	if len(args) > 0 {
		ts.Fatalf("usage: fakellm stop")
	}
	mustServer(ts, "stop").Close()
}

func cmdRequests(ts *testscript.TestScript, args []string) {
	fs := flag.NewFlagSet("fakellm requests", flag.ContinueOnError)
	fs.SetOutput(ts.Stderr())
	last := fs.Bool("last", false, "print only the most recent request")
	status := fs.Int("status", 0, "print only requests answered with this status")
	name := fs.String("api", "", "print only requests of this protocol")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		ts.Fatalf("usage: fakellm requests [-last] [-status N] [-api NAME]")
	}
	if *name != "" && !knownAPI(*name) {
		ts.Fatalf("fakellm requests: api %q: want chat, anthropic or responses", *name)
	}
	reqs := mustServer(ts, "requests").Requests()
	reqs = slices.DeleteFunc(reqs, func(r Recorded) bool {
		return *status != 0 && r.Status != *status || *name != "" && r.API != *name
	})
	if *last && len(reqs) > 0 {
		reqs = reqs[len(reqs)-1:]
	}
	enc := json.NewEncoder(ts.Stdout())
	enc.SetEscapeHTML(false)
	for _, r := range reqs {
		ts.Check(enc.Encode(r))
	}
}

func cmdStats(ts *testscript.TestScript, args []string) {
	if len(args) > 0 {
		ts.Fatalf("usage: fakellm stats")
	}
	st := mustServer(ts, "stats").Stats()
	out := ts.Stdout()
	fmt.Fprintf(out, "requests %d\n", st.Requests)
	for _, code := range slices.Sorted(maps.Keys(st.ByStatus)) {
		fmt.Fprintf(out, "status %d %d\n", code, st.ByStatus[code])
	}
	fmt.Fprintf(out, "prompt_tokens %d\n", st.PromptTokens)
	fmt.Fprintf(out, "completion_tokens %d\n", st.CompletionTokens)
}

func scriptServer(ts *testscript.TestScript) *Server {
	scripts.Lock()
	defer scripts.Unlock()
	return scripts.servers[ts]
}

func mustServer(ts *testscript.TestScript, sub string) *Server {
	s := scriptServer(ts)
	if s == nil {
		ts.Fatalf("fakellm %s: no server; run fakellm start first", sub)
	}
	return s
}
