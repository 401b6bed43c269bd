package accept

import (
	"math"
	"math/rand/v2"
	"sort"
)

// ProbBetter is the gate's posterior probability that a candidate beats
// dev: P(θ > 1/2) where θ, the chance that the candidate wins a task the two
// disagree on, has the posterior Beta(1+wins, 1+losses) from a uniform
// prior. wins and losses count discordant tasks and may be fractional (for
// graded rewards); they must be finite and non-negative, otherwise the
// result is NaN. ProbBetter(0, 0) is 1/2.
func ProbBetter(wins, losses float64) float64 {
	if !(wins >= 0 && losses >= 0) || math.IsInf(wins, 0) || math.IsInf(losses, 0) {
		return math.NaN()
	}
	// P(θ > x) = 1 − I_x(a, b) = I_{1−x}(b, a).
	return RegIncBeta(0.5, 1+losses, 1+wins)
}

// RegIncBeta returns the regularized incomplete beta function
//
//	I_x(a, b) = B(x; a, b) / B(a, b),
//
// the distribution function at x of a Beta(a, b) variable. It is accurate
// to about 1e-12 for a + b up to several thousand; the error grows with
// a + b (to about 1e-8 at 1e7). It needs finite a, b > 0 and 0 <= x <= 1
// and returns NaN otherwise.
func RegIncBeta(x, a, b float64) float64 {
	switch {
	case !(a > 0 && b > 0 && x >= 0 && x <= 1) || math.IsInf(a, 0) || math.IsInf(b, 0):
		return math.NaN()
	case x == 0:
		return 0
	case x == 1:
		return 1
	}
	// The continued fraction converges fast for x below the mean of the
	// distribution, roughly; above it, use I_x(a, b) = 1 − I_{1−x}(b, a).
	if x > (a+1)/(a+b+2) {
		return clamp01(1 - incBetaCF(1-x, b, a))
	}
	return clamp01(incBetaCF(x, a, b))
}

// incBetaCF evaluates I_x(a, b) as
//
//	x^a (1−x)^b / (a B(a, b)) · 1/(1+ d1/(1+ d2/(1+ ...)))
//
// with d(2m+1) = −(a+m)(a+b+m) x / ((a+2m)(a+2m+1)) and
// d(2m) = m(b−m) x / ((a+2m−1)(a+2m)), the fraction evaluated by the
// modified Lentz method.
func incBetaCF(x, a, b float64) float64 {
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab-lga-lgb+a*math.Log(x)+b*math.Log1p(-x)) / a
	return front * lentz(func(n int) float64 {
		m := float64(n / 2)
		if n%2 == 1 {
			return -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		}
		return m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
	})
}

// lentz evaluates the continued fraction 1/(1+ d(1)/(1+ d(2)/(1+ ...)))
// by the modified Lentz method, stopping when a step changes the value by
// less than a relative 1e-15 or after a generous number of terms (enough
// for a and b in the millions).
func lentz(d func(n int) float64) float64 {
	const (
		eps      = 1e-15
		tiny     = 1e-300 // stands in for a zero denominator
		maxTerms = 100000
	)
	nonzero := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	// f = b0 + a1/(b1+ a2/(b2+ ...)) with b0 = 0, a1 = 1, b_n = 1, a_{n+1} = d(n).
	// Lentz starts from f0 = tiny (b0 = 0), C0 = f0, D0 = 0.
	f := tiny
	c, dd := f, 0.0
	for n := 1; n <= maxTerms; n++ {
		an := 1.0
		if n > 1 {
			an = d(n - 1)
		}
		dd = 1 / nonzero(1+an*dd)
		c = nonzero(1 + an/c)
		step := c * dd
		f *= step
		if math.Abs(step-1) < eps {
			break
		}
	}
	return f
}

func clamp01(v float64) float64 {
	return math.Min(1, math.Max(0, v))
}

// Anneal is the gate's margin δ after n accepted dev commits: delta0 halved
// every halfLife commits, but never below floor,
//
//	max(floor, delta0 · 0.5^(n/halfLife)).
//
// halfLife <= 0 disables annealing (δ stays max(floor, delta0)); n < 0
// counts as 0.
func Anneal(delta0, floor, halfLife float64, n int) float64 {
	if halfLife <= 0 || n <= 0 {
		return math.Max(floor, delta0)
	}
	return math.Max(floor, delta0*math.Exp2(-float64(n)/halfLife))
}

// StudentT returns the distribution function at t of Student's t with nu
// degrees of freedom (nu > 0), through the incomplete beta function.
func StudentT(t, nu float64) float64 {
	if !(nu > 0) || math.IsNaN(t) {
		return math.NaN()
	}
	tail := 0.5 * RegIncBeta(nu/(nu+t*t), nu/2, 0.5)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// ProbMeanPositive is the posterior probability that the mean of paired
// differences is above zero: under the standard noninformative prior the
// mean has a Student t posterior with n−1 degrees of freedom, centred on the
// sample mean with the standard error as scale. It needs at least two
// differences; with no spread at all the answer is 1, 0 or (all zero) 1/2.
func ProbMeanPositive(d []float64) float64 {
	n := float64(len(d))
	if len(d) < 2 {
		return math.NaN()
	}
	m, sd := meanSD(d)
	switch {
	case sd == 0 && m > 0:
		return 1
	case sd == 0 && m < 0:
		return 0
	case sd == 0:
		return 0.5
	}
	return StudentT(m/(sd/math.Sqrt(n)), n-1)
}

// MeanInterval is the two-sided credible (equally, confidence) interval at
// level (e.g. 0.95) for the mean of d, from the same t distribution. It
// needs at least two values.
func MeanInterval(d []float64, level float64) (lo, hi float64) {
	if len(d) < 2 {
		return math.NaN(), math.NaN()
	}
	m, sd := meanSD(d)
	se := sd / math.Sqrt(float64(len(d)))
	q := tQuantile(0.5+level/2, float64(len(d)-1))
	return m - q*se, m + q*se
}

// tQuantile inverts StudentT by bisection; p in (0, 1).
func tQuantile(p, nu float64) float64 {
	lo, hi := -1e3, 1e3
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if StudentT(mid, nu) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func meanSD(d []float64) (m, sd float64) {
	for _, x := range d {
		m += x
	}
	m /= float64(len(d))
	var ss float64
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(d)-1))
}

