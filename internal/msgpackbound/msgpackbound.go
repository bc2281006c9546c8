// Package msgpackbound checks the lengths a msgpack object declares against the
// bytes it has, before a decoder allocates by them. It imports nothing of this
// module.
package msgpackbound

import "fmt"

// CheckLengths walks data as one msgpack object and fails unless every
// length it declares (string, binary, extension, array, map) fits in the bytes
// that are left, and the object ends exactly at the end of data. Decoding data
// afterwards therefore allocates at most a small multiple of len(data):
// msgpack v5.4.1 never applies its own allocation limit to slices (upstream
// issue #401), so one flipped bit in an array header would otherwise ask for
// gigabytes.
func CheckLengths(data []byte) error {
	pos := 0
	pending := 1 // objects still to read; each takes at least one byte
	need := func(n uint64) error {
		if n > uint64(len(data)-pos) {
			return fmt.Errorf("msgpack: %d bytes declared at offset %d, only %d left", n, pos, len(data)-pos)
		}
		return nil
	}
	// length reads a big-endian length of size bytes at pos.
	length := func(size int) (uint64, error) {
		if err := need(uint64(size)); err != nil {
			return 0, err
		}
		var n uint64
		for _, b := range data[pos : pos+size] {
			n = n<<8 | uint64(b)
		}
		pos += size
		return n, nil
	}
	skip := func(n uint64) error {
		if err := need(n); err != nil {
			return err
		}
		pos += int(n)
		return nil
	}
	elems := func(n uint64) error {
		// Every pending object, old and new, needs at least one byte.
		if n > uint64(len(data)-pos) || uint64(pending)+n > uint64(len(data)-pos) {
			return fmt.Errorf("msgpack: %d elements declared at offset %d, only %d bytes left", n, pos, len(data)-pos)
		}
		pending += int(n)
		return nil
	}
	for pending > 0 {
		if pos >= len(data) {
			return fmt.Errorf("msgpack: truncated at offset %d", pos)
		}
		c := data[pos]
		pos++
		pending--
		var err error
		switch {
		case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3: // fixint, nil, bool
		case c >= 0x80 && c <= 0x8f: // fixmap
			err = elems(2 * uint64(c&0x0f))
		case c >= 0x90 && c <= 0x9f: // fixarray
			err = elems(uint64(c & 0x0f))
		case c >= 0xa0 && c <= 0xbf: // fixstr
			err = skip(uint64(c & 0x1f))
		default:
			err = tagged(c, length, skip, elems)
		}
		if err != nil {
			return err
		}
	}
	if pos != len(data) {
		return fmt.Errorf("msgpack: %d bytes after the end of the object", len(data)-pos)
	}
	return nil
}

// tagged handles the type codes 0xc1..0xdf of CheckLengths.
func tagged(c byte, length func(int) (uint64, error), skip, elems func(uint64) error) error {
	sized := func(size int, then func(uint64) error, extra uint64) error {
		n, err := length(size)
		if err != nil {
			return err
		}
		if extra > 0 && n > ^uint64(0)-extra {
			return fmt.Errorf("msgpack: length %d overflows", n)
		}
		return then(n + extra)
	}
	switch c {
	case 0xc4, 0xd9: // bin8, str8
		return sized(1, skip, 0)
	case 0xc5, 0xda: // bin16, str16
		return sized(2, skip, 0)
	case 0xc6, 0xdb: // bin32, str32
		return sized(4, skip, 0)
	case 0xc7: // ext8: length, type, data
		return sized(1, skip, 1)
	case 0xc8:
		return sized(2, skip, 1)
	case 0xc9:
		return sized(4, skip, 1)
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return skip(4)
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return skip(8)
	case 0xcc, 0xd0: // uint8, int8
		return skip(1)
	case 0xcd, 0xd1: // uint16, int16
		return skip(2)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 plus the type byte
		return skip(1 + 1<<(c-0xd4))
	case 0xdc: // array16
		return sized(2, elems, 0)
	case 0xdd: // array32
		return sized(4, elems, 0)
	case 0xde, 0xdf: // map16, map32
		size := 2
		if c == 0xdf {
			size = 4
		}
		n, err := length(size)
		if err != nil {
			return err
		}
		return elems(2 * n)
	}
	return fmt.Errorf("msgpack: invalid type code 0x%02x", c)
}
