package accept

import (
	"math"
	"sort"

	"github.com/git-descent/git-descent/ledger"
)

// The gate's model of an agent's noise (DESIGN.md, decision 32).
//
// Every validation task has a true, noise-free result for each version: for
// pass/fail rewards a true outcome t ∈ {0, 1}, which each rollout reports
// flipped with probability f (the agent's flip rate); for graded rewards a
// true reward μ on the grid 0, 0.1, …, 1, which each rollout reports
// exactly, except that with probability ε it reports a reward drawn at
// random from the grid (a forgotten fact, a judge in a bad mood: noise
// that jumps, which a Gaussian would mistake for real change). The flip
// model is the jump model on the grid {0, 1} with f = ε/2. The candidate
// is better when its true results, summed over the tasks compared, exceed
// dev's: S = Σ d_i > 0, where d_i is the candidate's true result on task i
// minus dev's.
//
// A priori each task is unchanged by the candidate (d_i = 0) with
// probability 1−π and changed with probability π, split evenly between
// better and worse (pass/fail), or between every other pair of grid
// rewards (graded). Neither π nor the noise level is known: they have a
// grid of values weighted by their priors (π ~ Beta(1, 2): a candidate
// usually changes few tasks, but may change many; Beta(½,½) on 2f and on
// ε) and by the likelihood of every repeated rollout seen so far (the
// pool, which informs the noise only) and of the gate's own data, and
// P(S > 0) is averaged over the grid. So a fusion that changes many tasks
// is not mistaken for noise, and one that changes a single task is not
// credited with hidden changes elsewhere. With a reproducible agent (no
// repeat ever disagreed) the posterior puts the noise near 0, where every
// observed difference is real: a candidate that fixes one task and breaks
// none is better with near certainty once that task was seen twice. With
// a coin-flip agent (f = ½) observations carry no information and
// P(S > 0) stays at its prior, below ½.

const (
	noiseGrid  = 48 // noise levels (f or ε)
	changeGrid = 10 // values of π
	steps      = 10 // graded rewards live on the grid 0, 1/steps, …, 1
	exactUpTo  = 64 // pass/fail tasks up to which P(S > 0) is summed exactly, not by the normal approximation
	// exactGraded is the most graded tasks with a chance of having changed
	// whose sum is convolved exactly; beyond, the normal approximation.
	exactGraded = 12
)

// level is one point of the grid: a noise level (f, or ε when graded) and
// a change prior π.
type level struct{ noise, pi float64 }

// noiseModel is the grid with the log of each point's prior weight times
// the likelihood of the pooled repeats.
type noiseModel struct {
	graded bool
	level  []level
	logw   []float64
}

// newNoiseModel builds the grid and weighs it with pool: groups of rewards,
// each the repeated rollouts of one version on one task.
func newNoiseModel(pool [][]float64, graded bool) noiseModel {
	m := noiseModel{graded: graded}
	var noise []float64
	for j := 0; j < noiseGrid; j++ {
		// x = sin²θ with θ uniform on (0, π/2) is Beta(½,½): equal weights.
		th := (float64(j) + 0.5) * (math.Pi / 2) / noiseGrid
		x := math.Sin(th) * math.Sin(th)
		if !graded {
			x /= 2 // x is 2f
		}
		noise = append(noise, x)
	}
	for _, v := range noise {
		var pooled float64
		for _, g := range pool {
			pooled += groupLogLik(g, v, graded)
		}
		for k := 0; k < changeGrid; k++ {
			pi := (float64(k) + 0.5) / changeGrid
			m.level = append(m.level, level{noise: v, pi: pi})
			m.logw = append(m.logw, pooled+math.Log(1-pi)) // π ~ Beta(1, 2)
		}
	}
	return m
}

// groupLogLik is the log likelihood of one version's repeated rewards on one
// task at noise level v, its unknown true result integrated out (pass or
// fail with probability ½; a graded reward uniform on the grid).
func groupLogLik(g []float64, v float64, graded bool) float64 {
	if graded {
		l := jumpLikes(g, v)
		var s float64
		for _, x := range l {
			s += x
		}
		return math.Log(s / (steps + 1))
	}
	k, p := float64(len(g)), passes(g)
	lf, l1f := math.Log(v), math.Log1p(-v)
	return logSumExp(p*l1f+(k-p)*lf, p*lf+(k-p)*l1f) + math.Log(0.5)
}

// meanNoise is the posterior mean noise level given the pool alone.
func (m noiseModel) meanNoise() float64 {
	w := normalize(m.logw)
	var s float64
	for j, l := range m.level {
		s += w[j] * l.noise
	}
	return s
}

