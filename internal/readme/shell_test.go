package readme

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// shellBlock is one fenced block of commands in a Markdown page.
type shellBlock struct {
	line   int    // 1-based line of the opening fence
	script string // the commands, one per line (continuations kept)
	notRun string // the reason of a <!-- not run: … --> marker
	long   string // the reason of a <!-- long: … --> marker
}

var (
	notRunMarker = regexp.MustCompile(`^<!--\s*not run:\s*(.+?)\s*-->$`)
	longMarker   = regexp.MustCompile(`^<!--\s*long:\s*(.+?)\s*-->$`)
)

// shellBlocks extracts the blocks of commands of a Markdown text: every
// ```sh, ```bash or ```shell block (all its lines are the script), and every
// untagged or ```console block with lines starting "$ " (those lines, the
// lines a trailing backslash continues and the indented lines right after
// them — a quoted argument spanning lines — are the script; the rest is
// output shown to the reader). A block with no command is not returned. The
// nearest non-blank line before the fence may be a marker:
// <!-- not run: REASON --> (never run) or <!-- long: REASON --> (skipped
// under -short).
func shellBlocks(t *testing.T, file, md string) []shellBlock {
	t.Helper()
	var out []shellBlock
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !fence.MatchString(lines[i]) {
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " \t"))
		lang := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i]), "`"))
		start := i
		j := i + 1
		for j < len(lines) && !fence.MatchString(lines[j]) {
			j++
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: code block never closed", file, start+1)
		}
		body := lines[start+1 : j]
		i = j
		b := shellBlock{line: start + 1}
		for k := start - 1; k >= 0; k-- {
			l := strings.TrimSpace(lines[k])
			if l == "" {
				continue
			}
			if m := notRunMarker.FindStringSubmatch(l); m != nil {
				b.notRun = m[1]
			} else if m := longMarker.FindStringSubmatch(l); m != nil {
				b.long = m[1]
			}
			break
		}
		var cmds []string
		switch lang {
		case "sh", "bash", "shell":
			for _, l := range body {
				cmds = append(cmds, trimIndent(l, indent))
			}
		case "", "console":
			cont, inCmd := false, false
			for _, l := range body {
				l = trimIndent(l, indent)
				switch {
				case cont || inCmd && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")):
					cmds = append(cmds, l)
				case strings.HasPrefix(l, "$ "):
					cmds = append(cmds, strings.TrimPrefix(l, "$ "))
				default:
					cont, inCmd = false, false
					continue
				}
				inCmd = true
				cont = strings.HasSuffix(strings.TrimRight(l, " \t\r"), `\`)
			}
		default:
			continue
		}
		if strings.TrimSpace(strings.Join(cmds, "")) == "" {
			continue
		}
		b.script = strings.Join(cmds, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// trimIndent removes up to n leading spaces or tabs (a fence's indentation
// inside a list).
func trimIndent(l string, n int) string {
	for k := 0; k < n && len(l) > 0 && (l[0] == ' ' || l[0] == '\t'); k++ {
		l = l[1:]
	}
	return l
}

// The parser finds commands in the blocks that have them and reads the
// markers; a block of output or a synopsis without "$ " is not a command.
func TestShellBlocksParse(t *testing.T) {
	md := "text\n\n<!-- not run: needs docker -->\n```sh\ndocker build .\n```\n\n" +
		"```\n$ dpsolve a \\\n    --b c\noutput line\n    indented output\n$ ls\nmore output\n```\n\n" +
		"```\ndpsolve solve --n N [--json]\n```\n\n<!-- long: a minute -->\n```bash\ndpsolve x\n```\n\n```json\n{\"a\": 1}\n```\n"
	bs := shellBlocks(t, "t.md", md)
	if len(bs) != 3 {
		t.Fatalf("got %d blocks: %+v", len(bs), bs)
	}
	if bs[0].notRun != "needs docker" || bs[0].script != "docker build .\n" {
		t.Errorf("block 1: %+v", bs[0])
	}
	if bs[1].script != "dpsolve a \\\n    --b c\nls\n" || bs[1].notRun != "" || bs[1].line != 8 {
		t.Errorf("block 2: %+v", bs[1])
	}
	if bs[2].long != "a minute" {
		t.Errorf("block 3: %+v", bs[2])
	}
}

// TestDocsShellBlocks runs every block of commands of README.md and
// docs/*.md (see shellBlocks) with a freshly built dpsolve first on PATH,
// page by page in order in a scratch copy of the repository root (its
// top-level entries linked, so the commands' outputs land in the scratch
// directory), and fails on the first command of a block that exits non-zero.
// Blocks marked <!-- not run: … --> are listed and skipped; blocks marked
// <!-- long: … --> are skipped under -short.
func TestDocsShellBlocks(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the docs' commands")
	}
	bin := t.TempDir()
	args := []string{"build", "-o", filepath.Join(bin, "dpsolve")}
	if dpsolveTags != "" {
		args = append(args, "-tags", dpsolveTags)
	}
	build := exec.Command("go", append(args, "./cmd/dpsolve")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building dpsolve: %v\n%s", err, out)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks := shellBlocks(t, rel, string(b))
		if len(blocks) == 0 {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			work := scratchRoot(t, abs)
			for _, bl := range blocks {
				switch {
				case bl.notRun != "":
					t.Logf("%s:%d: not run: %s", rel, bl.line, bl.notRun)
					continue
				case bl.long != "" && testing.Short():
					t.Logf("%s:%d: skipped under -short: %s", rel, bl.line, bl.long)
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", bl.script)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				start := time.Now()
				err := cmd.Run()
				cancel()
				if err != nil {
					t.Fatalf("%s:%d: the block failed (%v) after %.1f s:\n%s\noutput:\n%s", rel, bl.line, err, time.Since(start).Seconds(), bl.script, clipOutput(out.String()))
				}
				t.Logf("%s:%d: ran in %.1f s", rel, bl.line, time.Since(start).Seconds())
			}
		})
	}
}

// scratchRoot is a new directory holding a symbolic link to every top-level
// entry of the repository root but .git.
func scratchRoot(t *testing.T, rootAbs string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(rootAbs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(rootAbs, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// clipOutput keeps the last 4 KB of a block's output for a message.
func clipOutput(s string) string {
	if len(s) > 4096 {
		return "…" + s[len(s)-4096:]
	}
	return s
}
