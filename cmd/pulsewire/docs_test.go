package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinksResolve keeps the documentation's cross-references working
// as pages are split and sections renamed: every relative link of every
// Markdown page (README, docs/, package READMEs) names a file of the
// repository and, with a #fragment, a heading of that page as GitHub
// anchors it. Links inside code blocks are examples, not links.
func TestDocsLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pages := markdownPages(t, root)
	if len(pages) < 10 {
		t.Fatalf("found only %d Markdown pages under %s", len(pages), root)
	}
	anchors := map[string]map[string]bool{}
	text := map[string]string{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text[p] = withoutCode(string(b))
		anchors[p] = headingAnchors(text[p])
	}
	links := 0
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		for _, target := range pageLinks(text[p]) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, frag, _ := strings.Cut(target, "#")
			file := p
			if path != "" {
				file = filepath.Join(filepath.Dir(p), filepath.FromSlash(path))
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s: no such file", rel, target)
				continue
			}
			if frag == "" {
				continue
			}
			a, ok := anchors[file]
			if !ok {
				t.Errorf("%s links to %s: an anchor in a page that is not Markdown", rel, target)
			} else if !a[frag] {
				t.Errorf("%s links to %s: no heading there has that anchor", rel, target)
			}
		}
	}
	t.Logf("%d relative links in %d pages", links, len(pages))
	if links < 50 {
		t.Errorf("found only %d relative links; the link pattern no longer matches the pages", links)
	}
}

// TestGitHubAnchor pins the anchor rules the link check relies on.
func TestGitHubAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Real face skin, and why it answers nothing": "real-face-skin-and-why-it-answers-nothing",
		"Reading a real face's pulse":                "reading-a-real-faces-pulse",
		"`make accuracy` in CI":                      "make-accuracy-in-ci",
		"Two more faces, without a reference":        "two-more-faces-without-a-reference",
		"Face detection: 3×2 cells":                  "face-detection-32-cells",
	} {
		if got := githubAnchor(heading); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// markdownPages lists the repository's own Markdown files: not those of
// downloaded packages (node_modules) or of hidden folders.
func markdownPages(t *testing.T, root string) []string {
	var pages []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "data" || name == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			pages = append(pages, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

var (
	fence       = regexp.MustCompile("(?ms)^ {0,3}```.*?^ {0,3}```[^\n]*$")
	inlineCode  = regexp.MustCompile("`[^`\n]*`")
	mdLink      = regexp.MustCompile(`\]\(\s*([^)\s]+)\s*\)`)
	htmlSrc     = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	headingLine = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
)

// withoutCode blanks fenced code blocks, whose links and headings are
// examples. Inline code stays: a heading may hold some.
func withoutCode(s string) string {
	return fence.ReplaceAllString(s, "")
}

// pageLinks returns the targets of a page's Markdown links and images and
// of its HTML src and href attributes.
func pageLinks(s string) []string {
	s = inlineCode.ReplaceAllString(s, "")
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	for _, m := range htmlSrc.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// headingAnchors returns the anchors GitHub gives a page's headings,
// numbering repeats as it does (name, name-1, name-2).
func headingAnchors(s string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingLine.FindAllStringSubmatch(s, -1) {
		a := githubAnchor(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// githubAnchor is GitHub's anchor of a heading: lower case, spaces to
// hyphens, every character other than a letter, a digit, a hyphen or an
// underscore dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