// pair is one task under comparison: the candidate's and dev's rewards so
// far, one per rollout. Both are non-empty.
type pair struct{ cand, dev []float64 }

// judgement is what the model concludes about a comparison.
type judgement struct {
	P       float64   // P(S > 0)
	Mean    float64   // E[S]: the expected true gain, in tasks (graded: summed reward)
	Worse   []float64 // per task: P(d_i < 0)
	Certain []float64 // per task: the posterior mass of its most likely kind of change (worse, none, better)
	Noise   float64   // posterior mean noise level, given the pool and these data
}

// negligible is the probability below which a task's chance of having
// changed, or a posterior mass in a sum, is left out; mass is the total
// weight of the grid points P is computed at (the lightest are left out:
// the error this makes in P is at most 1 − mass).
const (
	negligible = 1e-12
	mass       = 1 - 1e-4
)

// judge computes the posterior at every grid point and averages it: the
// per-task posteriors and the marginal likelihoods first (cheap), then
// P(S > 0) at the points that carry weight.
func (m noiseModel) judge(ps []pair) judgement {
	n := len(ps)
	logw := append([]float64(nil), m.logw...)
	kinds := make([][][3]float64, len(m.level)) // point → task → P(worse), P(same), P(better)
	means := make([]float64, len(m.level))
	var likes [][4]float64
	var pairLikes []jumpPair
	for j, l := range m.level {
		kinds[j] = make([][3]float64, n)
		if j == 0 || m.level[j-1].noise != l.noise { // the likelihoods depend on the noise only
			if m.graded {
				pairLikes = jumpPairs(ps, l.noise, pairLikes)
			} else {
				likes = flipLikes(ps, l.noise, likes)
			}
		}
		for i := range ps {
			var logZ float64
			if m.graded {
				var g gradedPost
				g, logZ = jumpPost(pairLikes[i], l.pi)
				kinds[j][i] = g.kinds
				means[j] += g.mean
			} else {
				kinds[j][i], logZ = flipPost(likes[i], l.pi)
				means[j] += kinds[j][i][2] - kinds[j][i][0]
			}
			logw[j] += logZ
		}
	}
	w := normalize(logw)
	out := judgement{Worse: make([]float64, n), Certain: make([]float64, n)}
	mix := make([][3]float64, n)
	for j, l := range m.level {
		out.Mean += w[j] * means[j]
		out.Noise += w[j] * l.noise
		for i := range ps {
			for k := 0; k < 3; k++ {
				mix[i][k] += w[j] * kinds[j][i][k]
			}
		}
	}
	heavy := make([]int, len(m.level))
	for j := range heavy {
		heavy[j] = j
	}
	sort.SliceStable(heavy, func(a, b int) bool { return w[heavy[a]] > w[heavy[b]] })
	likesAt := math.NaN() // the noise level pairLikes holds
	var covered float64
	for _, j := range heavy {
		if covered >= mass {
			break
		}
		l := m.level[j]
		covered += w[j]
		if m.graded {
			if l.noise != likesAt {
				pairLikes, likesAt = jumpPairs(ps, l.noise, pairLikes), l.noise
			}
			out.P += w[j] * gradedAbove(pairLikes, l.pi)
		} else {
			out.P += w[j] * sumAbove(kinds[j])
		}
	}
	out.P /= covered
	for i := range ps {
		out.Worse[i] = mix[i][0]
		out.Certain[i] = math.Max(mix[i][0], math.Max(mix[i][1], mix[i][2]))
	}
	out.P = clamp01(out.P)
	return out
}

// flipTask is the posterior of one pass/fail task at flip rate f with
// change prior pi: P(d = −1), P(d = 0), P(d = +1), and the log marginal
// likelihood of its rewards. The four true states (candidate, dev) have
// prior (0,0), (1,1): (1−π)/2 each; (1,0), (0,1): π/2 each; each reward is
// the true outcome, flipped with probability f.
func flipTask(p pair, f, pi float64) (post [3]float64, logZ float64) {
	return flipPost(flipLikes([]pair{p}, f, nil)[0], pi)
}

// flipLikes returns, for each task, the likelihood of the candidate's and
// dev's rewards given each true outcome at flip rate f: candidate fails,
// candidate passes, dev fails, dev passes. It reuses buf.
func flipLikes(ps []pair, f float64, buf [][4]float64) [][4]float64 {
	buf = buf[:0]
	like := func(rs []float64) (fail, pass float64) {
		k, s := float64(len(rs)), passes(rs)
		return math.Pow(f, s) * math.Pow(1-f, k-s), math.Pow(1-f, s) * math.Pow(f, k-s)
	}
	for _, p := range ps {
		c0, c1 := like(p.cand)
		v0, v1 := like(p.dev)
		buf = append(buf, [4]float64{c0, c1, v0, v1})
	}
	return buf
}

