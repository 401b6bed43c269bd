package eval

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultTolerance is the numeric scorer's absolute tolerance when the
// configuration gives 0.
const DefaultTolerance = 1e-6

// numericScorer compares the last number in the output with the task's
// expected number: 1 when |got-want| <= tol, 0 when they differ by more or
// the output holds no number. t.Expected must be one number (it may use
// thousands separators and end in "%"); anything else is an error naming
// the task. Numbers in the output are read as by nextNumber.
type numericScorer struct{ tol float64 }

func newNumericScorer(tol float64) (Scorer, error) {
	if math.IsNaN(tol) || math.IsInf(tol, 0) || tol < 0 {
		return nil, fmt.Errorf("numeric scorer: tolerance %v: must be a number >= 0", tol)
	}
	if tol == 0 {
		tol = DefaultTolerance
	}
	return numericScorer{tol: tol}, nil
}

func (s numericScorer) Score(_ context.Context, t Task, output string) (float64, error) {
	want, ok := parseNumber(t.Expected)
	if !ok {
		return 0, fmt.Errorf("%s: numeric scorer: expected_output %q is not a number", taskRef(t), t.Expected)
	}
	got, ok := lastNumber(output)
	if !ok {
		return 0, nil
	}
	return reward(math.Abs(got-want) <= s.tol), nil
}

// parseNumber reads s, trimmed, as exactly one number, optionally followed
// by "%". Infinite values are rejected.
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	n, ok := nextNumber(s, 0)
	if !ok || n.start != 0 || (s[n.end:] != "" && s[n.end:] != "%") || math.IsInf(n.value, 0) {
		return 0, false
	}
	return n.value, true
}

// lastNumber returns the last number in s.
func lastNumber(s string) (float64, bool) {
	var last number
	found := false
	for i := 0; ; {
		n, ok := nextNumber(s, i)
		if !ok {
			return last.value, found
		}
		last, found, i = n, true, n.end
	}
}

// number is one number found in a text, at s[start:end].
type number struct {
	value      float64
	start, end int
}

// unicodeMinus is U+2212, which models sometimes print for a minus sign.
const unicodeMinus = "\u2212"

// nextNumber finds the first number in s at or after byte from. A number is
// an optional sign ("+", "-" or U+2212, only when not preceded by a letter
// or digit, so "3-4" is 3 then 4), digits with optional thousands groups
// ("1,234,567": a run of 1 to 3 digits then groups of exactly three), an
// optional fraction (".5", also without leading digits), and an optional
// exponent ("e-3"). Whatever follows (a "%", a unit, a full stop) is not
// part of it.
func nextNumber(s string, from int) (number, bool) {
	for i := from; i < len(s); i++ {
		sign := signLen(s, i)
		body := i + sign
		if !startsNumber(s, body) {
			continue
		}
		end := scanMantissa(s, body)
		end = scanExponent(s, end)
		text := strings.ReplaceAll(s[body:end], ",", "")
		// The grammar above only admits valid syntax; out of range values
		// come back as ±Inf or 0, which is the best reading of them.
		v, _ := strconv.ParseFloat(text, 64)
		if sign > 0 && s[i] != '+' {
			v = -v
		}
		return number{value: v, start: i, end: end}, true
	}
	return number{}, false
}

// signLen returns the length of a sign at s[i], 0 when there is none.
func signLen(s string, i int) int {
	if i > 0 && isAlnum(s[i-1]) {
		return 0
	}
	switch {
	case s[i] == '+' || s[i] == '-':
		return 1
	case strings.HasPrefix(s[i:], unicodeMinus):
		return len(unicodeMinus)
	}
	return 0
}

// startsNumber reports whether a number's digits begin at s[i]: a digit,
// or a "." then a digit that does not continue an earlier number.
func startsNumber(s string, i int) bool {
	switch {
	case i >= len(s):
		return false
	case isDigit(s[i]):
		return true
	}
	return s[i] == '.' && i+1 < len(s) && isDigit(s[i+1]) && (i == 0 || !isDigit(s[i-1]))
}

// scanMantissa returns the end of the digits, thousands groups and
// fraction starting at s[i].
func scanMantissa(s string, i int) int {
	j := skipDigits(s, i)
	if n := j - i; n >= 1 && n <= 3 {
		for j+4 <= len(s) && s[j] == ',' && skipDigits(s, j+1) == j+4 {
			j += 4
		}
	}
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		j = skipDigits(s, j+1)
	}
	return j
}

// scanExponent returns the end of an exponent at s[i], or i when there is
// none.
func scanExponent(s string, i int) int {
	if i >= len(s) || (s[i] != 'e' && s[i] != 'E') {
		return i
	}
	j := i + 1
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	if end := skipDigits(s, j); end > j {
		return end
	}
	return i
}

func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'z') || c == '_'
}
