// Package report renders a library's evolution as one self-contained HTML
// page: charts drawn with gonum/plot as inline SVG, the decisions with
// their diffs, the change from the start, the lift on the sealed test
// split with its interval, and the fusion and staleness statistics.
// Nothing in the page is fetched when it is viewed.
package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/ledger"
)

// Run is what the report shows, gathered from the journal, the
// repository and the rollout cache.
type Run struct {
	Library, Path string
	Generated     time.Time
	Start         git.Hash // where dev started
	Dev, Stable   git.Hash
	DevScore      float64
	StableScore   float64
	Rounds        []RoundPoint // dev's and stable's validation after each round
	Promotions    []ledger.Promotion
	Decisions     []ledger.Decision
	Diffs         map[git.Hash]string // each proposal's diff against its base, the library only
	FinalDiff     string              // the start → stable, the library only
	Spend         []SpendPoint
	Steps         []Step
	Fusion        ledger.FusionStats
	Lift          *Lift  // stable over the start on the test split
	LiftNote      string // why there is none
	Rollbacks     []ledger.Rollback
	Syncs         []ledger.Sync
}

// RoundPoint is the state one round left.
type RoundPoint struct {
	Round       int
	Dev, Stable float64
}

// SpendPoint is the run's spending when a record was made.
type SpendPoint struct {
	Minutes float64
	Tokens  int64
	Cost    float64
}

// Step is one worker step of the timeline, in seconds since the first.
type Step struct {
	Worker                         string
	Start, Rollout, Propose, Total float64
	Outcome                        ledger.Outcome
}

// Lift is the paired lift on the test split with its 95% interval.
type Lift struct {
	Mean, Lo, Hi float64
	Tasks        int
	Start, After float64 // the two versions' test scores
}

// FromHistory fills the series that come from the journal's records and
// decisions: rounds, promotions, spend, the timeline.
func (r *Run) FromHistory(history []ledger.Record, ds []ledger.Decision) {
	r.Decisions = ds
	var first time.Time
	for i, rec := range history {
		st := rec.State
		if i == 0 {
			first = rec.Time
		}
		r.Spend = append(r.Spend, SpendPoint{Minutes: rec.Time.Sub(first).Minutes(), Tokens: st.Tokens, Cost: st.Cost})
		if st.Round > 0 && (len(r.Rounds) == 0 || r.Rounds[len(r.Rounds)-1].Round != st.Round) {
			r.Rounds = append(r.Rounds, RoundPoint{Round: st.Round, Dev: st.DevScore, Stable: st.StableScore})
		} else if st.Round > 0 {
			r.Rounds[len(r.Rounds)-1] = RoundPoint{Round: st.Round, Dev: st.DevScore, Stable: st.StableScore}
		}
	}
	// Round 0 is the start: the first round measured the start as stable
	// (dev's baseline is the same version, on the same tasks).
	if len(r.Rounds) > 0 && len(history) > 0 {
		first := r.Rounds[0].Round
		var last *ledger.State // the first round's own record, its last
		for i := range history {
			if history[i].State.Round == first {
				last = &history[i].State
			}
		}
		if last != nil && last.Stable == history[0].State.Heads.Dev {
			r.Rounds = append([]RoundPoint{{Round: 0, Dev: last.StableScore, Stable: last.StableScore}}, r.Rounds...)
		}
	}
	if n := len(history); n > 0 {
		st := history[n-1].State
		r.Promotions, r.Fusion, r.Rollbacks, r.Syncs = st.Promotions, st.Fusion, st.Rollbacks, st.Syncs
		r.DevScore, r.StableScore = st.DevScore, st.StableScore
	}
	var t0 time.Time
	for _, d := range ds {
		if !d.Started.IsZero() && (t0.IsZero() || d.Started.Before(t0)) {
			t0 = d.Started
		}
	}
	for _, d := range ds {
		if d.Started.IsZero() || d.Seconds <= 0 {
			continue
		}
		r.Steps = append(r.Steps, Step{Worker: "w" + d.Worker, Start: d.Started.Sub(t0).Seconds(), Rollout: d.RolloutSeconds,
			Propose: d.ProposeSeconds, Total: d.Seconds, Outcome: d.Outcome})
	}
	sort.SliceStable(r.Steps, func(i, j int) bool { return ledger.WorkerLess(r.Steps[i].Worker[1:], r.Steps[j].Worker[1:]) })
}

