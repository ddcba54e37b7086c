package plots

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatFor(t *testing.T) {
	tests := []struct {
		path, want, err string
	}{
		{"out.png", "png", ""},
		{"out.svg", "svg", ""},
		{"OUT.PNG", "png", ""},
		{"dir.v2/Grid.Svg", "svg", ""},
		{"/tmp/a.b.png", "png", ""},
		{"out.gif", "", `plots: unknown image format ".gif" (want .png or .svg)`},
		{"out", "", `plots: unknown image format "" (want .png or .svg)`},
		{"png", "", `plots: unknown image format "" (want .png or .svg)`},
		{"out.png.bak", "", `plots: unknown image format ".bak" (want .png or .svg)`},
	}
	for _, tt := range tests {
		got, err := FormatFor(tt.path)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("FormatFor(%q) = %q, %v; want %q, %q", tt.path, got, err, tt.want, tt.err)
		}
	}
}

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileWritesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.svg")
	if err := WriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "<svg/>")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "<svg/>" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}

	// A render that fails after writing half: nothing new is left, and the
	// file that was there is untouched.
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "<svg half")
		return boom
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "plots: ") || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want boom, prefixed, naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "<svg/>" {
		t.Errorf("a failed render changed the file to %q", b)
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != "out.svg" {
		t.Errorf("directory holds %v after a failed render, want [out.svg]", got)
	}

	// A render error that is already ours is passed on as it is.
	fresh := filepath.Join(dir, "new.png")
	err = WriteFile(fresh, func(w io.Writer) error { return Timeline(w, nil, Options{}) })
	if err == nil || err.Error() != "plots: no result to draw" {
		t.Errorf("err = %v, want the render's own", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a failed render left %s: %v", fresh, err)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want only out.svg", got)
	}
}

func TestWriteFileToAnUnwritableDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		filepath.Join(dir, "no-such-dir", "out.png"),
		filepath.Join(file, "out.png"), // a file where a directory should be
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Join(ro, "out.png"))
	}
	for _, path := range paths {
		rendered := false
		err := WriteFile(path, func(w io.Writer) error { rendered = true; return nil })
		if err == nil {
			t.Errorf("WriteFile(%s) succeeded", path)
			continue
		}
		if !strings.HasPrefix(err.Error(), "plots: cannot write "+path+": ") {
			t.Errorf("WriteFile(%s): %v; want it to name the path", path, err)
		}
		if rendered {
			t.Errorf("WriteFile(%s) rendered before it knew it could write", path)
		}
	}
	if got := entries(t, dir); len(got) > 2 {
		t.Errorf("directory holds %v after failed writes", got)
	}
	if err := WriteFile(dir+string(filepath.Separator), func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "names a directory") {
		t.Errorf("WriteFile of a directory: %v", err)
	}
}
