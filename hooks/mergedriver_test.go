package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/git-descent/git-descent/internal/git"
	"github.com/git-descent/git-descent/internal/gittest"
)

const lib = "skills/pdf"

// newRepo creates an empty repository, isolated from the user's git config,
// and returns its private HOME for tests that write a global config.
func newRepo(t *testing.T) (context.Context, *git.Repo, string) {
	t.Helper()
	ctx, repo := gittest.NewRepo(t)
	return ctx, repo, os.Getenv("HOME")
}

// localConfig returns a key's values in the repository's own config, one
// a line ("" when unset).
func localConfig(t *testing.T, repo *git.Repo, key string) string {
	t.Helper()
	es, err := repo.ConfigList(context.Background(), "", "^"+regexp.QuoteMeta(key)+"$")
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, e := range es {
		vs = append(vs, e.Value)
	}
	return strings.Join(vs, "\n")
}

// setLocalConfig sets a key in the repository's own config.
func setLocalConfig(t *testing.T, repo *git.Repo, key, value string) {
	t.Helper()
	if err := repo.ConfigSet(context.Background(), "", key, value); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkAttr asks git which merge driver it would use for path.
func checkAttr(t *testing.T, repo *git.Repo, attr, path string) string {
	t.Helper()
	v, err := repo.CheckAttr(context.Background(), attr, path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestInstallMergeDriverFresh(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	changes, err := InstallMergeDriver(ctx, repo, lib+"/", false)
	if err != nil {
		t.Fatal(err)
	}
	attrs := AttributesFile(repo)
	want := []Change{
		{Where: "merge.descent.driver", Value: DriverCommand},
		{Where: "merge.descent.name", Value: driverLabel},
		{Where: attrs, Value: "/skills/pdf/** merge=descent"},
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("changes = %+v, want %+v", changes, want)
	}
	if got := localConfig(t, repo, "merge.descent.driver"); got != DriverCommand {
		t.Errorf("merge.descent.driver = %q", got)
	}
	if got := localConfig(t, repo, "merge.descent.name"); got != driverLabel {
		t.Errorf("merge.descent.name = %q", got)
	}
	if got := readFile(t, attrs); got != "/skills/pdf/** merge=descent\n" {
		t.Errorf("%s = %q", attrs, got)
	}
	if _, err := os.Stat(filepath.Join(repo.Top(), ".gitattributes")); !os.IsNotExist(err) {
		t.Errorf("the tracked .gitattributes was written: %v", err)
	}
	for path, want := range map[string]string{
		"skills/pdf/SKILL.md": "descent", "skills/pdf/scripts/a.sh": "descent",
		"skills/pdf-x/SKILL.md": "unspecified", "README.md": "unspecified",
	} {
		if got := checkAttr(t, repo, "merge", path); got != want {
			t.Errorf("git check-attr merge %s = %q, want %q", path, got, want)
		}
	}
}

func TestInstallMergeDriverIdempotent(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	attrs := AttributesFile(repo)
	writeFile(t, attrs, "*.png binary\n/other/** merge=union\n")
	if _, err := InstallMergeDriver(ctx, repo, lib, false); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(repo.GitDir(), "config")
	beforeAttrs, beforeConfig := readFile(t, attrs), readFile(t, config)
	if beforeAttrs != "*.png binary\n/other/** merge=union\n/skills/pdf/** merge=descent\n" {
		t.Errorf("%s = %q, want the line appended", attrs, beforeAttrs)
	}
	for _, force := range []bool{false, true} {
		changes, err := InstallMergeDriver(ctx, repo, lib, force)
		if err != nil || len(changes) != 0 {
			t.Errorf("second install (force %v) = %+v, %v; want no changes", force, changes, err)
		}
	}
	if got := readFile(t, attrs); got != beforeAttrs {
		t.Errorf("%s changed on a second install:\n%q\nwas\n%q", attrs, got, beforeAttrs)
	}
	if got := readFile(t, config); got != beforeConfig {
		t.Errorf(".git/config changed on a second install:\n%s\nwas\n%s", got, beforeConfig)
	}
}

func TestInstallMergeDriverExistingConfig(t *testing.T) {
	for _, c := range []struct {
		name      string
		driver    string // existing merge.descent.driver
		label     string // existing merge.descent.name
		force     bool
		conflict  string // key of the expected *ConflictError
		wantValue string // merge.descent.driver afterwards
	}{
		{name: "foreign driver", driver: "my-merge %O %A %B", conflict: "merge.descent.driver", wantValue: "my-merge %O %A %B"},
		{name: "foreign driver forced", driver: "my-merge %O %A %B", force: true, wantValue: DriverCommand},
		{name: "older git-descent driver upgraded", driver: "git descent merge-driver %O %A %B", wantValue: DriverCommand},
		{name: "older git-descent binary driver upgraded", driver: "git-descent merge-driver %O %A %B", wantValue: DriverCommand},
		{name: "foreign name", label: "my merge", conflict: "merge.descent.name"},
		{name: "foreign name forced", label: "my merge", force: true, wantValue: DriverCommand},
		{name: "older git-descent name", label: "git-descent merge", wantValue: DriverCommand},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, repo, _ := newRepo(t)
			if c.driver != "" {
				setLocalConfig(t, repo, "merge.descent.driver", c.driver)
			}
			if c.label != "" {
				setLocalConfig(t, repo, "merge.descent.name", c.label)
			}
			_, err := InstallMergeDriver(ctx, repo, lib, c.force)
			var ce *ConflictError
			if c.conflict == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := localConfig(t, repo, "merge.descent.name"); got != driverLabel {
					t.Errorf("merge.descent.name = %q, want %q", got, driverLabel)
				}
				if got := checkAttr(t, repo, "merge", lib+"/SKILL.md"); got != "descent" {
					t.Errorf("merge attribute = %q", got)
				}
			} else {
				if !errors.As(err, &ce) || ce.Where != c.conflict {
					t.Fatalf("InstallMergeDriver = %v, want a *ConflictError on %s", err, c.conflict)
				}
				if !strings.Contains(err.Error(), "--force") {
					t.Errorf("error %q does not say how to resolve it", err)
				}
				if got := readFile(t, AttributesFile(repo)); strings.Contains(got, "merge=descent") {
					t.Errorf("attributes written despite the conflict: %q", got)
				}
			}
			if c.wantValue != "" {
				if got := localConfig(t, repo, "merge.descent.driver"); got != c.wantValue {
					t.Errorf("merge.descent.driver = %q, want %q", got, c.wantValue)
				}
			}
		})
	}
}

