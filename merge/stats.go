package merge

import "math"

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