// chart is one figure of the page.
type chart struct {
	Name, Title, Caption string
	SVG                  template.HTML
	Empty                string // why there is nothing to draw
}

// Write renders the page.
func Write(w io.Writer, r *Run) error {
	var charts []chart
	for _, c := range []struct {
		name, title, caption, empty string
		draw                        func(*Run) (string, error)
	}{
		{"validation", "Validation and test", "dev's and stable's mean reward on validation after each round; triangles are promotions of stable, squares the sealed test split where it was scored (the start, and each promotion)", "no round has been decided yet", scorePlot},
		{"outcomes", "Decisions per round", "every proposal's outcome, round by round", "no decision yet", outcomePlot},
		{"spend", "Tokens and cost", "what the runs had spent when each journal record was made", "the agents reported no tokens and no cost (commands report none)", spendPlot},
		{"timeline", "Workers", "each worker's steps: rolling out its minibatch, proposing, measuring its edit; gaps are waits (for the round, a slot or a decision)", "no step with timings recorded (runs before this version of git-descent did not record them)", timelinePlot},
	} {
		s, err := c.draw(r)
		if err != nil {
			return fmt.Errorf("report: %s chart: %w", c.name, err)
		}
		ch := chart{Name: c.name, Title: c.title, Caption: c.caption, SVG: template.HTML(s)}
		if s == "" {
			ch.Empty = c.empty
		}
		charts = append(charts, ch)
	}
	return page.Execute(w, view{Run: r, Charts: charts, Stats: stats(r), Palette: palette()})
}

type view struct {
	*Run
	Charts  []chart
	Stats   []string
	Palette string // the series colours, for the page's own check
}

