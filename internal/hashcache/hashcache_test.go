package hashcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func sumOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// records lists the files in dir.
func records(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestSum: a big-enough, settled file is hashed once and then answered from
// its record, with crypto/sha256's sum of its bytes every time; the record
// is not used once the file is rewritten (same size, modification time set
// back: only the status-change time tells), truncated, or replaced by
// another file (a rename), nor when it is damaged; small files, files that
// just changed and dir "" leave no record.
func TestSum(t *testing.T) {
	if _, known := identityOf(statT(t, os.Args[0])); !known {
		t.Skipf("no file identity on %s: every file is hashed", runtime.GOOS)
	}
	defer func(m int64, s time.Duration) { MinSize, settle = m, s }(MinSize, settle)
	MinSize, settle = 1<<20, 0
	ctx := context.Background()
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "hashes")
	path := filepath.Join(dir, "model.safetensors")
	data := make([]byte, 3<<20+5)
	for i := range data {
		data[i] = byte(i * 31)
	}
	writeFile(t, path, data)
	check := func(what string, want []byte, wantCached bool) {
		t.Helper()
		sum, cached, err := Sum(ctx, cache, path)
		if err != nil || sum != sumOf(want) || cached != wantCached {
			t.Errorf("%s: %s, cached %v, %v; want %s, cached %v", what, sum, cached, err, sumOf(want), wantCached)
		}
	}
	check("first", data, false)
	if got := records(t, cache); len(got) != 1 {
		t.Fatalf("records %q, want one", got)
	}
	check("second", data, true)

	// The same size and modification time, other bytes.
	fi := statT(t, path)
	time.Sleep(20 * time.Millisecond) // past the coarsest ctime tick
	data[len(data)/2] ^= 1
	writeFile(t, path, data)
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	check("rewritten in place, mtime set back", data, false)
	check("after the rewrite", data, true)

	time.Sleep(20 * time.Millisecond)
	data = data[:len(data)-1]
	writeFile(t, path, data)
	check("truncated", data, false)

	other := filepath.Join(dir, "other")
	data2 := append([]byte("another file "), data...)
	writeFile(t, other, data2)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	check("replaced by a rename", data2, false)
	check("after the rename", data2, true)
	data = data2

	// Damaged records: garbage, a wrong sum, a huge file.
	rec := filepath.Join(cache, records(t, cache)[0])
	for _, bad := range [][]byte{[]byte("{not json"), []byte(`{"version":1,"sha256":"xyz"}`), make([]byte, 1<<20)} {
		writeFile(t, rec, bad)
		check("damaged record", data, false)
		check("rewritten record", data, true)
	}

	// Not recorded: a small file; one that just changed; no dir.
	small := filepath.Join(dir, "small")
	writeFile(t, small, []byte("tiny"))
	if sum, cached, err := Sum(ctx, cache, small); err != nil || cached || sum != sumOf([]byte("tiny")) {
		t.Errorf("small file: %s, %v, %v", sum, cached, err)
	}
	settle = time.Hour
	fresh := filepath.Join(dir, "fresh")
	writeFile(t, fresh, data)
	for range 2 {
		if sum, cached, err := Sum(ctx, cache, fresh); err != nil || cached || sum != sumOf(data) {
			t.Errorf("fresh file: %s, %v, %v", sum, cached, err)
		}
	}
	if got := records(t, cache); len(got) != 1 {
		t.Errorf("records %q, want only the first file's", got)
	}
	settle = 0
	for range 2 { // a settled file, but no dir: hashed each time
		if sum, cached, err := Sum(ctx, "", path); err != nil || cached || sum != sumOf(data) {
			t.Errorf("no dir: %s, %v, %v", sum, cached, err)
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Sum(cancelled, cache, fresh); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, _, err := Sum(ctx, cache, filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func statT(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// writeFile writes data over path in place (the same inode).
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// FuzzRead: any bytes in a record's place are a record or not, never a
// panic, and a record holds a well-formed sum of this version.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"version":1,"path":"/m","identity":{"dev":1,"ino":2,"size":3,"mtime_ns":4,"ctime_ns":5},"sha256":"` + sumOf(nil) + `"}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[]`))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "r.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, ok := read(path)
		if ok && (r.Version != version || !isHex64(r.SHA256)) {
			t.Errorf("read %q: %+v", data, r)
		}
	})
}
