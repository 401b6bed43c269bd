package eval

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
)

// Split is one of the three disjoint sets a library's tasks fall into:
// Train tasks drive the search, Validation tasks pick among candidates, and
// Test tasks are held out for the final report.
type Split int

// The splits, in the order Fractions lists them.
const (
	Train Split = iota
	Validation
	Test
)

// Splits lists every split in order.
var Splits = []Split{Train, Validation, Test}

// String returns "train", "validation" or "test".
func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Validation:
		return "validation"
	case Test:
		return "test"
	}
	return "split(" + strconv.Itoa(int(s)) + ")"
}

// Assign puts the task with the given id in a split, by a hash that depends
// only on seed and id: u = sha256(seed + "\x00" + id), first 8 bytes
// big-endian, divided by 2^64 (kept to 53 bits so that u < 1). u < f.Train
// gives Train, u < f.Train+f.Validation gives Validation, anything else
// Test. A split whose fraction is 0 never receives a task. Adding or
// removing other tasks never moves this one; changing the seed reshuffles
// all of them. f should satisfy f.Validate.
func Assign(id, seed string, f Fractions) Split {
	sum := sha256.Sum256([]byte(seed + "\x00" + id))
	u := float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
	switch {
	case u < f.Train || (f.Validation == 0 && f.Test == 0):
		return Train
	case u < f.Train+f.Validation || f.Test == 0:
		return Validation
	}
	return Test
}

// Partition assigns each task with Assign. The result always has the three
// splits as keys (a split may hold no tasks) and keeps file order within
// each split.
func Partition(tasks []Task, seed string, f Fractions) map[Split][]Task {
	parts := make(map[Split][]Task, len(Splits))
	for _, s := range Splits {
		parts[s] = []Task{}
	}
	for _, t := range tasks {
		s := Assign(t.ID, seed, f)
		parts[s] = append(parts[s], t)
	}
	return parts
}
