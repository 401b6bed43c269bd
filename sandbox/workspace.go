package sandbox

import (
	"fmt"
	"os"
)

// Workspace is a throwaway directory for one process run. The caller owns it
// and must Remove it.
type Workspace struct {
	Dir string
}

// NewWorkspace creates an empty directory under root ("" means the system
// temporary directory), named after pattern like os.MkdirTemp, with the
// process id in its name so that one a killed process left behind can be
// told from one in use.
func NewWorkspace(root, pattern string) (*Workspace, error) {
	pattern = fmt.Sprintf("%sp%d-", pattern, os.Getpid())
	if root != "" {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("create workspace root %q: %w", root, err)
		}
	}
	dir, err := os.MkdirTemp(root, pattern)
	if err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	return &Workspace{Dir: dir}, nil
}

// Remove deletes the workspace and everything in it (RemoveAll).
func (w *Workspace) Remove() error { return RemoveAll(w.Dir) }

// RemoveAll deletes p and everything below it, making read-only
// directories writable first when they stand in the way, so that nothing
// an agent did can keep it alive. A link is removed, never followed.
func RemoveAll(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		_ = chmodTree(p)
	}
	return os.RemoveAll(p)
}

func chmodTree(dir string) error {
	_ = os.Chmod(dir, 0o755)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			_ = chmodTree(dir + "/" + e.Name())
		}
	}
	return nil
}
