package readme

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the module root, relative to this package's directory (go test
// runs each package's tests in its own source directory).
const root = "../.."

// snippet is one ```go block of the README.
type snippet struct {
	line    int      // 1-based README line of the opening fence
	imports []string // import paths of a leading import declaration, if any
	code    []string // the remaining lines, normalized (see normalize)
}

// example is the body of one func Example… in a _test.go file.
type example struct {
	name    string // file:ExampleName, for messages
	imports map[string]bool
	body    []string // normalized lines
}

// normalize drops blank lines and the leading indentation of every line
// (tabs in Go source, the fence's indentation in Markdown lists) and
// trailing white space, so that a snippet matches an excerpt of an
// Example body however deeply either is indented. Everything else —
// including the spaces gofmt puts before trailing comments — must match
// verbatim.
func normalize(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimRight(strings.TrimLeft(l, " \t"), " \t\r")
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

var fence = regexp.MustCompile("^[ \t]*```")

// goSnippets extracts every ```go block of a Markdown text; file names
// the text in messages.
func goSnippets(t *testing.T, file, md string) []snippet {
	t.Helper()
	var out []snippet
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !fence.MatchString(l) {
			continue
		}
		lang := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "`"))
		start := i
		j := i + 1
		for j < len(lines) && !fence.MatchString(lines[j]) {
			j++
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: code block never closed", file, start+1)
		}
		if lang == "go" {
			out = append(out, splitImports(t, file, start+1, lines[start+1:j]))
		}
		i = j
	}
	return out
}

// splitImports separates a snippet's leading import declaration (shown
// to readers so they know the paths) from its code: the code must match an
// Example body and the paths must be imported by that Example's file.
func splitImports(t *testing.T, file string, line int, lines []string) snippet {
	t.Helper()
	s := snippet{line: line}
	k := 0
	for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
		k++
	}
	if k < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[k]), "import") {
		end := k
		if strings.Contains(lines[k], "(") {
			for end < len(lines) && strings.TrimSpace(lines[end]) != ")" {
				end++
			}
			if end == len(lines) {
				t.Fatalf("%s:%d: import declaration never closed", file, line)
			}
		}
		src := "package p\n" + strings.Join(lines[k:end+1], "\n") + "\n"
		f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s:%d: import declaration does not parse: %v", file, line, err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			s.imports = append(s.imports, p)
		}
		lines = lines[end+1:]
	}
	s.code = normalize(lines)
	return s
}

