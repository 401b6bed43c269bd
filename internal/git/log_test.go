package git

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// The commands that need no repository are logged like the others.
func TestRepolessCommandsAreLogged(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, err := CheckVersion(ctx, log); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeFile(ctx, log, MergeFileRequest{Ours: []byte("a\n"), Base: []byte("a\n"), Theirs: []byte("b\n")}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"args=[version]", "args=\"[merge-file -p"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, buf.String())
		}
	}
}
