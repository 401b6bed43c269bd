package accept

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The per-task posteriors, against values worked out by hand from the
// model's formulas (see the comments for the arithmetic).
func TestFlipTaskByHand(t *testing.T) {
	// f = 0.1, π = 0.2, one rollout each, candidate passes, dev fails:
	// (1,0): π/2·0.9·0.9 = 0.081; (0,1): π/2·0.1·0.1 = 0.001;
	// (0,0)+(1,1): 0.4·(0.1·0.9 + 0.9·0.1) = 0.072; Z = 0.154.
	post, logZ := flipTask(pair{cand: []float64{1}, dev: []float64{0}}, 0.1, 0.2)
	want := [3]float64{0.001 / 0.154, 0.072 / 0.154, 0.081 / 0.154}
	for k := range want {
		if !near(post[k], want[k], 1e-12) {
			t.Errorf("post = %v, want %v", post, want)
		}
	}
	if !near(logZ, math.Log(0.154), 1e-12) {
		t.Errorf("logZ = %v, want log 0.154", logZ)
	}
	// f = 0.2, π = ½, candidate passes twice, dev fails once and passes once:
	// (1,0): ¼·0.64·0.16 = 0.0256; (0,1): ¼·0.04·0.16 = 0.0016;
	// (0,0)+(1,1): ¼·(0.04·0.16 + 0.64·0.16) = 0.0272; Z = 0.0544.
	post, logZ = flipTask(pair{cand: []float64{1, 1}, dev: []float64{0, 1}}, 0.2, 0.5)
	want = [3]float64{0.0016 / 0.0544, 0.0272 / 0.0544, 0.0256 / 0.0544}
	for k := range want {
		if !near(post[k], want[k], 1e-12) {
			t.Errorf("post = %v, want %v", post, want)
		}
	}
	if !near(logZ, math.Log(0.0544), 1e-12) {
		t.Errorf("logZ = %v, want log 0.0544", logZ)
	}
}

func TestSumAboveByHand(t *testing.T) {
	// S > 0 for two tasks: (+1,+1) 0.4·0.5 + (+1,0) 0.4·0.3 + (0,+1) 0.5·0.5.
	if got := sumAbove([][3]float64{{0.1, 0.5, 0.4}, {0.2, 0.3, 0.5}}); !near(got, 0.57, 1e-12) {
		t.Errorf("sumAbove = %v, want 0.57", got)
	}
	if got := sumAbove(nil); got != 0 {
		t.Errorf("sumAbove(nil) = %v: no task, no gain", got)
	}
	if got := sumAbove([][3]float64{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}}); got != 0 {
		t.Errorf("one certain win and one certain loss: P(S>0) = %v, want 0", got)
	}
	// Beyond exactUpTo tasks the normal approximation stays close to the
	// exact sum (computed here by the same convolution).
	var many [][3]float64
	for i := 0; i < 100; i++ {
		many = append(many, [3]float64{0.05, 0.9, 0.05})
	}
	many[0] = [3]float64{0, 0.1, 0.9}
	many[1] = [3]float64{0, 0.2, 0.8}
	if got, want := sumAbove(many), exactSumAbove(many); !near(got, want, 0.02) {
		t.Errorf("normal approximation %v, exact %v", got, want)
	}
}

func exactSumAbove(posts [][3]float64) float64 {
	dist := map[int]float64{0: 1}
	for _, p := range posts {
		next := map[int]float64{}
		for s, q := range dist {
			next[s-1] += q * p[0]
			next[s] += q * p[1]
			next[s+1] += q * p[2]
		}
		dist = next
	}
	var above float64
	for s, q := range dist {
		if s > 0 {
			above += q
		}
	}
	return above
}

func TestJumpTaskByHand(t *testing.T) {
	// ε = 0.22 (a stray reward is any of the 11 grid points with 0.02 each),
	// π = 0.45, candidate 1.0 against dev 0.0 once each. The likelihood of
	// the candidate's reward is 0.80 at true 1.0 and 0.02 elsewhere; dev's
	// 0.80 at true 0.0. Equal true pairs sum to A = 0.016 + 0.016 + 9·0.0004
	// = 0.0356; all pairs to 1·1, so unequal ones to 0.9644. Weights: equal
	// (1−π)/11 = 0.05, unequal π/110 = 0.0040909; Z = 0.00178 + 0.0039453 =
	// 0.0057253. P(d = 0) = 0.00178/Z = 0.310902; P(d = +1) =
	// 0.0040909·0.64/Z = 0.457303.
	jp := jumpPairs([]pair{{cand: []float64{1}, dev: []float64{0}}}, 0.22, nil)[0]
	post, logZ := jumpPost(jp, 0.45)
	if !near(post.kinds[1], 0.3109022198227952, 1e-9) || !near(logZ, math.Log(0.005725272727272729), 1e-9) {
		t.Errorf("P(same) = %v, logZ = %v", post.kinds[1], logZ)
	}
	if d, _ := jumpDist(jp, 0.45); !near(d[2*steps], 0.45730255009685916, 1e-9) || !near(d[steps], post.kinds[1], 1e-12) {
		t.Errorf("dist = %v", d)
	}
	// The rest, summed over every unequal pair by a direct loop (Python,
	// from the same formulas): mean 0.557337, variance 0.216845,
	// P(d < 0) 0.015720, P(d > 0) 0.673378.
	if !near(post.mean, 0.5573374829305473, 1e-9) || !near(post.variance, 0.21684484024798778, 1e-9) ||
		!near(post.kinds[0], 0.015719775159579518, 1e-9) || !near(post.kinds[2], 0.6733780050176256, 1e-9) {
		t.Errorf("post = %+v", post)
	}
	// One uncertain task alone: P(S > 0) is exactly its P(d > 0), which the
	// normal approximation would overstate.
	if got := gradedAbove([]jumpPair{jp}, 0.45); !near(got, post.kinds[2], 1e-12) {
		t.Errorf("gradedAbove = %v, want %v", got, post.kinds[2])
	}
}

