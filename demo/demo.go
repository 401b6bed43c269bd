// Package demo is git-descent's built-in example: a unit-conversion skill
// with most conversion factors missing, 66 eval tasks, and a deterministic
// agent and proposer that stand in for an LLM, so the whole loop runs
// offline in seconds.
//
// The agent follows only what the skill says: it converts with the factors
// listed in the skill's Markdown files and answers "unknown" otherwise. The
// proposer knows the factors (as a model would) and, shown failed tasks,
// adds the missing ones to SKILL.md.
package demo

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Name is the demo skill's name; Path is where it lives in the demo
// repository.
const (
	Name = "unit-convert"
	Path = "skills/unit-convert"
)

// family is one conversion: 1 From = Factor To.
type family struct {
	From, To string
	Factor   float64
}

// known is what the proposer "knows"; the first two are in the starting
// skill.
var known = []family{
	{"in", "cm", 2.54},
	{"lb", "kg", 0.45359237},
	{"mi", "km", 1.609344},
	{"ft", "m", 0.3048},
	{"oz", "g", 28.349523125},
	{"gal", "L", 3.785411784},
	{"yd", "m", 0.9144},
	{"nmi", "km", 1.852},
	{"ac", "ha", 0.40468564224},
	{"mph", "km/h", 1.609344},
	{"st", "kg", 6.35029318},
}

const skillMD = `---
name: unit-convert
description: Convert a quantity from one unit to another. Use when asked to convert a value between units of length, mass, volume, area or speed.
---
# Unit conversion

Answer with the converted value rounded to 2 decimal places, a space, and
the target unit, exactly as the unit is written in the question: ` + "`8.05 km`" + `.
Use only the factors below; to convert the other way, divide.

## Conversion factors

- 1 in = 2.54 cm
- 1 lb = 0.45359237 kg
`

// Files returns the demo repository's files, path → content: a README, the
// skill and its evals/evals.json (skill-creator schema).
func Files() map[string]string {
	return map[string]string{
		"README.md":                 "# demo\n\nA throwaway repository made by `git descent demo`.\n",
		Path + "/SKILL.md":          skillMD,
		Path + "/evals/evals.json":  evalsJSON(),
		Path + "/references/how.md": "# How to answer\n\nRead the question's value, source unit and target unit. Find the factor\nin SKILL.md. Multiply (or divide for the reverse direction) and round.\n",
	}
}

// evalsJSON builds 66 tasks: for each family three conversions each way.
func evalsJSON() string {
	type item struct {
		ID       string `json:"id"`
		Prompt   string `json:"prompt"`
		Expected string `json:"expected_output"`
	}
	values := []float64{3, 12.5, 7, 40, 2.5, 150, 9, 0.75, 11, 64, 4, 18, 6.5, 90, 1.5, 22, 8, 300, 5, 2.25}
	var items []item
	n := 0
	next := func() float64 { n++; return values[n%len(values)] }
	for _, f := range known {
		for k := 1; k <= 3; k++ {
			v, w := next(), next()
			items = append(items,
				item{fmt.Sprintf("%s-to-%s-%d", slug(f.From), slug(f.To), k), question(v, f.From, f.To), answer(v*f.Factor, f.To)},
				item{fmt.Sprintf("%s-to-%s-%d", slug(f.To), slug(f.From), k), question(w, f.To, f.From), answer(w/f.Factor, f.From)})
		}
	}
	data, err := json.MarshalIndent(map[string]any{"skill_name": Name, "evals": items}, "", "  ")
	if err != nil {
		panic(err) // static data
	}
	return string(data) + "\n"
}

func slug(unit string) string { return strings.ReplaceAll(unit, "/", "") }

func question(v float64, from, to string) string {
	return fmt.Sprintf("Convert %s %s to %s.", trimFloat(v), from, to)
}

func answer(v float64, unit string) string { return fmt.Sprintf("%.2f %s", v, unit) }

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
