package eval

import (
	"math"
	"strings"
	"testing"
)

func TestParseFractions(t *testing.T) {
	tests := []struct {
		in   string
		want Fractions
	}{
		{"50/30/20", Fractions{0.5, 0.3, 0.2}},
		{"0.5/0.3/0.2", Fractions{0.5, 0.3, 0.2}},
		{" 70 / 20 / 10 ", Fractions{0.7, 0.2, 0.1}},
		{"60%/20%/20%", Fractions{0.6, 0.2, 0.2}},
		{"100/0/0", Fractions{1, 0, 0}},
		{"0/0/1", Fractions{0, 0, 1}},
		{"33.33/33.33/33.33", Fractions{1.0 / 3, 1.0 / 3, 1.0 / 3}},
	}
	for _, tt := range tests {
		got, err := ParseFractions(tt.in)
		if err != nil {
			t.Errorf("ParseFractions(%q): %v", tt.in, err)
			continue
		}
		if !closeFractions(got, tt.want) {
			t.Errorf("ParseFractions(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("ParseFractions(%q) result does not validate: %v", tt.in, err)
		}
	}
}

func TestParseFractionsErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"50/50", `split fractions "50/50": want train/validation/test, like "50/30/20"`},
		{"", `split fractions "": want train/validation/test`},
		{"50/30/20/0", `want train/validation/test`},
		{"50/x/20", `split fractions "50/x/20": validation part "x": must be a number >= 0`},
		{"-10/60/50", `train part "-10": must be a number >= 0`},
		{"50/30/NaN", `test part "NaN": must be a number >= 0`},
		{"50/30/10", `split fractions "50/30/10": parts sum to 90, want 100 (percentages) or 1 (fractions)`},
		{"0/0/0", `parts sum to 0`},
		{"0.5/0.5/0.5", `parts sum to 1.5`},
	}
	for _, tt := range tests {
		_, err := ParseFractions(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseFractions(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestFractionsString(t *testing.T) {
	tests := []struct {
		f    Fractions
		want string
	}{
		{DefaultFractions, "50/30/20"},
		{Fractions{0.7, 0.2, 0.1}, "70/20/10"},
		{Fractions{1.0 / 3, 1.0 / 3, 1.0 / 3}, "33/33/33"},
		{Fractions{1, 0, 0}, "100/0/0"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.f, got, tt.want)
		}
		back, err := ParseFractions(tt.f.String())
		if err == nil && !closeFractions(back, tt.f) {
			t.Errorf("ParseFractions(%q) = %+v, want %+v", tt.want, back, tt.f)
		}
	}
}

func TestFractionsValidate(t *testing.T) {
	for _, f := range []Fractions{{0.5, 0.5, 0.1}, {-0.1, 0.6, 0.5}, {math.NaN(), 0.5, 0.5}, {0, 0, 0}} {
		if err := f.Validate(); err == nil {
			t.Errorf("%+v.Validate() = nil, want an error", f)
		}
	}
	if err := DefaultFractions.Validate(); err != nil {
		t.Errorf("DefaultFractions.Validate() = %v", err)
	}
}

func closeFractions(a, b Fractions) bool {
	av, bv := a.values(), b.values()
	for i := range av {
		if math.Abs(av[i]-bv[i]) > 1e-9 {
			return false
		}
	}
	return true
}
