package git

import (
	"fmt"
	"testing"
)

// BenchmarkWriteBlob writes a new 2 KB blob in process, as a worker's
// capture and the journal do for every small file they store: the cost
// of one loose object.
//
//	go test -run '^$' -bench WriteBlob ./internal/git
func BenchmarkWriteBlob(b *testing.B) {
	ctx, r := benchRepo(b)
	if !r.ownWrites(ctx) {
		b.Fatal("git writes the objects of this repository, not git-descent")
	}
	line := []byte("- a rule of the skill, one line of about sixty bytes long ok\n")
	data := make([]byte, 0, 2048)
	for len(data)+len(line) <= cap(data) {
		data = append(data, line...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blob := append(fmt.Appendf(nil, "%d\n", i), data...)
		if _, err := r.writeBlob(ctx, blob); err != nil {
			b.Fatal(err)
		}
	}
}
