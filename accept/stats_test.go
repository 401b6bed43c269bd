package accept

import (
	"math"
	"math/big"
	"testing"
)

// binomialTail is I_x(a, b) for integer a, b >= 1 and rational x = p/q,
// computed exactly from the binomial identity
//
//	I_x(a, b) = Σ_{j=a}^{a+b−1} C(a+b−1, j) x^j (1−x)^(a+b−1−j).
func binomialTail(a, b int, p, q int64) float64 {
	n := int64(a + b - 1)
	sum := new(big.Int)
	for j := int64(a); j <= n; j++ {
		term := new(big.Int).Binomial(n, j)
		term.Mul(term, new(big.Int).Exp(big.NewInt(p), big.NewInt(j), nil))
		term.Mul(term, new(big.Int).Exp(big.NewInt(q-p), big.NewInt(n-j), nil))
		sum.Add(sum, term)
	}
	den := new(big.Int).Exp(big.NewInt(q), big.NewInt(n), nil)
	f, _ := new(big.Rat).SetFrac(sum, den).Float64()
	return f
}

func TestProbBetterKnownValues(t *testing.T) {
	for _, tc := range []struct {
		wins, losses, want float64
	}{
		{0, 0, 0.5},
		{1, 0, 0.75},
		{2, 0, 0.875},
		{3, 1, 0.8125},
		{0, 3, 0.0625},
		{1, 1, 0.5},
		{10, 10, 0.5},
	} {
		if got := ProbBetter(tc.wins, tc.losses); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ProbBetter(%v, %v) = %.15g, want %v", tc.wins, tc.losses, got, tc.want)
		}
	}
}

func TestProbBetterMatchesBinomialTail(t *testing.T) {
	for w := 0; w <= 40; w++ {
		for l := 0; l <= 40; l++ {
			// P(θ > 1/2) = 1 − I_{1/2}(1+w, 1+l) = I_{1/2}(1+l, 1+w).
			want := binomialTail(1+l, 1+w, 1, 2)
			if got := ProbBetter(float64(w), float64(l)); math.Abs(got-want) > 1e-12 {
				t.Errorf("ProbBetter(%d, %d) = %.15g, want %.15g", w, l, got, want)
			}
		}
	}
}

func TestRegIncBetaMatchesBinomialTail(t *testing.T) {
	xs := [][2]int64{{1, 100}, {1, 10}, {3, 10}, {1, 2}, {7, 10}, {9, 10}, {99, 100}}
	for a := 1; a <= 30; a++ {
		for b := 1; b <= 30; b++ {
			for _, x := range xs {
				want := binomialTail(a, b, x[0], x[1])
				got := RegIncBeta(float64(x[0])/float64(x[1]), float64(a), float64(b))
				if math.Abs(got-want) > 1e-12 {
					t.Errorf("RegIncBeta(%d/%d, %d, %d) = %.15g, want %.15g", x[0], x[1], a, b, got, want)
				}
			}
		}
	}
}

func TestRegIncBetaSymmetry(t *testing.T) {
	for _, a := range []float64{0.1, 0.5, 1, 2.5, 7, 30, 481} {
		for _, b := range []float64{0.2, 1, 1.5, 4, 12, 501} {
			for _, x := range []float64{0.001, 0.1, 0.25, 0.5, 0.6, 0.9, 0.999} {
				got, want := RegIncBeta(x, a, b), 1-RegIncBeta(1-x, b, a)
				if math.Abs(got-want) > 1e-12 {
					t.Errorf("I_%v(%v, %v) = %.15g, 1 − I_%v(%v, %v) = %.15g", x, a, b, got, 1-x, b, a, want)
				}
			}
		}
	}
}

