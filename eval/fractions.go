package eval

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Fractions of tasks assigned to each split; they must be >= 0 and sum to 1
// (within 1e-9).
type Fractions struct{ Train, Validation, Test float64 }

// DefaultFractions is the split used when a library configures none.
var DefaultFractions = Fractions{Train: 0.5, Validation: 0.3, Test: 0.2}

// Validate reports whether f can be passed to Assign: every fraction finite
// and >= 0, and the three summing to 1 within 1e-9.
func (f Fractions) Validate() error {
	for i, v := range f.values() {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%s fraction %v: must be a number >= 0", Splits[i], v)
		}
	}
	if sum := f.Train + f.Validation + f.Test; math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("fractions %v/%v/%v: sum to %v, want 1", f.Train, f.Validation, f.Test, sum)
	}
	return nil
}

// String formats f as rounded percentages, train/validation/test:
// "50/30/20". ParseFractions reads it back.
func (f Fractions) String() string {
	v := f.values()
	return fmt.Sprintf("%.0f/%.0f/%.0f", math.Round(v[0]*100), math.Round(v[1]*100), math.Round(v[2]*100))
}

func (f Fractions) values() [3]float64 { return [3]float64{f.Train, f.Validation, f.Test} }

// ParseFractions reads "train/validation/test" as percentages ("50/30/20",
// each part may end in "%") or as fractions ("0.5/0.3/0.2"). The parts must
// be numbers >= 0 summing to 100 or to 1, within 0.1% of the total to allow
// for rounding ("33.3/33.3/33.3"); the result is normalised to sum exactly
// to 1 (within floating point) and passes Validate.
func ParseFractions(s string) (Fractions, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Fractions{}, fmt.Errorf("split fractions %q: want train/validation/test, like %q", s, DefaultFractions.String())
	}
	var v [3]float64
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(p), "%"), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return Fractions{}, fmt.Errorf("split fractions %q: %s part %q: must be a number >= 0", s, Splits[i], strings.TrimSpace(p))
		}
		v[i] = x
	}
	sum := v[0] + v[1] + v[2]
	if !near(sum, 1) && !near(sum, 100) {
		return Fractions{}, fmt.Errorf("split fractions %q: parts sum to %v, want 100 (percentages) or 1 (fractions)", s, sum)
	}
	f := Fractions{Train: v[0] / sum, Validation: v[1] / sum, Test: v[2] / sum}
	if err := f.Validate(); err != nil {
		return Fractions{}, fmt.Errorf("split fractions %q: %w", s, err)
	}
	return f, nil
}

// near reports whether sum is within 0.1% of total.
func near(sum, total float64) bool { return math.Abs(sum-total) <= total*1e-3 }