// judge averages over the grid weighted by prior × pool × the gate's own
// data: two points, f = 0.05 (weight 1) and f = 0.3 (weight 2), both with
// π = ½, two tasks, one won and one tied. Worked out by hand from
// flipTask's formulas: P = 0.6049145833, mean noise 0.2166666667.
func TestJudgeIntegratesNoiseLevels(t *testing.T) {
	m := noiseModel{level: []level{{0.05, 0.5}, {0.3, 0.5}}, logw: []float64{0, math.Log(2)}}
	j := m.judge([]pair{{cand: []float64{1}, dev: []float64{0}}, {cand: []float64{1}, dev: []float64{1}}})
	if !near(j.P, 0.6049145833333333, 1e-9) || !near(j.Noise, 0.21666666666666665, 1e-9) {
		t.Fatalf("judge = %+v", j)
	}
}

func TestGroupLikelihood(t *testing.T) {
	// Two agreeing passes at f: ½((1−f)² + f²) over the unknown truth.
	if got, want := groupLogLik([]float64{1, 1}, 0.1, false), math.Log(0.5*(0.81+0.01)); !near(got, want, 1e-12) {
		t.Errorf("binary = %v, want %v", got, want)
	}
	// One pass, one fail: ½(f(1−f) + (1−f)f).
	if got, want := groupLogLik([]float64{1, 0}, 0.1, false), math.Log(0.09); !near(got, want, 1e-12) {
		t.Errorf("binary = %v, want %v", got, want)
	}
	// Graded, two rewards of 0.5 at ε = 0.3: true 0.5 gives (0.7 + 0.3/11)²,
	// each of the 10 other grid rewards (0.3/11)², each true reward 1/11.
	if got, want := groupLogLik([]float64{0.5, 0.5}, 0.3, true), -3.0208381946850675; !near(got, want, 1e-12) {
		t.Errorf("graded = %v, want %v", got, want)
	}
}

// agreeing returns n groups of two equal rewards: a reproducible agent.
func agreeing(n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{float64(i % 2), float64(i % 2)}
	}
	return out
}

// flipping returns n groups of two rewards, half of which disagree: a
// coin-flip agent.
func flipping(n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{1, float64(i % 2)}
	}
	return out
}

// one task won against seventeen unchanged, with the win seen reps times.
func oneWin(reps int) []pair {
	ps := []pair{{cand: repeat(1, reps), dev: repeat(0, reps)}}
	for i := 0; i < 17; i++ {
		ps = append(ps, pair{cand: []float64{float64(i % 2)}, dev: []float64{float64(i % 2)}})
	}
	return ps
}

// What the model is for: a reproducible agent's one-task gain passes once
// confirmed; a coin-flip agent's apparent gains do not.
func TestModelSeparatesReproducibleFromNoisy(t *testing.T) {
	repro := newNoiseModel(agreeing(12), false)
	if p := repro.judge(oneWin(2)).P; p <= 0.9 {
		t.Errorf("reproducible agent, one task won twice: P = %.3f, want > 0.9", p)
	}
	if p := repro.judge(oneWin(1)).P; p >= 0.9 {
		t.Errorf("one task won once is less sure: P = %.3f", p)
	}
	if c := repro.judge(oneWin(1)).Certain[0]; c >= certain {
		t.Errorf("a single sample should call for a re-roll: certain = %.3f", c)
	}
	coin := newNoiseModel(flipping(12), false)
	ps := []pair{}
	for i := 0; i < 18; i++ {
		ps = append(ps, pair{cand: []float64{1}, dev: []float64{float64(i % 3 / 2)}}) // 12 "wins", no loss
	}
	if p := coin.judge(ps).P; p > 0.8 {
		t.Errorf("coin-flip agent: P = %.3f, want ≤ 0.8 however it looks", p)
	}
	if p := coin.judge(oneWin(4)).P; p > 0.8 {
		t.Errorf("coin-flip agent, one task won four times: P = %.3f", p)
	}
	if n := coin.meanNoise(); n < 0.2 {
		t.Errorf("coin-flip agent's flip rate = %.3f, want near ½", n)
	}
	if n := repro.meanNoise(); n > 0.05 {
		t.Errorf("reproducible agent's flip rate = %.3f, want near 0", n)
	}
}

