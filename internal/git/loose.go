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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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
// process: core.sharedRepository is not set anywhere git reads it, and no
// GIT_OBJECT_DIRECTORY sends git's writes elsewhere.
func (r *Repo) ownWrites(ctx context.Context) bool {
	r.readWriteConfig(ctx)
	return r.canWrite
}

// ownCommits reports whether commits may be written in process as well:
// i18n.commitEncoding is not set either (git would name the encoding in
// the commit).
func (r *Repo) ownCommits(ctx context.Context) bool {
	r.readWriteConfig(ctx)
	return r.canWrite && r.canCommit
}

// readWriteConfig reads, once, the settings that send writes to git.
func (r *Repo) readWriteConfig(ctx context.Context) {
	r.ownWritesOnce.Do(func() {
		// Read once for the Repo's life, so not cut short by the
		// context of whichever call came first.
		es, err := r.ConfigList(context.WithoutCancel(ctx), EffectiveConfig, `^(core\.sharedrepository|i18n\.commitencoding)$`)
		if err != nil || os.Getenv("GIT_OBJECT_DIRECTORY") != "" {
			return
		}
		r.canWrite, r.canCommit = true, true
		for _, e := range es {
			switch e.Key {
			case "core.sharedrepository":
				r.canWrite = false
			case "i18n.commitencoding":
				r.canCommit = false
			}
		}
	})
}

// writeCommit writes the commit git commit-tree would write for req, with
// sig as author and committer and the dates GIT_AUTHOR_DATE and
// GIT_COMMITTER_DATE give (now when unset); false when it cannot be sure
// to: a name or date git would read in ways of its own, parents or a tree
// not given by full name.
func (r *Repo) writeCommit(ctx context.Context, req CommitTreeRequest, sig Signature) (Hash, bool, error) {
	now := time.Now() // one now for both, as git
	author, ok1 := commitDate(os.Getenv("GIT_AUTHOR_DATE"), now)
	committer, ok2 := commitDate(os.Getenv("GIT_COMMITTER_DATE"), now)
	if !ok1 || !ok2 || !plainIdent(sig.Name) || !plainIdent(sig.Email) || !plainMessage(req.Message) || !isObjectName(req.Tree) {
		return "", false, nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", req.Tree)
	var seen []Hash
	for _, p := range req.Parents {
		if !isObjectName(p) {
			return "", false, nil
		}
		if slices.Contains(seen, p) {
			continue // git drops a repeated parent too
		}
		seen = append(seen, p)
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author %s <%s> %s\ncommitter %s <%s> %s\n\n%s", sig.Name, sig.Email, author, sig.Name, sig.Email, committer, req.Message)
	h, err := r.writeBytes(ctx, "commit", b.Bytes())
	return h, true, err
}

// plainIdent reports whether git takes a name or an email as it is: no
// angle brackets or line breaks, none of the characters git trims from
// either end, not empty.
func plainIdent(s string) bool {
	const crud = " \t.,:;<>\"\\'"
	if s == "" || strings.ContainsAny(s, "<>") || strings.ContainsAny(s[:1], crud) || strings.ContainsAny(s[len(s)-1:], crud) {
		return false
	}
	return plainText(s) && !strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f })
}

// plainMessage reports whether git takes a commit message as it is: no
// NUL (git refuses it), nothing git's UTF-8 check would rewrite.
func plainMessage(s string) bool { return !strings.Contains(s, "\x00") && plainText(s) }

// plainText is valid UTF-8 without the noncharacters git's check refuses
// (U+FFFE, U+FFFF, U+FDD0 to U+FDEF).
func plainText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(c rune) bool {
		return c == 0xfffe || c == 0xffff || c >= 0xfdd0 && c <= 0xfdef
	})
}

// commitDate turns a GIT_*_DATE value into git's "<seconds> <±hhmm>", now
// when it is empty; false for a value this may not read exactly as git
// does. It reads git's raw form ("@<seconds> <zone>", no leading zero),
// RFC 3339, "YYYY-MM-DD hh:mm:ss ±hhmm" and RFC 2822, each with a zone
// under 24 hours and whole minutes, in the years 1970 to 2099 that git
// accepts; anything else, and "now" in a TZ Go cannot load, goes to git.
func commitDate(v string, now time.Time) (string, bool) {
	if v == "" {
		if tz := os.Getenv("TZ"); tz != "" {
			if _, err := time.LoadLocation(strings.TrimPrefix(tz, ":")); err != nil {
				return "", false
			}
		}
		return gitTime(now), true
	}
	if m := rawDate.FindStringSubmatch(v); m != nil {
		secs, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || secs >= maxDate {
			return "", false
		}
		zone := m[2]
		if zone == "-0000" {
			zone = "+0000"
		}
		return m[1] + " " + zone, true
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05 -0700", time.RFC1123Z} {
		t, err := time.Parse(layout, v)
		if err != nil || t.Format(layout) != v || t.Year() < 1970 || t.Unix() < 0 || t.Unix() >= maxDate {
			continue // what Go reads another way, or git does not take
		}
		if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
			continue
		}
		return gitTime(t), true
	}
	return "", false
}

