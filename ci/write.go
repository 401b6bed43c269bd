package ci

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// header starts every file this package writes, so that an earlier one is
// told from the user's own.
const header = "# Written by `git descent ci "

// ExistsError is a file WriteFile did not replace.
type ExistsError struct {
	Path string
	Ours bool // an earlier git descent ci wrote it
}

func (e *ExistsError) Error() string {
	if e.Ours {
		return fmt.Sprintf("%s exists (an earlier git descent ci wrote it): --force writes it anew", e.Path)
	}
	return fmt.Sprintf("%s exists and git descent ci did not write it: move it aside, write elsewhere with -o, or replace it with --force", e.Path)
}

// WriteFile writes data to path, making its directory. An existing file is
// replaced only when force is set; otherwise the error is an *ExistsError,
// also when another process creates the file first.
func WriteFile(path string, data []byte, force bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if force {
		return os.WriteFile(path, data, 0o644)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		old, _ := os.ReadFile(path)
		return &ExistsError{Path: path, Ours: bytes.HasPrefix(old, []byte(header))}
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
