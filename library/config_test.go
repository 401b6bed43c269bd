package library

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-descent/git-descent/internal/gittest"
)

func TestLoadAll(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	setConfig(t, repo,
		"library.pdf-audit.path=./skills/pdf-audit/",
		"library.pdf-audit.evals=./tests/cases.jsonl",
		"library.pdf-audit.split=60/20/20",
		"library.pdf-audit.seed=s1",
		"library.pdf-audit.layout=claude",
		"library.pdf-audit.run=my-agent {{prompt}}",
		"library.pdf-audit.timeout=90s",
		"library.pdf-audit.scorer=numeric",
		"library.pdf-audit.tolerance=0.01",
		"library.pdf-audit.score-command=score.sh",
		"library.pdf-audit.proposer=my-proposer {{failures_file}}",
		"library.pdf-audit.propose-timeout=5m",
		"library.pdf-audit.env=ANTHROPIC_*",
		"+library.pdf-audit.env=MY_TOKEN",
		"library.pdf-audit.frozen=tests/**",
		"+library.pdf-audit.frozen=LICENSE",
		"library.pdf-audit.hide=",
		"library.pdf-audit.minibatch=8",
		"library.pdf-audit.delta=0.1",
		"library.pdf-audit.delta-floor=0.01",
		"library.pdf-audit.anneal=0",
		"library.pdf-audit.promote-after=5",
		// A name with dots, and one with only a path: all defaults.
		"library.my.lib.path=tools/my.lib",
		"library.Zeta.path=zeta",
	)
	libs, err := LoadAll(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	pdf := &Library{
		Name: "pdf-audit", Path: "skills/pdf-audit", Evals: "tests/cases.jsonl", Split: "60/20/20", Seed: "s1", Layout: "claude",
		Run: "my-agent {{prompt}}", Timeout: 90 * time.Second, Scorer: "numeric", Tolerance: 0.01, ScoreCommand: "score.sh",
		Proposer: "my-proposer {{failures_file}}", ProposeTimeout: 5 * time.Minute,
		Env:       []string{"ANTHROPIC_*", "MY_TOKEN"},
		Frozen:    []string{"tests/**", "LICENSE"}, // replaces the default, then appends
		Guarded:   []string{"scripts/**"},          // not set: the default
		Hide:      nil,                             // set empty: cleared
		Minibatch: 8, Delta: 0.1, DeltaFloor: 0.01, HalfLife: 0, PromoteAfter: 5,
		Provider: defaultProvider(),
	}
	// Keys the file leaves out keep New's defaults.
	def := New("x")
	pdf.Repeats, pdf.MaxLines, pdf.MaxFiles, pdf.Staleness = def.Repeats, def.MaxLines, def.MaxFiles, def.Staleness
	pdf.MaxFileSize, pdf.Isolation, pdf.MemoryLimit = def.MaxFileSize, def.Isolation, def.MemoryLimit
	pdf.OracleReport, pdf.OracleFiles = def.OracleReport, def.OracleFiles
	pdf.Alpha, pdf.AlphaL1, pdf.HotChanges, pdf.RefileLimit, pdf.OracleTimeout = def.Alpha, def.AlphaL1, def.HotChanges, def.RefileLimit, def.OracleTimeout
	pdf.OfflineTimeout, pdf.Login = def.OfflineTimeout, def.Login
	pdf.MaxRepeats, pdf.Gate, pdf.PromisingRounds, pdf.Validation = def.MaxRepeats, def.Gate, def.PromisingRounds, def.Validation
	myLib := New("tools/my.lib")
	myLib.Name = "my.lib"
	zeta := New("zeta")
	zeta.Name = "Zeta"
	want := []*Library{zeta, myLib, pdf} // sorted by name, bytewise
	if len(libs) != len(want) {
		t.Fatalf("LoadAll = %d libraries, want %d", len(libs), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(libs[i], want[i]) {
			t.Errorf("library %d:\n got %+v\nwant %+v", i, libs[i], want[i])
		}
	}
}

func TestLoadAllWithoutFile(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	libs, err := LoadAll(ctx, repo)
	if err != nil || len(libs) != 0 {
		t.Errorf("LoadAll without %s = %v, %v; want none", FileName, libs, err)
	}
}

// Every key in Keys is accepted, so the list in error messages is true.
func TestEveryKeyParses(t *testing.T) {
	valid := map[string]string{"timeout": "1s", "propose-timeout": "1s", "tolerance": "1", "minibatch": "1",
		"delta": "0.5", "delta-floor": "0.1", "anneal": "3", "promote-after": "2",
		"base-url": "http://localhost:11434/v1", "request-timeout": "30s", "max-retries": "2", "concurrency": "3",
		"max-completion-tokens": "1000", "context-budget": "9000",
		"repeats": "3", "max-regressions": "1", "max-changed-lines": "50", "max-changed-files": "2",
		"staleness": "reflective", "alpha": "2", "alpha-l1": "0", "hot-changes": "3", "refile-limit": "2",
		"oracle-timeout": "1m", "fusion-tournament": "true", "temperature": "0.7",
		"max-repeats": "5", "gate": "mean", "promising-rounds": "4", "validation": "cross",
		"offline-timeout": "30s", "login": "user", "max-file-size": "512k", "binary": "true",
		"isolation": "bwrap", "network": "false", "memory-limit": "none", "cpu-limit": "10m", "oracle-report": "exit"}
	for _, k := range Keys {
		v, ok := valid[k]
		if !ok {
			v = "x"
		}
		l := New("lib")
		if err := l.set(k, v, map[string]bool{}); err != nil {
			t.Errorf("set(%q, %q) = %v", k, v, err)
		}
	}
}

func TestLoadAllErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		kvs  []string
		want []string // substrings of the error
	}{
		{"unknown key", []string{"library.pdf.path=p", "library.pdf.colour=red"},
			[]string{"library.pdf.colour", `"red"`, "unknown key", "valid: " + strings.Join(Keys, ", ")}},
		{"bad duration", []string{"library.pdf.path=p", "library.pdf.timeout=10 minutes"},
			[]string{"library.pdf.timeout", `"10 minutes"`}},
		{"bad propose-timeout", []string{"library.pdf.path=p", "library.pdf.propose-timeout=5"},
			[]string{"library.pdf.propose-timeout", `"5"`}},
		{"bad integer", []string{"library.pdf.path=p", "library.pdf.minibatch=four"},
			[]string{"library.pdf.minibatch", `"four"`}},
		{"fractional integer", []string{"library.pdf.path=p", "library.pdf.promote-after=2.5"},
			[]string{"library.pdf.promote-after", `"2.5"`}},
		{"bad float", []string{"library.pdf.path=p", "library.pdf.delta=0,2"},
			[]string{"library.pdf.delta", `"0,2"`}},
		{"bad float in a dotted name", []string{"library.my.lib.path=p", "library.my.lib.delta-floor=x"},
			[]string{"library.my.lib.delta-floor", `"x"`}},
		{"no path", []string{"library.pdf.scorer=exact"},
			[]string{`library "pdf" has no path`, "library.pdf.path"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, repo := gittest.NewRepo(t)
			setConfig(t, repo, c.kvs...)
			libs, err := LoadAll(ctx, repo)
			if err == nil {
				t.Fatalf("LoadAll = %v, want an error", libs)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestFind(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	setConfig(t, repo, "library.alpha.path=skills/alpha", "library.my.lib.path=tools/x")
	for _, c := range []struct {
		arg, want string
	}{
		{"alpha", "alpha"},
		{"my.lib", "my.lib"},
		{"skills/alpha", "alpha"},
		{"./skills/alpha/", "alpha"},
		{"tools/x", "my.lib"},
	} {
		l, err := Find(ctx, repo, c.arg)
		if err != nil {
			t.Errorf("Find(%q): %v", c.arg, err)
			continue
		}
		if l.Name != c.want {
			t.Errorf("Find(%q) = %q, want %q", c.arg, l.Name, c.want)
		}
	}
	for _, arg := range []string{"beta", "skills", "skills/alpha/sub", "Alpha"} {
		if l, err := Find(ctx, repo, arg); !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), arg) {
			t.Errorf("Find(%q) = %v, %v; want ErrNotConfigured naming it", arg, l, err)
		}
	}
	l, err := Find(ctx, repo, "")
	if err == nil || errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "2 libraries configured (alpha, my.lib)") {
		t.Errorf(`Find("") with two libraries = %v, %v; want an error listing both`, l, err)
	}
}

func TestFindDefault(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	if l, err := Find(ctx, repo, ""); !errors.Is(err, ErrNotConfigured) {
		t.Errorf(`Find("") with no libraries = %v, %v; want ErrNotConfigured`, l, err)
	}
	setConfig(t, repo, "library.only.path=skills/only")
	l, err := Find(ctx, repo, "")
	if err != nil || l.Name != "only" || l.Path != "skills/only" {
		t.Errorf(`Find("") with one library = %+v, %v`, l, err)
	}
}

// Provider settings layer: the user's git config, then .descent's
// [descent] section, then the library's own keys; a model alone selects
// the openai runner and proposer.
func TestProviderSettings(t *testing.T) {
	ctx, repo := gittest.NewRepo(t)
	t.Setenv("OPENAI_BASE_URL", "")
	gitConfig := func(k, v string) {
		t.Helper()
		if err := repo.ConfigSet(ctx, "", k, v); err != nil {
			t.Fatal(err)
		}
	}
	gitConfig("descent.base-url", "https://api.deepseek.com/v1/")
	gitConfig("descent.model", "deepseek-chat")
	gitConfig("descent.api-key-env", "DEEPSEEK_API_KEY")
	gitConfig("descent.deepseek-chat.input-price", "0.27")
	setConfig(t, repo,
		"descent.concurrency=2",
		"descent.deepseek-chat.output-price=1.1",
		"descent.gpt-4.1-mini.input-price=0.4",
		"library.a.path=a",
		"library.a.judge-model=gpt-4.1-mini",
		"library.b.path=b",
		"library.b.model=local",
		"library.b.run=my-agent",
		"library.b.base-url=http://localhost:11434/v1",
	)
	libs, err := LoadAll(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	a, b := libs[0].Provider, libs[1].Provider
	if a.BaseURL != "https://api.deepseek.com/v1" || a.Model != "deepseek-chat" || a.KeyEnv != "DEEPSEEK_API_KEY" || a.Concurrency != 2 {
		t.Errorf("a provider = %+v", a)
	}
	if a.ModelFor("judge") != "gpt-4.1-mini" || a.ModelFor("run") != "deepseek-chat" {
		t.Errorf("role models: judge %q run %q", a.ModelFor("judge"), a.ModelFor("run"))
	}
	if got := a.Prices["deepseek-chat"]; got != (Price{Input: 0.27, Output: 1.1}) {
		t.Errorf("price = %+v", got)
	}
	if libs[0].Run != RunnerOpenAI || libs[0].Proposer != RunnerOpenAI {
		t.Errorf("a run/proposer = %q/%q, want openai", libs[0].Run, libs[0].Proposer)
	}
	if b.Model != "local" || b.BaseURL != "http://localhost:11434/v1" || libs[1].Run != "my-agent" || libs[1].Proposer != RunnerOpenAI {
		t.Errorf("b = %+v run %q proposer %q", b, libs[1].Run, libs[1].Proposer)
	}
	t.Setenv("DEEPSEEK_API_KEY", "")
	if _, err := a.Key(); err == nil || !strings.Contains(err.Error(), "set the environment variable DEEPSEEK_API_KEY") {
		t.Errorf("missing key: %v", err)
	}
	t.Setenv("DEEPSEEK_API_KEY", "sk-x")
	if k, err := a.Key(); k != "sk-x" || err != nil {
		t.Errorf("key = %q, %v", k, err)
	}
	t.Setenv("DEEPSEEK_API_KEY", "")
	if k, err := b.Key(); k != "" || err != nil {
		t.Errorf("local endpoint without a key: %q, %v", k, err)
	}
	setConfig(t, repo, "descent.base-url=not a url")
	if _, err := LoadAll(ctx, repo); err == nil || !strings.Contains(err.Error(), `descent.base-url = "not a url": must be an http or https URL`) {
		t.Errorf("bad base-url: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for v, want := range map[string]int64{"65536": 65536, "512k": 512 << 10, "1M": 1 << 20, "2g": 2 << 30} {
		if got, err := parseSize(v); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"", "0", "-1", "1.5m", "m", "ten"} {
		if got, err := parseSize(v); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", v, got)
		}
	}
}

func TestNear(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"greter", "greeter", true}, {"greeter", "greeter", true}, {"gretr", "greeter", true}, {"pdf", "greeter", false}, {"skills/greter", "skills/greeter", true}} {
		if got := near(c.a, c.b); got != c.want {
			t.Errorf("near(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
