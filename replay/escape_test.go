package replay

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelim/ratelim/internal/escape"
	"github.com/ratelim/ratelim/trace"
)

// Keys a client chose, replayed from a CSV log (which keeps any byte):
// the table shows none of their control or bidi characters raw, and JSON
// and CSV keep every two distinct keys distinct.
func TestHostileKeysAreEscaped(t *testing.T) {
	keys := []string{"\x1b[31mred", "nul\x00byte", "\u202eevil", "\xffa", "\xfea", `\xffa`, "bell\a", "c1\u009b", "plain", "caf\u00e9"}
	var log bytes.Buffer
	log.WriteString("time,key\n")
	cw := csv.NewWriter(&log)
	for _, k := range keys {
		cw.Write([]string{"1772366400", k})
	}
	cw.Flush()
	path := filepath.Join(t.TempDir(), "keys.csv")
	if err := os.WriteFile(path, log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := trace.ParseKey(trace.CSV, "key")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Scan(context.Background(), Source{Path: path, Trace: trace.Options{Format: trace.CSV, Key: key}}, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if len(l.Keys) != len(keys) {
		t.Fatalf("%d keys read, want %d", len(l.Keys), len(keys))
	}
	rep := &Report{Log: l, Runs: []*Run{replayRun(t, l, l.Scenario(sampleLimit, nil))}}

	var table bytes.Buffer
	if err := WriteTable(&table, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\x00", "\u202e", "\xff", "\xfe", "\a", "\u009b"} {
		if strings.Contains(table.String(), bad) {
			t.Errorf("the table holds %q raw:\n%s", bad, table.String())
		}
	}
	for _, want := range []string{`\x1b[31mred`, `nul\x00byte`, `\u202eevil`, `\xffa`, `\xfea`, `\\xffa`, "café"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %s:\n%s", want, table.String())
		}
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Keys []struct{ Key string } `json:"keys"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	jsonKeys := map[string]bool{}
	for _, k := range doc.Runs[0].Keys {
		jsonKeys[k.Key] = true
	}
	var cs bytes.Buffer
	if err := WriteCSV(&cs, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	csvKeys := map[string]bool{}
	for _, row := range rows[1:] {
		csvKeys[row[1]] = true
	}
	for what, got := range map[string]map[string]bool{"JSON": jsonKeys, "CSV": csvKeys} {
		if len(got) != len(keys) {
			t.Errorf("%s: %d distinct keys, want %d: %v", what, len(got), len(keys), got)
		}
		for _, k := range keys {
			if !got[escape.Data(k)] {
				t.Errorf("%s lacks %q as %q", what, k, escape.Data(k))
			}
		}
		if !got["plain"] || !got["café"] || !got[`\xffa`] || !got[`\\xffa`] {
			t.Errorf("%s: %v", what, got)
		}
	}
}