func TestRegIncBetaEdges(t *testing.T) {
	for _, tc := range []struct {
		x, a, b, want float64
	}{
		{0, 2, 3, 0},
		{1, 2, 3, 1},
		{0, 0.5, 0.5, 0},
		{1, 0.5, 0.5, 1},
		{0.5, 0.5, 0.5, 0.5},
		{0.3, 1, 1, 0.3},          // uniform distribution
		{0.25, 0.5, 0.5, 1.0 / 3}, // arcsine law: (2/π) asin(√x)
	} {
		if got := RegIncBeta(tc.x, tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("RegIncBeta(%v, %v, %v) = %.15g, want %v", tc.x, tc.a, tc.b, got, tc.want)
		}
	}
	for _, bad := range [][3]float64{
		{-0.1, 1, 1}, {1.1, 1, 1}, {0.5, 0, 1}, {0.5, 1, -1},
		{math.NaN(), 1, 1}, {0.5, math.NaN(), 1}, {0.5, math.Inf(1), 1},
	} {
		if got := RegIncBeta(bad[0], bad[1], bad[2]); !math.IsNaN(got) {
			t.Errorf("RegIncBeta(%v, %v, %v) = %v, want NaN", bad[0], bad[1], bad[2], got)
		}
	}
	for _, bad := range [][2]float64{{-1, 0}, {0, -1}, {math.NaN(), 0}, {math.Inf(1), 0}} {
		if got := ProbBetter(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("ProbBetter(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}

func TestProbBetterLargeCounts(t *testing.T) {
	for _, tc := range [][2]int{{500, 480}, {480, 500}, {500, 500}, {1000, 0}, {0, 1000}, {2000, 1900}} {
		w, l := tc[0], tc[1]
		got := ProbBetter(float64(w), float64(l))
		if math.IsNaN(got) || got < 0 || got > 1 {
			t.Fatalf("ProbBetter(%d, %d) = %v, want a probability", w, l, got)
		}
		if want := binomialTail(1+l, 1+w, 1, 2); math.Abs(got-want) > 1e-11 {
			t.Errorf("ProbBetter(%d, %d) = %.15g, want %.15g", w, l, got, want)
		}
	}
	// Far beyond exact arithmetic: finite, in [0, 1], on the right side of 1/2.
	if p := ProbBetter(1e6, 0.99e6); !(p > 0.5 && p <= 1) {
		t.Errorf("ProbBetter(1e6, 0.99e6) = %v", p)
	}
	if p := ProbBetter(0.99e6, 1e6); !(p >= 0 && p < 0.5) {
		t.Errorf("ProbBetter(0.99e6, 1e6) = %v", p)
	}
}

func TestProbBetterFractionalMonotone(t *testing.T) {
	for _, losses := range []float64{0, 0.5, 3, 12.75} {
		prev := -1.0
		for w := 0.0; w <= 30; w += 0.25 {
			p := ProbBetter(w, losses)
			if p <= prev {
				t.Fatalf("ProbBetter(%v, %v) = %v, not above ProbBetter(%v, %v) = %v", w, losses, p, w-0.25, losses, prev)
			}
			prev = p
		}
	}
	// A half win between 1 and 2 wins lands between their probabilities.
	if lo, mid, hi := ProbBetter(1, 1), ProbBetter(1.5, 1), ProbBetter(2, 1); !(lo < mid && mid < hi) {
		t.Errorf("ProbBetter(1|1.5|2, 1) = %v, %v, %v: not increasing", lo, mid, hi)
	}
}

func TestAnneal(t *testing.T) {
	for _, tc := range []struct {
		delta0, floor, halfLife float64
		n                       int
		want                    float64
	}{
		{0.1, 0.01, 10, 0, 0.1},
		{0.1, 0.01, 10, 10, 0.05},
		{0.1, 0.01, 10, 20, 0.025},
		{0.1, 0.01, 10, 5, 0.1 / math.Sqrt2},
		{0.1, 0.01, 10, 40, 0.01}, // 0.00625, floored
		{0.1, 0.01, 10, 1000, 0.01},
		{0.1, 0.01, 0, 50, 0.1},  // disabled
		{0.1, 0.01, -1, 50, 0.1}, // disabled
		{0.1, 0.01, 10, -5, 0.1},
		{0.1, 0, 1, 3, 0.0125},
	} {
		if got := Anneal(tc.delta0, tc.floor, tc.halfLife, tc.n); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Anneal(%v, %v, %v, %d) = %v, want %v", tc.delta0, tc.floor, tc.halfLife, tc.n, got, tc.want)
		}
	}
}

func TestStudentTKnownValues(t *testing.T) {
	for _, c := range []struct{ t, nu, want float64 }{
		{0, 5, 0.5},
		{1, 1, 0.75},                     // Cauchy: 1/2 + atan(1)/π
		{1, 2, 0.5 + 1/(2*math.Sqrt(3))}, // ν=2 closed form
		{-1, 2, 0.5 - 1/(2*math.Sqrt(3))},
		{2.228138852, 10, 0.975},  // table value t(0.975, 10)
		{1.959963985, 1e7, 0.975}, // → normal
	} {
		if got := StudentT(c.t, c.nu); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("StudentT(%v, %v) = %v, want %v", c.t, c.nu, got, c.want)
		}
	}
	if q := tQuantile(0.975, 10); math.Abs(q-2.228138852) > 1e-6 {
		t.Errorf("tQuantile(0.975, 10) = %v", q)
	}
}

func TestProbMeanPositive(t *testing.T) {
	// Mean 0.1 with standard error sd/√4: a t statistic with 3 degrees of freedom.
	d := []float64{0, 0.2, 0.1, 0.1}
	m, sd := meanSD(d)
	want := StudentT(m/(sd/2), 3)
	if got := ProbMeanPositive(d); math.Abs(got-want) > 1e-12 || got < 0.9 {
		t.Errorf("ProbMeanPositive = %v, want %v", got, want)
	}
	for _, c := range []struct {
		d    []float64
		want float64
	}{
		{[]float64{0.5, 0.5}, 1},
		{[]float64{-0.5, -0.5}, 0},
		{[]float64{0, 0, 0}, 0.5},
	} {
		if got := ProbMeanPositive(c.d); got != c.want {
			t.Errorf("ProbMeanPositive(%v) = %v, want %v", c.d, got, c.want)
		}
	}
	if !math.IsNaN(ProbMeanPositive([]float64{1})) {
		t.Error("one difference gave a number")
	}
	lo, hi := MeanInterval([]float64{1, 2, 3, 4, 5}, 0.95)
	// mean 3, sd 1.5811, se 0.7071, t(0.975, 4) = 2.776445
	if math.Abs(lo-(3-2.776445*0.7071068)) > 1e-4 || math.Abs(hi-(3+2.776445*0.7071068)) > 1e-4 {
		t.Errorf("MeanInterval = %v, %v", lo, hi)
	}
}

// ScoreInterval against Jeffreys intervals computed independently (numerical
// integration of the Beta density).
func TestScoreInterval(t *testing.T) {
	for _, c := range []struct {
		pass, n int
		lo, hi  float64
	}{
		{5, 10, 0.2235, 0.7765},
		{3, 10, 0.0927, 0.6058},
		{0, 10, 0, 0.2172},
		{10, 10, 0.7828, 1},
	} {
		xs := make([]float64, c.n)
		for i := range c.pass {
			xs[i] = 1
		}
		lo, hi := ScoreInterval(xs, 0.95)
		if math.Abs(lo-c.lo) > 0.002 || math.Abs(hi-c.hi) > 0.002 {
			t.Errorf("%d of %d: [%.4f, %.4f], want [%.4f, %.4f]", c.pass, c.n, lo, hi, c.lo, c.hi)
		}
	}
	graded := []float64{0.2, 0.4, 0.5, 0.9, 0.7, 0.3}
	lo, hi := ScoreInterval(graded, 0.95)
	if m := Mean(graded); !(lo < m && m < hi && lo >= 0 && hi <= 1) {
		t.Errorf("graded: [%.3f, %.3f] around %.3f", lo, hi, m)
	}
}