// flipPost combines one task's likelihoods with the change prior.
func flipPost(l [4]float64, pi float64) (post [3]float64, logZ float64) {
	a := [3]float64{pi / 2 * l[0] * l[3], (1 - pi) / 2 * (l[0]*l[2] + l[1]*l[3]), pi / 2 * l[1] * l[2]}
	z := a[0] + a[1] + a[2]
	if z == 0 {
		return [3]float64{0, 1, 0}, math.Inf(-1)
	}
	for k := range a {
		post[k] = a[k] / z
	}
	return post, math.Log(z)
}

// sumAbove is P(Σ d_i > 0) for independent d_i ∈ {−1, 0, +1} with the given
// probabilities: by convolution up to exactUpTo tasks, beyond by the normal
// approximation with continuity correction, P(S ≥ ½).
func sumAbove(posts [][3]float64) float64 {
	n := len(posts)
	if n > exactUpTo {
		var mean, variance float64
		for _, p := range posts {
			m := p[2] - p[0]
			mean += m
			variance += p[2] + p[0] - m*m
		}
		return normalAbove(mean-0.5, variance)
	}
	dist := make([]float64, 2*n+1) // index s+n holds P(S = s)
	dist[n] = 1
	next := make([]float64, 2*n+1)
	for i, p := range posts {
		clear(next)
		for s := n - i; s <= n+i; s++ {
			if dist[s] == 0 {
				continue
			}
			next[s-1] += dist[s] * p[0]
			next[s] += dist[s] * p[1]
			next[s+1] += dist[s] * p[2]
		}
		dist, next = next, dist
	}
	var above float64
	for s := n + 1; s <= 2*n; s++ {
		above += dist[s]
	}
	return above
}

// gradedPost is the posterior of one graded task's true difference d at one
// grid point: its mean and variance, and the masses of d < 0, d = 0 and
// d > 0.
type gradedPost struct {
	mean, variance float64
	kinds          [3]float64
}

// jumpLikes returns the likelihood of rewards rs given each true reward on
// the grid: each reward is the true one with probability 1−ε, else any
// grid reward with probability ε/(steps+1) each (rewards are snapped to
// the grid).
func jumpLikes(rs []float64, eps float64) [steps + 1]float64 {
	var l [steps + 1]float64
	stray := eps / (steps + 1)
	for k := range l {
		l[k] = 1
	}
	for _, r := range rs {
		at := snap(r)
		for k := range l {
			if k == at {
				l[k] *= 1 - eps + stray
			} else {
				l[k] *= stray
			}
		}
	}
	return l
}

func snap(r float64) int {
	return min(steps, max(0, int(math.Round(r*steps))))
}

// jumpPair is what one graded task's likelihoods give, before the change
// prior: same sums the likelihood over true states with equal rewards,
// diff[d+steps] over those whose candidate's reward is d/steps above dev's
// (d ≠ 0).
type jumpPair struct {
	same float64
	diff [2*steps + 1]float64
}

// jumpPairs computes each task's jumpPair at noise eps, reusing buf.
func jumpPairs(ps []pair, eps float64, buf []jumpPair) []jumpPair {
	buf = buf[:0]
	for _, p := range ps {
		lc, lv := jumpLikes(p.cand, eps), jumpLikes(p.dev, eps)
		var jp jumpPair
		for c := range lc {
			for v := range lv {
				if c == v {
					jp.same += lc[c] * lv[v]
				} else {
					jp.diff[c-v+steps] += lc[c] * lv[v]
				}
			}
		}
		buf = append(buf, jp)
	}
	return buf
}

// jumpPost is the posterior of one graded task with change prior pi: the
// true pair is equal (each of the steps+1 rewards) with prior (1−π)/(steps+1),
// any unequal pair with π/((steps+1)·steps). It returns the posterior and
// the log marginal likelihood.
func jumpPost(jp jumpPair, pi float64) (gradedPost, float64) {
	d, logZ := jumpDist(jp, pi)
	return summarize(d), logZ
}

