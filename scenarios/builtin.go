package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// The built-in scenarios: each file's name, less .yaml, is the scenario's.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the names of the built-in scenarios, sorted.
func Builtin() []string {
	entries, _ := fs.ReadDir(builtinFS, "builtin")
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// builtin returns the embedded text of the named built-in.
func builtin(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return nil, false
	}
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	return data, err == nil
}

// Open returns the built-in scenario named nameOrPath or, if there is none
// of that name, the scenario file at that path (./name reaches a file that
// a built-in's name would hide). A name that is neither is an *Error that
// lists the built-ins; a file that cannot be read is os.ReadFile's
// *fs.PathError ("open foo.yaml: no such file or directory"); a file that
// cannot be used is an *Error with its line. Every error is about the
// argument or the file, so all are the caller's bad input.
func Open(nameOrPath string) (*File, error) { return OpenWith(nameOrPath, nil) }

// OpenWith is Apply(Open(nameOrPath), sets), reading the file once: a
// file of a million clients is read, and held, once rather than twice.
// An error the file gives without the settings is the file's, as Open
// gives it.
func OpenWith(nameOrPath string, sets []Setting) (*File, error) {
	if len(sets) == 0 {
		return open(nameOrPath)
	}
	var f *File
	if data, ok := builtin(nameOrPath); ok {
		f = unreadFile(nameOrPath+".yaml", data, &decoder{file: nameOrPath + ".yaml"})
		f.Path = ""
	} else {
		var err error
		f, err = loadUnread(nameOrPath)
		if errors.Is(err, fs.ErrNotExist) && !looksLikePath(nameOrPath) {
			return nil, &Error{Msg: UnknownScenario(nameOrPath)}
		}
		if err != nil {
			return nil, err
		}
	}
	return Apply(f, sets)
}

// open is Open.
func open(nameOrPath string) (*File, error) {
	if data, ok := builtin(nameOrPath); ok {
		f, err := Parse(nameOrPath+".yaml", data)
		if err != nil {
			return nil, err
		}
		f.Path = ""
		return f, nil
	}
	f, err := Load(nameOrPath)
	if errors.Is(err, fs.ErrNotExist) && !looksLikePath(nameOrPath) {
		return nil, &Error{Msg: UnknownScenario(nameOrPath)}
	}
	return f, err
}

// UnknownBuiltin is the message for a name that is no built-in, where only
// a built-in will do (ratelim scenarios show), with the closest suggested.
func UnknownBuiltin(name string) string {
	msg := fmt.Sprintf("unknown scenario %s", quote(name))
	if s := suggest(name, Builtin()); s != "" {
		msg += fmt.Sprintf(", did you mean %q?", s)
	}
	return msg + " (want one of " + strings.Join(Builtin(), ", ") + ")"
}

// UnknownScenario is the message for a name that is no built-in and no
// file, with the closest built-in suggested when it looks like a typo:
//
//	unknown scenario "partiton", did you mean "partition"? no built-in and no file has that name (want a file, or one of ...)
func UnknownScenario(name string) string {
	msg := fmt.Sprintf("unknown scenario %s", quote(name))
	if s := suggest(name, Builtin()); s != "" {
		msg += fmt.Sprintf(", did you mean %q?", s)
	} else {
		msg += ":"
	}
	return msg + " no built-in and no file has that name (want a file, or one of " + strings.Join(Builtin(), ", ") + ")"
}

// looksLikePath reports whether s was meant as a file rather than a name:
// it has a directory or a YAML extension.
func looksLikePath(s string) bool {
	ext := filepath.Ext(s)
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) || ext == ".yaml" || ext == ".yml"
}
