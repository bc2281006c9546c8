package msgpackbound

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestCheckLengths(t *testing.T) {
	good, err := msgpack.Marshal(map[string]any{"a": []int32{1, 2, 300, -70000}, "s": strings.Repeat("x", 300),
		"b": []byte{1, 2, 3}, "f": 1.5, "n": nil, "t": true, "m": map[string]int{"k": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLengths(good); err != nil {
		t.Errorf("valid object: %v", err)
	}
	for name, data := range map[string][]byte{
		"empty":       nil,
		"truncated":   good[:len(good)-1],
		"trailing":    append(slices.Clone(good), 0),
		"array32":     {0xdd, 0xff, 0xff, 0xff, 0xff, 1, 2},
		"map32":       {0xdf, 0x80, 0, 0, 0, 1, 2},
		"str32":       {0xdb, 0, 0, 1, 0, 'a'},
		"bin16":       {0xc5, 0x01, 0x00},
		"ext32":       {0xc9, 0xff, 0xff, 0xff, 0xff, 1},
		"nested":      {0x91, 0x91, 0xdc, 0xff, 0xff},
		"never used":  {0xc1},
		"short int64": {0xd3, 1, 2},
	} {
		if err := CheckLengths(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzCheckLengths: any bytes are judged without a panic; what msgpack itself
// encodes is accepted; and what is accepted decodes while allocating no more
// than a small multiple of its size.
func FuzzCheckLengths(f *testing.F) {
	for _, v := range []any{nil, true, 1.5, int64(-70000), "x", []byte{1, 2}, []int32{1, 2, 300},
		map[string]any{"docs": [][]int32{{1, 2}, {3}}, "version": 1}} {
		b, err := msgpack.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff, 1, 2})
	f.Add([]byte{0x91, 0x91, 0xdc, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		if CheckLengths(data) != nil {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var v any
		err := msgpack.Unmarshal(data, &v)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20+64*uint64(len(data)) {
			t.Errorf("%d accepted bytes allocated %d bytes when decoded (err %v)", len(data), grew, err)
		}
		if err == nil {
			again, err := msgpack.Marshal(v)
			if err == nil && CheckLengths(again) != nil {
				t.Errorf("msgpack's own encoding of %v refused: %v", v, CheckLengths(again))
			}
		}
	})
}
