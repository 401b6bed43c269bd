package report

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The palette: one colour per series, the same in every chart.
var (
	blue   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	orange = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	green  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	red    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	purple = color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}
	grey   = color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}
	brown  = color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}
)

// svg renders p as an SVG element to inline in the page (no XML
// declaration).
func svg(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return s, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Legend.Top, p.Legend.Left = false, false
	p.Add(plotter.NewGrid())
	return p
}

// wholeTicks marks an axis of counts (rounds) at whole numbers only.
var wholeTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	step := max(1, int((hi-lo)/8+0.5))
	var ts []plot.Tick
	for v := int(lo); float64(v) <= hi; v++ {
		t := plot.Tick{Value: float64(v)}
		if (v-int(lo))%step == 0 {
			t.Label = fmt.Sprint(v)
		}
		ts = append(ts, t)
	}
	return ts
})

// roomForLegend widens the x axis on the right, so that a legend in the
// top right corner covers no data.
func roomForLegend(p *plot.Plot) {
	p.X.Max += (p.X.Max - p.X.Min) * 0.35
}

func line(p *plot.Plot, name string, xys plotter.XYs, c color.Color, dashed bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	l.Color, pts.Color = c, c
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	pts.Shape = draw.CircleGlyph{}
	pts.Radius = vg.Points(2)
	p.Add(l, pts)
	p.Legend.Add(name, l)
	return nil
}

func marks(p *plot.Plot, name string, xys plotter.XYs, c color.Color, shape draw.GlyphDrawer) error {
	if len(xys) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	s.Color, s.Shape, s.Radius = c, shape, vg.Points(4)
	p.Add(s)
	p.Legend.Add(name, s)
	return nil
}

// scorePlot: dev's and stable's validation after each round, promotions
// marked, test scores where they were measured.
func scorePlot(r *Run) (string, error) {
	p := newPlot("Validation and test over rounds", "round (0: the start)", "mean reward")
	p.Y.Min, p.Y.Max = 0, 1.05
	var dev, stable, promo, test plotter.XYs
	for _, pt := range r.Rounds {
		dev = append(dev, plotter.XY{X: float64(pt.Round), Y: pt.Dev})
		stable = append(stable, plotter.XY{X: float64(pt.Round), Y: pt.Stable})
	}
	for _, pm := range r.Promotions {
		promo = append(promo, plotter.XY{X: float64(pm.Round), Y: pm.Dev})
		if pm.DevTest != nil {
			test = append(test, plotter.XY{X: float64(pm.Round), Y: *pm.DevTest})
		}
	}
	if r.Lift != nil && len(r.Rounds) > 0 {
		// The test split as the report read it from the cache: the start,
		// and stable as it is now.
		test = append(test, plotter.XY{X: 0, Y: r.Lift.Start}, plotter.XY{X: float64(r.Rounds[len(r.Rounds)-1].Round), Y: r.Lift.After})
	}
	for _, err := range []error{
		line(p, "dev (validation)", dev, blue, false),
		line(p, "stable (validation)", stable, green, true),
		marks(p, "promotion", promo, orange, draw.TriangleGlyph{}),
		marks(p, "test (sealed)", test, purple, draw.SquareGlyph{}),
	} {
		if err != nil {
			return "", err
		}
	}
	p.X.Tick.Marker = wholeTicks
	roomForLegend(p)
	return svg(p, 7*vg.Inch, 3.2*vg.Inch)
}

// outcomeKinds groups outcomes into the stacks of the outcomes chart.
var outcomeKinds = []struct {
	name  string
	color color.Color
	match func(string) bool
}{
	{"committed", green, func(o string) bool { return o == "committed" }},
	{"promising", orange, func(o string) bool { return o == "promising" }},
	{"rejected", red, func(o string) bool { return o == "rejected" || o == "oracle-veto" }},
	{"duplicate or no change", grey, func(o string) bool { return o == "duplicate" || o == "no-change" }},
	{"stale, conflicting or repaired", blue, func(o string) bool {
		return strings.HasPrefix(o, "conflict") || o == "stale" || o == "expired" || strings.HasPrefix(o, "repair")
	}},
	{"failed or invalid", brown, func(o string) bool { return o == "proposer-failed" || o == "invalid" || o == "oversized" }},
}