// LiftInterval is a two-sided interval at level (e.g. 0.95) for the mean
// paired difference a[i] − b[i] of two versions' rewards on the same tasks,
// always inside what is possible and containing the observed mean. With
// pass/fail rewards every difference is −1, 0 or +1, and the interval is
// the central credible interval of p₊ − p₋ under the Dirichlet(n₊+½,
// n₀+½, n₋+½) posterior of the three kinds' shares (Jeffreys prior),
// computed by numerical integration, and widened to the observed mean when
// that lies beyond it (every task gained: the interval then reaches 1, as
// the highest-density one does). With graded rewards it is the percentile
// bootstrap interval of the mean (4000 resamples with a fixed seed, so the
// same data give the same interval). It needs at least one pair.
func LiftInterval(a, b []float64, level float64) (lo, hi float64) {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	binary := isBinary(a) && isBinary(b) // then every difference is −1, 0 or +1
	if len(d) == 0 {
		return math.NaN(), math.NaN()
	}
	if binary {
		var up, same, down float64
		for _, x := range d {
			switch x {
			case 1:
				up++
			case 0:
				same++
			default:
				down++
			}
		}
		lo, hi = dirichletDiffInterval(up+0.5, same+0.5, down+0.5, level)
		m := (up - down) / float64(len(d))
		return min(lo, m), max(hi, m)
	}
	return bootstrapMean(d, level)
}

// dirichletDiffInterval is the central interval at level of p₊ − p₋ for
// (p₊, p₀, p₋) ~ Dirichlet(up, same, down).
func dirichletDiffInterval(up, same, down, level float64) (lo, hi float64) {
	// p₊ ~ Beta(up, same+down); given p₊ = u, p₋ = (1−u)·V with
	// V ~ Beta(down, same). P(p₊ − p₋ ≤ x) = E_u[P(V ≥ (u−x)/(1−u))],
	// the expectation taken over u at the midpoints of M equal-probability
	// slices of p₊'s distribution.
	const m = 400
	us := make([]float64, m)
	for i := range us {
		us[i] = betaQuantile((float64(i)+0.5)/m, up, same+down)
	}
	cdf := func(x float64) float64 {
		var s float64
		for _, u := range us {
			t := (u - x) / (1 - u)
			switch {
			case t <= 0:
				s++
			case t < 1:
				s += 1 - RegIncBeta(t, down, same)
			}
		}
		return s / m
	}
	quantile := func(p float64) float64 {
		l, h := -1.0, 1.0
		for i := 0; i < 50; i++ {
			mid := (l + h) / 2
			if cdf(mid) < p {
				l = mid
			} else {
				h = mid
			}
		}
		return (l + h) / 2
	}
	return quantile((1 - level) / 2), quantile((1 + level) / 2)
}

// betaQuantile inverts RegIncBeta in x by bisection.
func betaQuantile(p, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if RegIncBeta(mid, a, b) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// bootstrapMean is the percentile bootstrap interval at level of the mean
// of d, from a fixed seed.
func bootstrapMean(d []float64, level float64) (lo, hi float64) {
	const resamples = 4000
	rng := rand.New(rand.NewPCG(1, 2))
	means := make([]float64, resamples)
	for r := range means {
		var s float64
		for range d {
			s += d[rng.IntN(len(d))]
		}
		means[r] = s / float64(len(d))
	}
	sort.Float64s(means)
	at := func(p float64) float64 { return means[min(resamples-1, int(p*resamples))] }
	return at((1 - level) / 2), at((1 + level) / 2)
}

// Mean is the mean of xs, 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// ScoreInterval is a two-sided interval at level (e.g. 0.95) for a
// version's true mean reward from its rewards xs on a set of tasks, always
// inside [0, 1] and containing the observed mean. With pass/fail rewards it
// is the Jeffreys interval, the central interval of Beta(k+½, n−k+½) for k
// passes of n, with the bound at 0 or 1 when none or all passed; with
// graded rewards, the percentile bootstrap interval of the mean (fixed
// seed). It needs at least one reward.
func ScoreInterval(xs []float64, level float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	m := Mean(xs)
	if !isBinary(xs) {
		lo, hi = bootstrapMean(xs, level)
		return min(lo, m), max(hi, m)
	}
	n, k := float64(len(xs)), m*float64(len(xs))
	lo, hi = 0, 1
	if k > 0 {
		lo = betaQuantile((1-level)/2, k+0.5, n-k+0.5)
	}
	if k < n {
		hi = betaQuantile((1+level)/2, k+0.5, n-k+0.5)
	}
	return min(lo, m), max(hi, m)
}