// summarize is the mean, variance and kinds of change of one task's
// posterior over d.
func summarize(d [2*steps + 1]float64) gradedPost {
	g := gradedPost{kinds: [3]float64{1: d[steps]}}
	var m2 float64
	for i, p := range d {
		if i == steps || p == 0 {
			continue
		}
		x := float64(i-steps) / steps
		g.mean += p * x
		m2 += p * x * x
		if x < 0 {
			g.kinds[0] += p
		} else {
			g.kinds[2] += p
		}
	}
	g.variance = max(0, m2-g.mean*g.mean)
	return g
}

// gradedAbove is P(S > 0) for graded tasks at change prior pi: the sum of
// their true differences, on the lattice of 1/steps, convolved exactly over
// the tasks with a chance (above negligible) of having changed when there
// are at most exactGraded of them, else by the normal approximation with
// continuity correction.
func gradedAbove(jps []jumpPair, pi float64) float64 {
	var dists [][2*steps + 1]float64
	var mean, variance float64
	for _, jp := range jps {
		d, _ := jumpDist(jp, pi)
		g := summarize(d)
		mean += g.mean
		variance += g.variance
		if 1-d[steps] > negligible {
			dists = append(dists, d)
		}
	}
	if len(dists) > exactGraded {
		return normalAbove(mean-0.5/steps, variance)
	}
	width := steps * len(dists)
	sum := make([]float64, 2*width+1) // index s+width holds P(S = s/steps)
	sum[width] = 1
	next := make([]float64, 2*width+1)
	for t, d := range dists {
		clear(next)
		reach := steps * t
		for s := width - reach; s <= width+reach; s++ {
			if sum[s] == 0 {
				continue
			}
			for k, p := range d {
				if p > negligible {
					next[s+k-steps] += sum[s] * p
				}
			}
		}
		sum, next = next, sum
	}
	var above float64
	for s := width + 1; s <= 2*width; s++ {
		above += sum[s]
	}
	return above
}

// jumpDist is one graded task's posterior over d = k/steps, k = −steps …
// steps (index k+steps), at change prior pi, and the log marginal
// likelihood.
func jumpDist(jp jumpPair, pi float64) ([2*steps + 1]float64, float64) {
	n := float64(steps + 1)
	wSame, wDiff := (1-pi)/n, pi/(n*steps)
	var d [2*steps + 1]float64
	z := wSame * jp.same
	for _, x := range jp.diff {
		z += wDiff * x
	}
	if z == 0 {
		d[steps] = 1
		return d, math.Inf(-1)
	}
	d[steps] = wSame * jp.same / z
	for i, x := range jp.diff {
		if i != steps {
			d[i] = wDiff * x / z
		}
	}
	return d, math.Log(z)
}

// normalAbove is P(X > 0) for X ~ N(mean, variance); with no variance, 1
// when mean > 0, else 0.
func normalAbove(mean, variance float64) float64 {
	if variance <= 0 {
		if mean > 0 {
			return 1
		}
		return 0
	}
	return normalCDF(mean / math.Sqrt(variance))
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func logSumExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	m := math.Max(a, b)
	return m + math.Log(math.Exp(a-m)+math.Exp(b-m))
}

// normalize turns log weights into weights that sum to 1.
func normalize(logw []float64) []float64 {
	m := math.Inf(-1)
	for _, l := range logw {
		m = math.Max(m, l)
	}
	w := make([]float64, len(logw))
	var s float64
	for j, l := range logw {
		w[j] = math.Exp(l - m)
		s += w[j]
	}
	for j := range w {
		w[j] /= s
	}
	return w
}

func passes(rs []float64) float64 {
	var s float64
	for _, r := range rs {
		s += r
	}
	return s
}

// anyGraded reports whether some group of rewards is not all 0 or 1.
func anyGraded(groups [][]float64) bool {
	for _, g := range groups {
		if !isBinary(g) {
			return true
		}
	}
	return false
}

// isBinary reports whether every reward is exactly 0 or 1.
func isBinary(rs []float64) bool {
	for _, r := range rs {
		if r != 0 && r != 1 {
			return false
		}
	}
	return true
}

// NoiseSummary describes the pool (groups of repeats over tasks distinct
// tasks) for people and the journal.
func NoiseSummary(pool [][]float64, tasks int) *ledger.Noise {
	graded := anyGraded(pool)
	n := &ledger.Noise{Graded: graded, Tasks: tasks}
	for _, g := range pool {
		n.Groups++
		same := true
		for a := 0; a < len(g); a++ {
			for b := a + 1; b < len(g); b++ {
				n.Pairs++
				if math.Abs(g[a]-g[b]) > 1e-9 {
					n.Flips++
					same = false
				}
			}
		}
		if same {
			n.Reproducible++
		}
	}
	n.Rate = newNoiseModel(pool, graded).meanNoise()
	return n
}
