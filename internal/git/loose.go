package git

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Blobs and trees are written in process as loose objects (decision 69),
// the way git's own hash-object and mktree store them: the object's
// header and content deflated (at core.looseCompression's default,
// zlib's best speed) into a temporary file in the objects directory, made
// read-only, then linked to objects/xx/yyyy… under its name; an object
// already there is left as it is, its modification time renewed so that a
// concurrent prune keeps it. Only where git would apply permissions of its
// own (core.sharedRepository) does git write them.

// ownWrites reports whether this repository's objects may be written in
// process: core.sharedRepository is not set anywhere git reads it.
func (r *Repo) ownWrites(ctx context.Context) bool {
	r.ownWritesOnce.Do(func() {
		es, err := r.ConfigList(ctx, EffectiveConfig, `^core\.sharedrepository$`)
		r.canWrite = err == nil && len(es) == 0
	})
	return r.canWrite
}

// writeObject stores an object of kind ("blob", "tree") whose content of
// size bytes src yields, and returns its name. src yielding other than
// size bytes is an error (a file that changed while it was read).
func (r *Repo) writeObject(kind string, size int64, src io.Reader) (Hash, error) {
	objects := filepath.Join(r.gitDir, "objects")
	tmp, err := os.CreateTemp(objects, "tmp_obj_descent_")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", kind, err)
	}
	defer os.Remove(tmp.Name())
	h := r.newHash()
	z, err := zlib.NewWriterLevel(tmp, zlib.BestSpeed)
	if err != nil {
		tmp.Close()
		return "", err
	}
	header := fmt.Sprintf("%s %d\x00", kind, size)
	h.Write([]byte(header))
	z.Write([]byte(header))
	n, err := io.Copy(io.MultiWriter(h, z), src)
	if err == nil && n != size {
		err = fmt.Errorf("%d bytes where %d were announced (did it change while it was read?)", n, size)
	}
	if err == nil {
		err = z.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444)
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", kind, err)
	}
	name := hex.EncodeToString(h.Sum(nil))
	if err := place(tmp.Name(), filepath.Join(objects, name[:2], name[2:])); err != nil {
		return "", fmt.Errorf("write %s %s: %w", kind, name[:12], err)
	}
	return Hash(name), nil
}

// place links the finished temporary file tmp to the object's path,
// making its directory. A concurrent gc may remove that directory between
// the two (it removes empty ones): up to three tries, as git does. Where
// the file system has no hard links, the file is renamed instead.
func place(tmp, final string) error {
	var err error
	for try := 1; try <= 3; try++ {
		if err = os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
			continue
		}
		err = os.Link(tmp, final)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, fs.ErrExist):
			now := time.Now()
			return os.Chtimes(final, now, now) // already stored: keep it from a prune
		case errors.Is(err, fs.ErrNotExist):
			continue // the directory went away: make it again
		}
		return os.Rename(tmp, final)
	}
	return err
}

// writeBlob stores data as a blob in process.
func (r *Repo) writeBlob(data []byte) (Hash, error) {
	return r.writeObject("blob", int64(len(data)), bytes.NewReader(data))
}

// writeFileBlob stores the file at p as a blob in process, byte for byte.
func (r *Repo) writeFileBlob(p string) (Hash, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("write blob: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("write blob: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("write blob: %q is not a regular file", p)
	}
	h, err := r.writeObject("blob", fi.Size(), f)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return h, nil
}
