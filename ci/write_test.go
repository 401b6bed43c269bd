package ci

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".github", "workflows", "descent-s.yml")
	ours := []byte(header + "github s ...`\nname: x\n")
	if err := WriteFile(path, ours, false); err != nil {
		t.Fatal(err)
	}
	var exists *ExistsError
	err := WriteFile(path, []byte("other"), false)
	if !errors.As(err, &exists) || !exists.Ours {
		t.Fatalf("second write: %v, want an ExistsError saying git descent ci wrote it", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(ours) {
		t.Errorf("the refused write changed the file to %q", got)
	}
	if err := WriteFile(path, []byte("new"), true); err != nil {
		t.Fatal(err)
	}
	err = WriteFile(path, ours, false)
	if !errors.As(err, &exists) || exists.Ours {
		t.Fatalf("write over the user's file: %v, want an ExistsError saying it is not ours", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Errorf("file %q", got)
	}
}
