package library

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/git-descent/git-descent/internal/git"
)

// Setting is one key a caller wants in a library's section of .descent.
type Setting struct {
	Key    string   // a key of Keys, e.g. "scorer"
	Values []string // its value, or the values of a multi-valued key (frozen, guarded, ...)
	// Explicit marks a value the user asked for; without it the value is a
	// default, which only fills a missing key and never replaces one.
	Explicit bool
}

// WriteRequest is what Write writes: the section of library Name.
type WriteRequest struct {
	Name     string
	Path     string    // the library directory, as CleanPath returns it; written first, as explicit
	Settings []Setting // the other keys, written in this order
	// Force replaces a value that differs from an explicit setting instead
	// of refusing it. Defaults never replace a value, forced or not.
	Force bool
}

// ConflictError is an explicit setting that .descent already gives a
// different value, refused because the write was not forced.
type ConflictError struct {
	Key   string   // the full key, library.<name>.<key>
	Found []string // the values in .descent
	Want  []string // the values asked for
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s already sets %s = %q; not replacing it with %q (edit %s, or re-run with --force)",
		FileName, e.Key, strings.Join(e.Found, ", "), strings.Join(e.Want, ", "), FileName)
}

// PathTakenError is a library directory that .descent already configures
// under another name.
type PathTakenError struct {
	Path    string
	Library string // the name it is configured as
}

func (e *PathTakenError) Error() string {
	return fmt.Sprintf("%s is already configured as library %q in %s", e.Path, e.Library, FileName)
}

// CheckPath returns a *PathTakenError when path is already configured as a
// library other than name, and the error of LoadAll when .descent does not
// read. A caller that changes more than .descent checks this first, so that
// a refusal changes nothing; Write checks it again.
func CheckPath(ctx context.Context, repo *git.Repo, name, path string) error {
	libs, err := LoadAll(ctx, repo)
	if err != nil {
		return err
	}
	for _, l := range libs {
		if l.Name != name && l.Path == path {
			return &PathTakenError{Path: path, Library: l.Name}
		}
	}
	return nil
}

// Write writes the keys of one library section to the repository's
// .descent and returns the keys it wrote, in order (none when the file
// already says all of it). A key that has the value asked for is left
// alone; one that has another value is kept when the setting is a default,
// replaced when it is explicit and the request forced, and otherwise
// refused with a *ConflictError. A path configured as another library is a
// *PathTakenError. Refusals are found before anything is written. Write
// does not validate values; LoadAll reports a bad one.
func Write(ctx context.Context, repo *git.Repo, req WriteRequest) ([]string, error) {
	file := File(repo)
	existing, err := repo.ConfigList(ctx, file, `^library\.`)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", FileName, err)
	}
	if other := pathOwner(existing, req.Path, req.Name); other != "" {
		return nil, &PathTakenError{Path: req.Path, Library: other}
	}
	settings := append([]Setting{{Key: "path", Values: []string{req.Path}, Explicit: true}}, req.Settings...)
	writes, err := changes(existing, req.Name, settings, req.Force)
	if err != nil {
		return nil, err
	}
	var wrote []string
	for _, s := range writes {
		key := sectionKey(req.Name, s.Key)
		if err := repo.ConfigReplaceAll(ctx, file, key, s.Values); err != nil {
			return wrote, fmt.Errorf("write %s: %w", key, err)
		}
		wrote = append(wrote, s.Key)
	}
	return wrote, nil
}

// changes returns the settings that differ from the existing entries and
// may be written, or the *ConflictError of the first that may not.
func changes(existing []git.ConfigEntry, name string, settings []Setting, force bool) ([]Setting, error) {
	var writes []Setting
	for _, s := range settings {
		key := sectionKey(name, s.Key)
		var found []string
		for _, e := range existing {
			if e.Key == key {
				found = append(found, e.Value)
			}
		}
		switch {
		case slices.Equal(found, s.Values):
			continue
		case len(found) > 0 && !s.Explicit:
			continue // a value the user set; defaults never replace it
		case len(found) > 0 && !force:
			return nil, &ConflictError{Key: key, Found: found, Want: s.Values}
		}
		writes = append(writes, s)
	}
	return writes, nil
}

// pathOwner returns the name of a library other than name whose path is
// path, or "".
func pathOwner(existing []git.ConfigEntry, path, name string) string {
	paths := map[string]string{} // library name → its last path value, as LoadAll reads it
	for _, e := range existing {
		if n, key, ok := splitKey(e.Key); ok && key == "path" {
			paths[n] = CleanPath(e.Value)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(paths)) {
		if n != name && paths[n] == path {
			return n
		}
	}
	return ""
}

func sectionKey(name, key string) string { return "library." + name + "." + key }