func TestSmallestGain(t *testing.T) {
	if k := SmallestGain(18, agreeing(12), 0.2, 4); k != 1 {
		t.Errorf("reproducible: smallest gain = %d, want 1", k)
	}
	if k := SmallestGain(18, flipping(40), 0.2, 1); k == 1 {
		t.Errorf("coin flip without repeats: a one-task gain passes")
	}
}

func TestLiftIntervalStaysPossible(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []float64
	}{
		{"three tasks, one gained", []float64{1, 0, 0}, []float64{0, 0, 0}},
		{"all gained", repeat(1, 11), repeat(0, 11)},
		{"all lost", repeat(0, 5), repeat(1, 5)},
		{"graded", []float64{1, 0.5, 0.25, 1}, []float64{0.25, 0.5, 0.5, 0}},
	} {
		lo, hi := LiftInterval(c.a, c.b, 0.95)
		var m float64
		for i := range c.a {
			m += c.a[i] - c.b[i]
		}
		m /= float64(len(c.a))
		if !(lo >= -1 && hi <= 1 && lo <= m && m <= hi) {
			t.Errorf("%s: interval [%.3f, %.3f] around %.3f", c.name, lo, hi, m)
		}
	}
	// Three pass/fail tasks, one gained: wide, but not the t interval's
	// −1.10 to +1.77.
	lo, hi := LiftInterval([]float64{1, 0, 0}, []float64{0, 0, 0}, 0.95)
	if lo > 0 || hi < 0.5 {
		t.Errorf("one of three: [%.3f, %.3f] is too narrow for three tasks", lo, hi)
	}
	// Eleven of eleven gained: the interval is below 1 at the low end.
	lo, hi = LiftInterval(repeat(1, 11), repeat(0, 11), 0.95)
	if !(lo > 0.5 && lo < 0.99 && hi > 0.99) { // 2.5% of Dirichlet(11.5, ½, ½) is 0.566
		t.Errorf("eleven of eleven: [%.3f, %.3f]", lo, hi)
	}
}

// The Dirichlet interval, against a brute-force Monte Carlo of the same
// posterior.
func TestDirichletIntervalMatchesSampling(t *testing.T) {
	lo, hi := dirichletDiffInterval(3.5, 5.5, 1.5, 0.9)
	// Quantiles of p₊ − p₋ under Dirichlet(3.5, 5.5, 1.5), sampled with
	// 400 000 draws offline (Python, gamma variates): 5% ≈ −0.1390, 95% ≈ 0.5085.
	if !near(lo, -0.1390, 0.005) || !near(hi, 0.5085, 0.005) {
		t.Errorf("interval = [%.4f, %.4f]", lo, hi)
	}
}

// The graded model: a reproducible agent's one-task gain of a third passes
// once confirmed; a jumpy agent's apparent losses on unchanged tasks are
// not taken for regressions.
func TestGradedModel(t *testing.T) {
	steady := [][]float64{{0.33, 0.33}, {0.67, 0.67}, {0, 0}, {1, 1}, {0.33, 0.33}, {0.67, 0.67}, {0, 0}, {1, 1}, {0.33, 0.33}, {0.67, 0.67}}
	m := newNoiseModel(steady, true)
	ps := []pair{{cand: []float64{0.67, 0.67}, dev: []float64{0.33, 0.33}}}
	for i := 0; i < 11; i++ {
		v := float64(i%4) / 3
		ps = append(ps, pair{cand: []float64{v}, dev: []float64{v}})
	}
	if p := m.judge(ps).P; p <= 0.9 {
		t.Errorf("reproducible, +⅓ on one task seen twice: P = %.3f", p)
	}
	// A jumpy agent: one of five repeats drops a third.
	var jumpy [][]float64
	for i := 0; i < 20; i++ {
		g := []float64{0.67, 0.67}
		if i%5 == 0 {
			g[1] = 0.33
		}
		jumpy = append(jumpy, g)
	}
	m = newNoiseModel(jumpy, true)
	ps = nil
	for i := 0; i < 12; i++ {
		ps = append(ps, pair{cand: []float64{0.67}, dev: []float64{0.67}})
	}
	ps[0].cand, ps[1].cand = []float64{0.33}, []float64{0.33} // two jumps down
	j := m.judge(ps)
	if j.Worse[0] > 0.5 || j.Certain[0] >= certain {
		t.Errorf("a single jump on an unchanged task reads as a sure loss: worse %.3f, certain %.3f", j.Worse[0], j.Certain[0])
	}
}
