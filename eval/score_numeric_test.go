package eval

import (
	"math"
	"testing"
)

func TestLastNumber(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"42", 42, true},
		{"The answer is 42.", 42, true},
		{"-3.5", -3.5, true},
		{"+7", 7, true},
		{"x = -0.25", -0.25, true},
		{"\u22125", -5, true},
		{"1,234.5", 1234.5, true},
		{"total: $12,345,678", 12345678, true},
		{"1,234,56", 56, true},    // not thousands groups past the first: 1,234 then 56
		{"values 1,2,3", 3, true}, // a list, not thousands
		{"12345,678", 678, true},  // a run of more than 3 digits takes no groups
		{"1,2345", 2345, true},    // a group must be exactly three digits
		{"6.02e23 atoms", 6.02e23, true},
		{"1.5E-3", 0.0015, true},
		{"3eggs", 3, true}, // "e" without digits is not an exponent
		{"5e", 5, true},
		{"45%", 45, true},
		{"it grew 12.5% to 9 km", 9, true},
		{"3-4", 4, true}, // a hyphen after a digit is not a sign
		{"2024-01-15", 15, true},
		{".5", 0.5, true},
		{"-.5", -0.5, true},
		{"version 1.2.3", 3, true},
		{"first 10 then 20\n\nfinally **30**", 30, true},
		{"no numbers here", 0, false},
		{"", 0, false},
		{"- . e", 0, false},
		{"1e999", math.Inf(1), true},
	}
	for _, tt := range tests {
		got, ok := lastNumber(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("lastNumber(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"42", 42, true},
		{" 42\n", 42, true},
		{"-1,234.5", -1234.5, true},
		{"1e3", 1000, true},
		{"50%", 50, true},
		{"42 apples", 0, false},
		{"about 42", 0, false},
		{"1/2", 0, false},
		{"", 0, false},
		{"1e999", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseNumber(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseNumber(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestScoreNumeric(t *testing.T) {
	runScoreCases(t, ScorerConfig{Kind: "numeric"}, []scoreCase{
		{"42", "The answer is 42", 1},
		{"42", "42.0000001", 1},
		{"42", "42.00001", 0},
		{"42", "41 or maybe 42", 1},
		{"42", "42 or maybe 41", 0},
		{"1234.5", "Total: 1,234.50 USD", 1},
		{"1,234.5", "1234.5", 1},
		{"-3", "x = -3", 1},
		{"0.15", "1.5e-1", 1},
		{"12.5%", "grew by 12.5%", 1},
		{"42", "no idea", 0},
		{"42", "", 0},
	})
	runScoreCases(t, ScorerConfig{Kind: "numeric", Tolerance: 0.5}, []scoreCase{
		{"10", "10.5", 1},
		{"10", "9.5", 1},
		{"10", "10.6", 0},
	})
}
