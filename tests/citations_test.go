package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Citations (docs/conventions.md, "Citations"): code, tests and docs cite a
// rule as `docs/<name>.md §<n>[.<n>...]`, more sections of the same page
// following with commas, "and", "or" or a dash (`docs/runtime.md §2.2, §2.7,
// §4`, `§2.4–§2.6`), and a page's heading as `docs/<name>.md, "<heading>"`.
// A section exists when a heading of that page starts with its number.

// citedFileExts are the kinds of files whose text is checked.
var citedFileExts = []string{".go", ".ts", ".lua", ".md", ".sh", ".json"}

// legacyNames are pages that are not in the repository (the specs and the
// design notes the docs replaced), spelled in pieces so that this file does
// not cite them itself.
var legacyNames = []string{
	"RUNTIME" + ".md", "PROTOCOL" + ".md", "ARCHITECTURE" + ".md", "CONVENTIONS" + ".md",
	"behaviour" + ".md",
}

var (
	// wrap is what may stand between two parts of a citation: spaces, and at
	// most one line break followed by a comment marker (a citation wrapped in
	// a Go, Lua or shell comment).
	wrap = `[ \t]*(?:\r?\n[ \t]*(?://+|--+|#+|\*)?[ \t]*)?`
	// sectionCitation matches a page followed by one or more section numbers.
	sectionCitation = regexp.MustCompile(`([A-Za-z0-9_./-]*)\.md` + wrap +
		`(§[0-9]+(?:\.[0-9]+)*(?:` + wrap + `(?:,|and|or|–|-)?` + wrap + `§[0-9]+(?:\.[0-9]+)*)*)`)
	sectionNumber = regexp.MustCompile(`§([0-9]+(?:\.[0-9]+)*)`)
	// headingCitation matches `docs/<name>.md, "<heading>"`.
	headingCitation = regexp.MustCompile(`docs/([A-Za-z0-9_-]+)\.md,` + wrap + `"([^"]{1,120})"`)
	headingLine     = regexp.MustCompile(`^#{1,6}[ \t]+(.*)$`)
	headingNum      = regexp.MustCompile(`^§?([0-9]+(?:\.[0-9]+)*)\.?(?:[ \t]|$)`)
	commentWrap     = regexp.MustCompile(`\s*\n\s*(?://+|--+|#+|\*)?\s*`)
)

// docPage is what citations can name on one page of docs/.
type docPage struct {
	sections map[string]bool // "2.4"
	headings map[string]bool // heading text without its number, lowercase
}

// readDocPages reads the headings of every docs/*.md under root, outside
// fenced code blocks.
func readDocPages(t testing.TB, root string) map[string]docPage {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]docPage{}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		page := docPage{sections: map[string]bool{}, headings: map[string]bool{}}
		fenced := false
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			m := headingLine.FindStringSubmatch(line)
			if fenced || m == nil {
				continue
			}
			text := strings.TrimSpace(m[1])
			if n := headingNum.FindStringSubmatch(text); n != nil {
				page.sections[n[1]] = true
				text = strings.TrimSpace(text[len(n[0]):])
			}
			page.headings[strings.ToLower(text)] = true
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		pages[strings.TrimSuffix(filepath.Base(path), ".md")] = page
	}
	return pages
}

// citingFiles lists the files under root whose citations are checked:
// source, scripts and docs, without dependencies, caches, build output and
// fuzz corpora.
func citingFiles(t testing.TB, root string) []string {
	t.Helper()
	skipDirs := []string{"node_modules", ".cache", ".git", "bin", "out", "dist", "artifacts"}
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (slices.Contains(skipDirs, d.Name()) || d.Name() == "fuzz" && filepath.Base(filepath.Dir(path)) == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(citedFileExts, filepath.Ext(path)) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkCitations returns one problem per bad citation in files, as
// "path:line: what is wrong", path relative to root.
func checkCitations(t testing.TB, root string, files []string) []string {
	t.Helper()
	pages := readDocPages(t, root)
	var problems []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		report := func(offset int, format string, args ...any) {
			line := 1 + strings.Count(text[:offset], "\n")
			problems = append(problems, fmt.Sprintf("%s:%d: %s", rel(root, file), line, fmt.Sprintf(format, args...)))
		}
		for _, name := range legacyNames {
			for i := 0; ; {
				j := strings.Index(text[i:], name)
				if j < 0 {
					break
				}
				report(i+j, "%s is not a page of this repository; cite docs/runtime.md, docs/protocol.md, docs/architecture.md or docs/conventions.md", name)
				i += j + len(name)
			}
		}
		for _, m := range sectionCitation.FindAllStringSubmatchIndex(text, -1) {
			path, secs := text[m[2]:m[3]], text[m[4]:m[5]]
			name, ok := strings.CutPrefix(path, "docs/")
			if slices.Contains(legacyNames, filepath.Base(path)+".md") {
				continue // reported above
			}
			if !ok || strings.Contains(name, "/") {
				report(m[0], "cite sections as docs/<page>.md §<n>, not %s.md", path)
				continue
			}
			page, ok := pages[name]
			if !ok {
				report(m[0], "docs/%s.md does not exist", name)
				continue
			}
			for _, s := range sectionNumber.FindAllStringSubmatch(secs, -1) {
				if !page.sections[s[1]] {
					report(m[0], "docs/%s.md has no section §%s", name, s[1])
				}
			}
		}
		for _, m := range headingCitation.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			if slices.Contains(legacyNames, name+".md") {
				continue // reported above
			}
			heading := strings.ToLower(strings.TrimSpace(commentWrap.ReplaceAllString(text[m[4]:m[5]], " ")))
			if page, ok := pages[name]; !ok {
				report(m[0], "docs/%s.md does not exist", name)
			} else if !page.headings[heading] {
				report(m[0], "docs/%s.md has no heading %q", name, text[m[4]:m[5]])
			}
		}
	}
	return problems
}

