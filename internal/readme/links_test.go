package readme

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// linkedPages are the Markdown files whose relative links must resolve:
// the user documentation (README.md, docs/*.md) and the benchmark pages it
// links to.
func linkedPages(t *testing.T) []page {
	t.Helper()
	out := pages(t)
	for _, name := range []string{"bench/README.md", "bench/results/README.md"} {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page{name, string(b)})
	}
	return out
}

// mdLink matches an inline Markdown link or image, [text](target) or
// ![alt](target); the target is group 1 (no spaces or titles are used).
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// inlineCode matches a `code span`, whose contents are not links.
var inlineCode = regexp.MustCompile("`[^`]*`")

// link is one relative link of a page.
type link struct {
	line   int
	target string // as written
}

// relativeLinks returns the links of md that point into the repository
// (not http:, https:, mailto:), outside fenced code blocks and code spans.
func relativeLinks(md string) []link {
	var out []link
	inFence := false
	for i, l := range strings.Split(md, "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		l = inlineCode.ReplaceAllString(l, "")
		for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
			tg := m[1]
			if strings.Contains(tg, "://") || strings.HasPrefix(tg, "mailto:") {
				continue
			}
			out = append(out, link{i + 1, tg})
		}
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, every character but
// letters, digits, spaces, '-' and '_' dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of md (outside code blocks), with
// GitHub's -1, -2 … suffixes for repeated headings.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, l := range strings.Split(md, "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if !strings.HasPrefix(h, " ") {
			continue
		}
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// brokenLinks checks every relative link of pg: its file must exist in
// the repository (read through readFile, relative to the module root) and
// an #anchor into a Markdown file must name one of its headings. It
// returns one message per broken link.
func brokenLinks(pg page, readFile func(string) (string, bool)) []string {
	var bad []string
	dir := path.Dir(pg.name)
	for _, l := range relativeLinks(pg.text) {
		file, anchor, _ := strings.Cut(l.target, "#")
		target := pg.name
		if file != "" {
			target = path.Clean(path.Join(dir, file))
		}
		if strings.HasPrefix(target, "../") {
			bad = append(bad, pg.name+":"+strconv.Itoa(l.line)+": "+l.target+" points outside the repository")
			continue
		}
		text, ok := readFile(target)
		if !ok {
			bad = append(bad, pg.name+":"+strconv.Itoa(l.line)+": "+l.target+" does not exist")
			continue
		}
		if anchor != "" && strings.HasSuffix(target, ".md") && !anchors(text)[anchor] {
			bad = append(bad, pg.name+":"+strconv.Itoa(l.line)+": "+l.target+": "+target+" has no heading #"+anchor)
		}
	}
	return bad
}

// repoFile reads a file or names a directory of the module, by its
// slash-separated path relative to the module root.
func repoFile(name string) (string, bool) {
	p := filepath.Join(root, filepath.FromSlash(name))
	st, err := os.Stat(p)
	if err != nil {
		return "", false
	}
	if st.IsDir() {
		return "", true
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// TestRelativeLinks checks that every relative link and image of
// README.md, docs/*.md, bench/README.md and bench/results/README.md
// resolves, anchors included, and that README.md links every docs/ page.
func TestRelativeLinks(t *testing.T) {
	pgs := linkedPages(t)
	n := 0
	for _, pg := range pgs {
		n += len(relativeLinks(pg.text))
		for _, msg := range brokenLinks(pg, repoFile) {
			t.Error(msg)
		}
	}
	if n == 0 {
		t.Fatal("no relative links found: the link extractor is broken")
	}
	linked := map[string]bool{}
	for _, l := range relativeLinks(pgs[0].text) {
		file, _, _ := strings.Cut(l.target, "#")
		linked[path.Clean(file)] = true
	}
	var orphans []string
	for _, pg := range pgs {
		if strings.HasPrefix(pg.name, "docs/") && !linked[pg.name] {
			orphans = append(orphans, pg.name)
		}
	}
	sort.Strings(orphans)
	if len(orphans) > 0 {
		t.Errorf("README.md does not link %s", strings.Join(orphans, ", "))
	}
}

// TestBrokenLinkIsCaught shows that the link check can fail: on a fixed
// page a missing file, a missing anchor and a link out of the repository
// are each reported, while good links, links in code and web links are not.
func TestBrokenLinkIsCaught(t *testing.T) {
	files := map[string]string{
		"docs/a.md": "# Title\n\n## Exit codes\n\n## Exit codes\n",
		"README.md": "",
	}
	read := func(name string) (string, bool) { s, ok := files[name]; return s, ok }
	pg := page{"docs/b.md", strings.Join([]string{
		"[ok](a.md) [ok](a.md#exit-codes) [ok](a.md#exit-codes-1) [ok](../README.md) [web](https://example.com/x.md)",
		"`[in code](missing.md)`",
		"```",
		"[in a block](missing.md)",
		"```",
		"[gone](missing.md)",
		"[no anchor](a.md#nowhere)",
		"![out](../../etc/passwd)",
	}, "\n")}
	got := brokenLinks(pg, read)
	want := []string{
		"docs/b.md:6: missing.md does not exist",
		"docs/b.md:7: a.md#nowhere: docs/a.md has no heading #nowhere",
		"docs/b.md:8: ../../etc/passwd points outside the repository",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("broken links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := slug("Backends and OpenBLAS (threads)"); s != "backends-and-openblas-threads" {
		t.Errorf("slug = %q", s)
	}
}