// outcomePlot: decisions per round, stacked by kind.
func outcomePlot(r *Run) (string, error) {
	p := newPlot("Decisions per round", "round", "decisions")
	p.Legend.Top = true
	rounds := 0
	for _, d := range r.Decisions {
		rounds = max(rounds, d.Round)
	}
	if rounds == 0 {
		return "", nil
	}
	var below *plotter.BarChart
	for _, k := range outcomeKinds {
		vals := make(plotter.Values, rounds)
		any := false
		for _, d := range r.Decisions {
			if d.Round > 0 && k.match(string(d.Outcome)) {
				vals[d.Round-1]++
				any = true
			}
		}
		if !any {
			continue
		}
		b, err := plotter.NewBarChart(vals, vg.Points(10))
		if err != nil {
			return "", err
		}
		b.Color, b.LineStyle.Width, b.XMin = k.color, 0, 1
		if below != nil {
			b.StackOn(below)
		}
		p.Add(b)
		p.Legend.Add(k.name, b)
		below = b
	}
	p.X.Tick.Marker = wholeTicks
	roomForLegend(p)
	return svg(p, 7*vg.Inch, 3*vg.Inch)
}

// spendPlot: tokens and dollars spent by the end of each record.
func spendPlot(r *Run) (string, error) {
	spent := false
	for _, s := range r.Spend {
		spent = spent || s.Tokens > 0 || s.Cost > 0
	}
	if !spent {
		return "", nil
	}
	p := newPlot("Spend over time", "minutes since the first record", "tokens (thousands)")
	var toks plotter.XYs
	maxCost := 0.0
	for _, s := range r.Spend {
		toks = append(toks, plotter.XY{X: s.Minutes, Y: float64(s.Tokens) / 1000})
		maxCost = max(maxCost, s.Cost)
	}
	if err := line(p, "tokens", toks, blue, false); err != nil {
		return "", err
	}
	if maxCost > 0 {
		p.Y.Label.Text = "tokens (thousands) · cost (cents)"
		var cost plotter.XYs
		for _, s := range r.Spend {
			cost = append(cost, plotter.XY{X: s.Minutes, Y: s.Cost * 100})
		}
		if err := line(p, "cost (cents)", cost, red, true); err != nil {
			return "", err
		}
	}
	return svg(p, 7*vg.Inch, 3*vg.Inch)
}

// timelinePlot: per worker, each step as rolling out, proposing and
// measuring; the gaps between are waits.
func timelinePlot(r *Run) (string, error) {
	if len(r.Steps) == 0 {
		return "", nil
	}
	p := newPlot("Workers over time", "seconds since the first step", "")
	p.Legend.Top = true
	var names []string
	row := map[string]int{}
	for _, s := range r.Steps {
		if _, ok := row[s.Worker]; !ok {
			row[s.Worker] = len(names)
			names = append(names, s.Worker)
		}
	}
	legend := map[string]bool{}
	bar := func(name string, c color.Color, y, from, to float64) error {
		if to <= from {
			return nil
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: y - 0.35}, {X: to, Y: y - 0.35}, {X: to, Y: y + 0.35}, {X: from, Y: y + 0.35}})
		if err != nil {
			return err
		}
		poly.Color, poly.LineStyle.Width = c, 0
		p.Add(poly)
		if !legend[name] {
			legend[name] = true
			p.Legend.Add(name, poly)
		}
		return nil
	}
	for _, s := range r.Steps {
		y := float64(row[s.Worker])
		t0, t1, t2, t3 := s.Start, s.Start+s.Rollout, s.Start+s.Rollout+s.Propose, s.Start+s.Total
		for _, err := range []error{
			bar("rolling out", blue, y, t0, t1),
			bar("proposing", orange, y, t1, t2),
			bar("measuring its edit", green, y, t2, t3),
		} {
			if err != nil {
				return "", err
			}
		}
	}
	p.NominalY(names...)
	roomForLegend(p)
	return svg(p, 7*vg.Inch, vg.Length(1.2+0.35*float64(len(names)))*vg.Inch)
}

// fmtShare is "3 of 10 (30%)".
func fmtShare(n, of int) string {
	if of == 0 {
		return "0"
	}
	return fmt.Sprintf("%d of %d (%.0f%%)", n, of, 100*float64(n)/float64(of))
}

// palette lists the series colours as SVG writes them, "#1F77B4,...".
func palette() string {
	var hex []string
	for _, c := range []color.RGBA{blue, orange, green, red, purple, grey, brown} {
		hex = append(hex, fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B))
	}
	return strings.Join(hex, ",")
}
