package ci

import (
	"strings"
	"testing"
	"time"

	"github.com/git-descent/git-descent/library"
)

func TestInstallVersion(t *testing.T) {
	for v, want := range map[string]string{
		"v0.4.0":                               "v0.4.0",
		"v1.2.3-rc.1":                          "v1.2.3-rc.1",
		"(devel)":                              "latest",
		"":                                     "latest",
		"v0.0.0-20261201120000-abcdef123456":   "latest",
		"v0.4.1-0.20261201120000-abcdef123456": "latest",
		"v0.4.0+dirty":                         "latest",
		"v0.4.0-rc.1+dirty":                    "latest",
	} {
		if got := InstallVersion(v); got != want {
			t.Errorf("InstallVersion(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 45 * time.Minute: "45m", 90 * time.Minute: "1h30m", 2*time.Hour + 30*time.Second: "2h0m30s", 30 * time.Second: "30s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(Duration(d)); err != nil || back != d {
			t.Errorf("Duration(%v) reads back as %v, %v", d, back, err)
		}
	}
}

// TestOptionsRefused refuses what a CI system cannot run or a workflow
// cannot hold, saying which flag.
func TestOptionsRefused(t *testing.T) {
	odd := library.New("skills/s")
	odd.Name = `we"ird name`
	newline := library.New("skills/new\nline")
	newline.Name = "s"
	for _, c := range []struct {
		lib  *library.Library
		set  func(*Options)
		want string
	}{
		{library.New("skills/s"), func(o *Options) { o.Workers = 0 }, "--workers 0: must be from 1 to 256"},
		{library.New("skills/s"), func(o *Options) { o.Workers = 257 }, "--workers 257"},
		{library.New("skills/s"), func(o *Options) { o.MaxTime = time.Second }, "--max-time 1s"},
		{library.New("skills/s"), func(o *Options) { o.Idle = 0 }, "--idle 0s"},
		{library.New("skills/s"), func(o *Options) { o.Version = "v1.0.0+dirty" }, `version "v1.0.0+dirty"`},
		{odd, func(*Options) {}, `library "we\"ird name": only a name of letters`},
		{newline, func(*Options) {}, `its path "skills/new\nline" cannot go into a workflow`},
	} {
		o := options(8)
		c.set(&o)
		_, err := GitHub(Input{Library: c.lib}, o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	o := options(201)
	if _, err := GitLab(Input{Library: library.New("skills/s")}, o); err == nil || !strings.Contains(err.Error(), "from 1 to 200") {
		t.Errorf("GitLab with 201 workers: %v", err)
	}
}

// TestWorkflowIsDeterministic writes the same bytes for the same input, so
// a regenerated file only differs where the configuration did.
func TestWorkflowIsDeterministic(t *testing.T) {
	lib := libraries()["command"]
	a, _ := GitHub(Input{Library: lib}, options(3))
	b, _ := GitHub(Input{Library: lib}, options(3))
	if string(a.Content) != string(b.Content) {
		t.Error("two runs wrote different workflows")
	}
	if !strings.HasPrefix(string(a.Content), header+"github odd.name_1 --workers 3 --max-time 1h --idle 20m`; its jobs install\n# git-descent v0.4.0. ") {
		t.Errorf("header:\n%s", strings.SplitN(string(a.Content), "\n", 2)[0])
	}
}