// stats are the fusion and staleness statistics, as sentences.
func stats(r *Run) []string {
	var out []string
	n, stale, rebased, maxEta := 0, 0, 0, 0
	for _, d := range r.Decisions {
		if d.Proposal.IsZero() {
			continue
		}
		n++
		if d.Staleness > 0 {
			stale++
		}
		if d.Rebased {
			rebased++
		}
		maxEta = max(maxEta, d.Staleness)
	}
	out = append(out, fmt.Sprintf("Staleness: %s decisions were on a dev that had changed their files since their base (%s at most); %s rebased onto the current dev and re-checked.",
		fmtShare(stale, n), count(maxEta, "time", "times"), count(rebased, "was", "were")))
	f := r.Fusion
	out = append(out, fmt.Sprintf("Fusion: %s of compatible proposals went to the gate; %s duplicated another.", count(f.Fused, "fusion", "fusions"), count(f.NothingToFuse, "proposal", "proposals")))
	if f.Contested > 0 {
		out = append(out, fmt.Sprintf("Fusion tournament: %d fusions ranked against their best single member: fused won %d, single won %d, %d ties; mean gain %+.3f.", f.Contested, f.FusedWins, f.SingleWins, f.Ties, f.GainSum/float64(f.Contested)))
	}
	if len(r.Rollbacks) > 0 {
		out = append(out, fmt.Sprintf("Rollbacks of dev to stable: %d.", len(r.Rollbacks)))
	}
	if len(r.Syncs) > 0 {
		out = append(out, fmt.Sprintf("Syncs of the user's branch into dev: %d.", len(r.Syncs)))
	}
	return out
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"short": func(h git.Hash) string { return h.Short() },
	"f2":    func(f float64) string { return fmt.Sprintf("%.2f", f) },
	// A signed number is plain text; as HTML its + stays a +.
	"sf2": func(f float64) template.HTML { return template.HTML(fmt.Sprintf("%+.2f", f)) },
	"gate": func(d ledger.Decision) string {
		if d.Gate == nil {
			return ""
		}
		return fmt.Sprintf("%.2f → %.2f, P=%.2f", d.Gate.Before, d.Gate.After, d.Gate.P)
	},
	"diff": func(r *Run, h git.Hash) string { return r.Diffs[h] },
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"lines": func(s string) []string {
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	},
	"kind": func(line string) string {
		switch {
		case strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---"):
			return "h"
		case strings.HasPrefix(line, "+"):
			return "a"
		case strings.HasPrefix(line, "-"):
			return "d"
		case strings.HasPrefix(line, "@@"):
			return "h"
		}
		return ""
	},
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>git descent report: {{.Library}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.sub { color: #666; }
figure { margin: 1.5em 0; }
figcaption { color: #555; font-size: 0.9em; }
figure svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { text-align: left; padding: 0.3em 0.5em; border-bottom: 1px solid #eee; vertical-align: top; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
.committed { color: #2ca02c; font-weight: 600; } .rejected { color: #d62728; } .promising { color: #ff7f0e; }
pre { background: #f7f7f7; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
pre .a { color: #1a7f37; } pre .d { color: #cf222e; } pre .h { color: #6e7781; }
.lift { font-size: 1.15em; }
</style>
</head>
<body data-palette="{{.Palette}}">
<h1>{{.Library}} <span class="sub">({{.Path}})</span></h1>
<p class="sub">git descent report, {{when .Generated}}. dev {{short .Dev}} (validation {{f2 .DevScore}}), stable {{short .Stable}} (validation {{f2 .StableScore}}), started from {{short .Start}}.</p>

<h2>The result</h2>
{{with .Lift}}<p class="lift">On the sealed test split ({{.Tasks}} tasks, never used to decide): {{f2 .Start}} at the start, {{f2 .After}} for stable; lift {{sf2 .Mean}} (95% interval {{sf2 .Lo}} to {{sf2 .Hi}}).</p>
{{else}}<p>No lift on the test split: {{.LiftNote}}</p>{{end}}

{{range .Charts}}<figure data-plot="{{.Name}}">
<h2>{{.Title}}</h2>
{{if .Empty}}<p class="sub">Nothing to draw: {{.Empty}}.</p>{{else}}{{.SVG}}{{end}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}

<h2>Statistics</h2>
<ul>{{range .Stats}}<li>{{.}}</li>{{end}}</ul>

<h2>Decisions</h2>
<table>
<tr><th>round</th><th>worker</th><th>proposal</th><th>outcome</th><th>validation</th><th>subject and reason</th></tr>
{{$run := .Run}}{{range .Decisions}}<tr>
<td class="num">{{.Round}}</td><td>w{{.Worker}}</td><td class="num">{{if .Proposal}}{{short .Proposal}}{{else}}–{{end}}</td>
<td class="{{.Outcome}}">{{.Outcome}}</td><td class="num">{{gate .}}</td>
<td>{{.Subject}}{{if .Subject}}<br>{{end}}<span class="sub">{{.Reason}}</span>
{{with diff $run .Proposal}}<details><summary>diff</summary><pre>{{range lines .}}<span class="{{kind .}}">{{.}}</span>
{{end}}</pre></details>{{end}}</td>
</tr>
{{end}}</table>

<h2>From the start to stable</h2>
{{if .FinalDiff}}<pre>{{range lines .FinalDiff}}<span class="{{kind .}}">{{.}}</span>
{{end}}</pre>{{else}}<p class="sub">stable is still where dev started.</p>{{end}}

<script>
// For anyone (and the tests) checking the page in a browser: how many
// data marks each chart drew (elements in a series colour; axes and grid
// have none), on its figure.
var palette = document.body.getAttribute("data-palette").split(",");
document.querySelectorAll("figure[data-plot]").forEach(function (f) {
  var n = 0;
  f.querySelectorAll("svg *").forEach(function (el) {
    var style = (el.getAttribute("style") || "").toUpperCase();
    if (palette.some(function (c) { return style.indexOf(c) >= 0; })) { n++; }
  });
  f.setAttribute("data-marks", n);
});
document.body.setAttribute("data-ready", "yes");
</script>
</body>
</html>
`

// count is "1 fusion" or "3 fusions"; with a verb, "1 was" or "3 were".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