// TestCitations fails on every citation in the repository whose page,
// section or heading does not exist, and on every mention of a page that is
// not in the repository (legacyNames).
func TestCitations(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	for _, p := range checkCitations(t, root, citingFiles(t, root)) {
		t.Error(p)
	}
}

// TestCitationCheckerCatchesBadCitations runs the checker on a small tree
// with good and bad citations, so that TestCitations cannot pass by accident.
func TestCitationCheckerCatchesBadCitations(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The citations are built in pieces so that this file cites nothing itself.
	sec, rules, nope := "§", "docs/"+"rules.md", "docs/"+"nope.md"
	write(rules, "# Rules\n\n## 1. One\n\n### 1.2 Two parts\n\n```sh\n# 3 not a heading\n```\n\n## Named part\n")
	write("pkg/a.go", strings.Join([]string{
		"// good: " + rules + " " + sec + "1, " + sec + "1.2 and " + rules + ", \"Named part\"", // 1
		"// missing section: " + rules + " " + sec + "1.3",                                      // 2
		"// missing in a list: " + rules + " " + sec + "1, " + sec + "3",                        // 3
		"// a code block is no heading: " + rules + " " + sec + "3.",                            // 4
		"// missing page: " + nope + " " + sec + "1",                                            // 5
		"// other form: rules.md " + sec + "1",                                                  // 6
		"// wrapped: (" + rules,                                                                 // 7
		"// " + sec + "1.2, " + sec + "2)",                                                      // 8
		"// heading: " + rules + ", \"Named\n// part\" and " + rules + ", \"Unnamed part\"",     // 9, 10
		"// legacy heading: docs/" + legacyNames[4] + ", \"Time\"",                              // 11
		"// legacy: " + legacyNames[0] + " " + sec + "1 and docs/" + legacyNames[4],             // 12
		"// a range: " + rules + " " + sec + "1–" + sec + "1.2",                                 // 13
	}, "\n")+"\n")
	write("node_modules/x/b.md", rules+" "+sec+"9\n")
	write("pkg/testdata/fuzz/FuzzX/c.json", rules+" "+sec+"9\n")

	files := citingFiles(t, root)
	if want := []string{filepath.Join(root, rules), filepath.Join(root, "pkg/a.go")}; !slices.Equal(files, want) {
		t.Fatalf("files checked = %v, want %v", files, want)
	}
	got := checkCitations(t, root, files)
	legacy := " is not a page of this repository; cite docs/runtime.md, docs/protocol.md, docs/architecture.md or docs/conventions.md"
	want := []string{
		"pkg/a.go:12: " + legacyNames[0] + legacy,
		"pkg/a.go:11: " + legacyNames[4] + legacy,
		"pkg/a.go:12: " + legacyNames[4] + legacy,
		"pkg/a.go:2: " + rules + " has no section " + sec + "1.3",
		"pkg/a.go:3: " + rules + " has no section " + sec + "3",
		"pkg/a.go:4: " + rules + " has no section " + sec + "3",
		"pkg/a.go:5: " + nope + " does not exist",
		"pkg/a.go:6: cite sections as docs/<page>.md " + sec + "<n>, not rules.md",
		"pkg/a.go:7: " + rules + " has no section " + sec + "2",
		"pkg/a.go:10: " + rules + " has no heading \"Unnamed part\"",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