// maxDate is 2100-01-01: git refuses dates from then on.
const maxDate = 4102444800

// rawDate is git's internal date form: seconds since the epoch, a zone.
var rawDate = regexp.MustCompile(`^@([1-9][0-9]{0,10}) ([+-](?:[01][0-9]|2[0-3])[0-5][0-9])$`)

// gitTime formats t as git records it, in t's own zone.
func gitTime(t time.Time) string {
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%d %c%02d%02d", t.Unix(), sign, off/3600, off/60%60)
}

// deflaters keeps zlib writers at best speed for the next object: a new
// one allocates and clears over a megabyte, many times the cost of
// deflating a small object (BenchmarkWriteBlob). A channel rather than a
// sync.Pool, which a garbage collection empties.
var deflaters = make(chan *zlib.Writer, 8)

// deflater returns a zlib writer at best speed onto w; putDeflater keeps
// it for the next.
func deflater(w io.Writer) *zlib.Writer {
	select {
	case z := <-deflaters:
		z.Reset(w)
		return z
	default:
		z, err := zlib.NewWriterLevel(w, zlib.BestSpeed)
		if err != nil {
			panic(err) // only for a level out of range
		}
		return z
	}
}

func putDeflater(z *zlib.Writer) {
	select {
	case deflaters <- z:
	default:
	}
}

// writeObject stores an object of kind ("blob", "tree", "commit") whose
// content of size bytes src yields, and returns its name: deflated into a
// temporary file in the objects directory while it is hashed, then linked
// into place. src yielding other than size bytes is an error (a file that
// changed while it was read); a cancelled context is one too, as git would
// fail to start. Content in memory goes through writeBytes.
func (r *Repo) writeObject(ctx context.Context, kind string, size int64, src io.Reader) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	objects := filepath.Join(r.gitDir, "objects")
	tmp, name, err := r.deflate(objects, kind, size, src)
	if tmp != "" {
		defer os.Remove(tmp)
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", kind, err)
	}
	if err := place(tmp, filepath.Join(objects, name[:2], name[2:])); err != nil {
		return "", fmt.Errorf("write %s %s: %w", kind, name[:12], err)
	}
	return Hash(name), nil
}

// writeBytes stores an object of kind whose content is data. Its name is
// known before anything is written, so an object already stored only has
// its time renewed (a concurrent prune keeps it), and a new one is
// deflated into a temporary file beside where it goes, as git does: the
// files of concurrent writers spread over the 256 object directories
// rather than all being created and removed in one.
func (r *Repo) writeBytes(ctx context.Context, kind string, data []byte) (Hash, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	name := string(r.objectName(kind, data))
	dir := filepath.Join(r.gitDir, "objects", name[:2])
	final := filepath.Join(dir, name[2:])
	if _, err := os.Lstat(final); err == nil {
		renew(final)
		return Hash(name), nil
	}
	var tmp, got string
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		tmp, got, err = r.deflate(dir, kind, int64(len(data)), bytes.NewReader(data))
	}
	if tmp != "" {
		defer os.Remove(tmp)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && tmp == "":
		// The directory went away (a concurrent gc): the temporary file
		// goes in objects/ instead, and place makes the directory again.
		return r.writeObject(ctx, kind, int64(len(data)), bytes.NewReader(data))
	case err != nil:
		return "", fmt.Errorf("write %s: %w", kind, err)
	case got != name:
		return "", fmt.Errorf("write %s: stored as %s, named %s", kind, got, name)
	}
	if err := place(tmp, final); err != nil {
		return "", fmt.Errorf("write %s %s: %w", kind, name[:12], err)
	}
	return Hash(name), nil
}

// deflate writes an object's header and content (size bytes from src),
// deflated, into a new temporary file in dir, made read-only as git makes
// its objects, and returns the file ("" when none was made) and the
// object's name.
func (r *Repo) deflate(dir, kind string, size int64, src io.Reader) (tmp, name string, err error) {
	f, err := os.CreateTemp(dir, "tmp_obj_descent_")
	if err != nil {
		return "", "", err
	}
	h := r.newHash()
	z := deflater(f)
	defer putDeflater(z)
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
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), err
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
			renew(final) // already stored
			return nil
		case errors.Is(err, fs.ErrNotExist):
			continue // the directory went away: make it again
		}
		return os.Rename(tmp, final)
	}
	return err
}

// renew gives an object already stored the time now, so that a concurrent
// prune keeps it; another user's object stays as it is.
func renew(object string) {
	now := time.Now()
	_ = os.Chtimes(object, now, now)
}

// writeBlob stores data as a blob in process.
func (r *Repo) writeBlob(ctx context.Context, data []byte) (Hash, error) {
	return r.writeBytes(ctx, "blob", data)
}

// writeFileBlob stores the file at p as a blob in process, byte for byte.
func (r *Repo) writeFileBlob(ctx context.Context, p string) (Hash, error) {
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
	h, err := r.writeObject(ctx, "blob", fi.Size(), f)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return h, nil
}