// examples parses every _test.go file under the module root and returns
// the bodies of its Example functions.
func examples(t *testing.T) []example {
	t.Helper()
	var out []example
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		imports := map[string]bool{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imports[p] = true
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
			out = append(out, example{
				name:    rel + ":" + fn.Name.Name,
				imports: imports,
				body:    normalize(strings.Split(string(body), "\n")),
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// skipDir says which directories hold no module source: hidden ones,
// testdata, vendor.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor"
}

// contains reports whether sub is a contiguous run of lines of body.
func contains(body, sub []string) bool {
	if len(sub) == 0 {
		return true
	}
	for i := 0; i+len(sub) <= len(body); i++ {
		ok := true
		for j := range sub {
			if body[i+j] != sub[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// match returns the Example that holds the snippet, or "" with the
// reason why none does.
func match(s snippet, exs []example) (string, string) {
	if len(s.code) == 0 {
		return "", "the block has no code besides its imports"
	}
	best, bestN := "", 0
	for _, ex := range exs {
		if contains(ex.body, s.code) {
			var missing []string
			for _, p := range s.imports {
				if !ex.imports[p] {
					missing = append(missing, strconv.Quote(p))
				}
			}
			if len(missing) == 0 {
				return ex.name, ""
			}
			best, bestN = ex.name+" (its file does not import "+strings.Join(missing, ", ")+")", len(s.code)
			continue
		}
		// For the message: the Example sharing the longest leading run.
		for n := len(s.code) - 1; n > bestN; n-- {
			if contains(ex.body, s.code[:n]) {
				best, bestN = fmt.Sprintf("%s (first %d lines match; not %q)", ex.name, n, s.code[n]), n
				break
			}
		}
	}
	if best == "" {
		return "", "no Example holds even its first line " + strconv.Quote(s.code[0])
	}
	return "", "closest: " + best
}

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// page is one Markdown file of the user documentation.
type page struct {
	name string // path relative to the module root, for messages
	text string
}

// pages returns README.md and every docs/*.md: the user documentation
// whose Go snippets must be Examples.
func pages(t *testing.T) []page {
	t.Helper()
	out := []page{{"README.md", readme(t)}}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found: the user documentation moved or the glob is wrong")
	}
	sort.Strings(docs)
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, d)
		out = append(out, page{filepath.ToSlash(rel), string(b)})
	}
	return out
}

// TestSnippetsAreExamples is the project rule "every code snippet in the
// documentation compiles and runs": each ```go block of README.md and of
// docs/*.md must be a verbatim excerpt (modulo indentation and blank lines)
// of some Example body, which go test compiles and, with its // Output:,
// runs and checks.
func TestSnippetsAreExamples(t *testing.T) {
	exs := examples(t)
	if len(exs) == 0 {
		t.Fatal("no Example functions found under the module root")
	}
	for _, pg := range pages(t) {
		snips := goSnippets(t, pg.name, pg.text)
		if pg.name == "README.md" && len(snips) == 0 {
			t.Fatal("README.md has no ```go block: the extractor is broken or the README lost its Library section")
		}
		for _, s := range snips {
			name, why := match(s, exs)
			if name == "" {
				t.Errorf("%s:%d: this ```go block is not the body (or part of it) of any func Example… in the module's _test.go files; "+
					"edit the Example and the snippet together, or add an Example (example_readme_test.go in the package it is about). %s", pg.name, s.line, why)
				continue
			}
			t.Logf("%s:%d: %s", pg.name, s.line, name)
		}
	}
}

// TestEditedSnippetIsCaught shows that the check above can fail: every
// snippet with one line changed, or one line dropped from its middle,
// matches no Example.
func TestEditedSnippetIsCaught(t *testing.T) {
	exs := examples(t)
	for _, pg := range pages(t) {
		for _, s := range goSnippets(t, pg.name, pg.text) {
			if name, _ := match(s, exs); name == "" {
				continue // already reported by TestSnippetsAreExamples
			}
			for i := range s.code {
				edited := s
				edited.code = append([]string(nil), s.code...)
				edited.code[i] += " // edited"
				if name, _ := match(edited, exs); name != "" {
					t.Errorf("%s:%d: snippet with line %d edited still matches %s", pg.name, s.line, i+1, name)
				}
			}
			if len(s.code) >= 3 {
				dropped := s
				dropped.code = append(append([]string(nil), s.code[:1]...), s.code[2:]...)
				if name, _ := match(dropped, exs); name != "" {
					t.Errorf("%s:%d: snippet with its second line dropped still matches %s", pg.name, s.line, name)
				}
			}
			if len(s.imports) > 0 {
				bogus := s
				bogus.imports = append(append([]string(nil), s.imports...), "example.com/not/imported")
				if name, _ := match(bogus, exs); name != "" {
					t.Errorf("%s:%d: snippet importing an unused path still matches %s", pg.name, s.line, name)
				}
			}
		}
	}
}

// TestExtractor checks the Markdown and import handling on a fixed text.
func TestExtractor(t *testing.T) {
	md := "text\n```go\nimport (\n\t\"fmt\"\n)\n\nfmt.Println(1)\n```\n- item\n\n  ```go\n  x := 2\n  ```\n```sh\nls\n```\n"
	got := goSnippets(t, "fixed.md", md)
	if len(got) != 2 {
		t.Fatalf("got %d snippets, want 2", len(got))
	}
	if got[0].line != 2 || len(got[0].imports) != 1 || got[0].imports[0] != "fmt" || len(got[0].code) != 1 || got[0].code[0] != "fmt.Println(1)" {
		t.Errorf("first snippet: %+v", got[0])
	}
	if got[1].line != 11 || len(got[1].code) != 1 || got[1].code[0] != "x := 2" {
		t.Errorf("second snippet: %+v", got[1])
	}
	body := normalize([]string{"\ta := 1", "", "\tfmt.Println(1)", "\tb := 3"})
	if !contains(body, got[0].code) || contains(body, []string{"a := 1", "b := 3"}) {
		t.Error("contains: wrong answer on a fixed body")
	}
}

// TestPackagesTable checks that the packages table of the "## Library"
// section names every package of the module (every directory with a
// non-test .go file) and no package that does not exist.
func TestPackagesTable(t *testing.T) {
	md := readme(t)
	start := strings.Index(md, "\n## Library\n")
	if start < 0 {
		t.Fatal(`README.md has no "## Library" section`)
	}
	sec := md[start+1:]
	if end := strings.Index(sec[3:], "\n## "); end >= 0 {
		sec = sec[:end+3]
	}
	listed := map[string]bool{}
	row := regexp.MustCompile("^\\| *(`[^|]*`) *\\|")
	name := regexp.MustCompile("`([^`]+)`")
	for _, l := range strings.Split(sec, "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			listed[n[1]] = true
		}
	}
	if len(listed) == 0 {
		t.Fatal(`no packages table found in "## Library"`)
	}
	have := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			if rel, _ := filepath.Rel(root, filepath.Dir(path)); rel != "." {
				have[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var missing, extra []string
	for p := range have {
		if !listed[p] {
			missing = append(missing, p)
		}
	}
	for p := range listed {
		if !have[p] {
			extra = append(extra, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("README.md's packages table does not list %s", strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		t.Errorf("README.md's packages table lists %s, which are not packages of the module", strings.Join(extra, ", "))
	}
}
