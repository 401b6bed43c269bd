package eval

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestAssignGolden pins assignments computed once (and checked against an
// independent computation of sha256(seed+"\x00"+id)): a library's splits
// must not change between runs or releases.
func TestAssignGolden(t *testing.T) {
	tests := []struct {
		id, seed string
		want     Split
	}{
		{"1", "seed", Test},            // u = 0.9748
		{"2", "seed", Test},            // u = 0.8686
		{"3", "seed", Train},           // u = 0.1053
		{"3", "other", Validation},     // u = 0.5036
		{"task-a", "seed", Validation}, // u = 0.7635
		{"task-a", "other", Train},     // u = 0.2865
		{"task-b", "other", Test},      // u = 0.8952
		{"τ", "other", Train},          // u = 0.4989
	}
	for _, tt := range tests {
		if got := Assign(tt.id, tt.seed, DefaultFractions); got != tt.want {
			t.Errorf("Assign(%q, %q) = %v, want %v", tt.id, tt.seed, got, tt.want)
		}
	}
}

func TestAssignStable(t *testing.T) {
	ids := syntheticIDs(200)
	before := map[string]Split{}
	for _, id := range ids[:100] {
		before[id] = Assign(id, "s", DefaultFractions)
	}
	// Adding tasks, and removing some, moves none of the others.
	tasks := tasksWithIDs(ids[50:])
	for s, part := range Partition(tasks, "s", DefaultFractions) {
		for _, task := range part {
			if want, ok := before[task.ID]; ok && want != s {
				t.Errorf("task %q moved from %v to %v when tasks were added", task.ID, want, s)
			}
		}
	}
}

func TestAssignProportions(t *testing.T) {
	for _, f := range []Fractions{DefaultFractions, {0.7, 0.2, 0.1}, {1.0 / 3, 1.0 / 3, 1.0 / 3}} {
		counts := map[Split]int{}
		const n = 10000
		for _, id := range syntheticIDs(n) {
			counts[Assign(id, "proportions", f)]++
		}
		for i, s := range Splits {
			want := f.values()[i]
			if got := float64(counts[s]) / n; math.Abs(got-want) > 0.02 {
				t.Errorf("%v: %v got %.3f of tasks, want %.3f ± 0.02", f, s, got, want)
			}
		}
	}
}

func TestAssignZeroFractions(t *testing.T) {
	tests := []struct {
		f     Fractions
		never []Split
	}{
		{Fractions{1, 0, 0}, []Split{Validation, Test}},
		{Fractions{0, 1, 0}, []Split{Train, Test}},
		{Fractions{0, 0, 1}, []Split{Train, Validation}},
		{Fractions{0.7, 0.3, 0}, []Split{Test}},
		{Fractions{0.5, 0, 0.5}, []Split{Validation}},
	}
	for _, tt := range tests {
		for _, id := range syntheticIDs(2000) {
			if s := Assign(id, "z", tt.f); slices.Contains(tt.never, s) {
				t.Errorf("%v: Assign(%q) = %v, whose fraction is 0", tt.f, id, s)
				break
			}
		}
	}
}

func TestAssignSeedMatters(t *testing.T) {
	moved := 0
	for _, id := range syntheticIDs(1000) {
		if Assign(id, "a", DefaultFractions) != Assign(id, "b", DefaultFractions) {
			moved++
		}
	}
	if moved < 300 {
		t.Errorf("changing the seed moved %d of 1000 tasks, want a reshuffle", moved)
	}
}

func TestPartition(t *testing.T) {
	tasks := tasksWithIDs(syntheticIDs(300))
	parts := Partition(tasks, "p", DefaultFractions)
	if len(parts) != 3 {
		t.Fatalf("Partition has %d keys, want 3", len(parts))
	}
	total := 0
	for s, part := range parts {
		total += len(part)
		last := -1
		for _, task := range part {
			if got := Assign(task.ID, "p", DefaultFractions); got != s {
				t.Errorf("task %q in %v, Assign says %v", task.ID, s, got)
			}
			i := slices.IndexFunc(tasks, func(x Task) bool { return x.ID == task.ID })
			if i <= last {
				t.Errorf("%v: task %q out of file order", s, task.ID)
			}
			last = i
		}
	}
	if total != len(tasks) {
		t.Errorf("Partition holds %d tasks, want %d", total, len(tasks))
	}

	empty := Partition(nil, "p", DefaultFractions)
	for _, s := range Splits {
		if part, ok := empty[s]; !ok || len(part) != 0 {
			t.Errorf("Partition(nil)[%v] = %v, %v; want empty and present", s, part, ok)
		}
	}
}

func TestSplitString(t *testing.T) {
	for s, want := range map[Split]string{Train: "train", Validation: "validation", Test: "test", Split(7): "split(7)"} {
		if got := s.String(); got != want {
			t.Errorf("Split(%d).String() = %q, want %q", int(s), got, want)
		}
	}
}

func syntheticIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("task-%05d", i)
	}
	return ids
}

func tasksWithIDs(ids []string) []Task {
	tasks := make([]Task, len(ids))
	for i, id := range ids {
		tasks[i] = Task{ID: id, Prompt: "p"}
	}
	return tasks
}