// Only the repository's own config matters: a user's global setting is
// neither a conflict nor touched.
func TestInstallMergeDriverIgnoresGlobalConfig(t *testing.T) {
	ctx, repo, home := newRepo(t)
	global := filepath.Join(home, ".gitconfig")
	writeFile(t, global, "[merge \"descent\"]\n\tdriver = my-global-merge %O %A %B\n\tname = mine\n")
	if got, _, err := repo.ConfigGet(ctx, "merge.descent.driver"); err != nil || got != "my-global-merge %O %A %B" {
		t.Fatalf("setup: global config not in effect: %q, %v", got, err)
	}
	if _, err := InstallMergeDriver(ctx, repo, lib, false); err != nil {
		t.Fatalf("a global setting was taken for a conflict: %v", err)
	}
	if got := localConfig(t, repo, "merge.descent.driver"); got != DriverCommand {
		t.Errorf("local merge.descent.driver = %q", got)
	}
	if got := readFile(t, global); got != "[merge \"descent\"]\n\tdriver = my-global-merge %O %A %B\n\tname = mine\n" {
		t.Errorf("global config changed: %q", got)
	}
}

func TestInstallMergeDriverExistingAttributes(t *testing.T) {
	const before, after = "*.png binary\n", "# end\n/other/** merge=union\n"
	for _, c := range []struct {
		name     string
		line     string // existing line for the library's pattern
		force    bool
		conflict bool
		want     string // attributes file afterwards
	}{
		{name: "foreign driver", line: "/skills/pdf/** merge=union", conflict: true},
		{name: "merge unset", line: "/skills/pdf/** -merge", conflict: true},
		{name: "merge set (text)", line: "/skills/pdf/** merge", conflict: true},
		{name: "merge unspecified", line: "/skills/pdf/** !merge", conflict: true},
		{name: "foreign driver forced", line: "/skills/pdf/** merge=union", force: true,
			want: before + "/skills/pdf/** merge=descent\n" + after},
		{name: "other attributes on the line kept", line: "/skills/pdf/** text eol=lf",
			want: before + "/skills/pdf/** text eol=lf\n" + after + "/skills/pdf/** merge=descent\n"},
		{name: "other attributes kept when forced", line: "/skills/pdf/**   filter=lfs diff=lfs merge=lfs -text", force: true,
			want: before + "/skills/pdf/** filter=lfs diff=lfs merge=descent -text\n" + after},
		{name: "already ours among others", line: "/skills/pdf/** text merge=descent",
			want: before + "/skills/pdf/** text merge=descent\n" + after},
		{name: "another pattern", line: "/skills/** merge=union",
			want: before + "/skills/** merge=union\n" + after + "/skills/pdf/** merge=descent\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, repo, _ := newRepo(t)
			attrs := AttributesFile(repo)
			orig := before + c.line + "\n" + after
			writeFile(t, attrs, orig)
			_, err := InstallMergeDriver(ctx, repo, lib, c.force)
			if c.conflict {
				var ce *ConflictError
				if !errors.As(err, &ce) || !strings.Contains(ce.Where, "/skills/pdf/**") {
					t.Fatalf("InstallMergeDriver = %v, want a *ConflictError on the pattern", err)
				}
				if got := readFile(t, attrs); got != orig {
					t.Errorf("attributes changed despite the conflict:\n%q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, attrs); got != c.want {
				t.Errorf("attributes:\n%s\nwant\n%s", got, c.want)
			}
			if got := checkAttr(t, repo, "merge", lib+"/SKILL.md"); got != "descent" {
				t.Errorf("git check-attr merge = %q, want descent", got)
			}
		})
	}
}

// A library path with spaces gets a quoted pattern that git reads back.
func TestInstallMergeDriverQuotesPaths(t *testing.T) {
	ctx, repo, _ := newRepo(t)
	if _, err := InstallMergeDriver(ctx, repo, "skills/my lib", false); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(AttributesFile(repo))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "\"/skills/my lib/**\" merge=descent\n"; got != want {
		t.Fatalf("attributes = %q, want %q", got, want)
	}
	if err := CheckMergeDriver(ctx, repo, "skills/my lib"); err != nil {
		t.Fatal(err)
	}
	changes, err := InstallMergeDriver(ctx, repo, "skills/my lib", false)
	if err != nil || len(changes) != 0 {
		t.Fatalf("second install: %v, %v", changes, err)
	}
}
