package tokenizer

import "unicode/utf8"

// byteToRune is GPT-2's bytes_to_unicode table: every byte is mapped to a
// printable rune, so vocab.json and merges.txt can hold any byte sequence as
// text. Printable Latin-1 bytes map to themselves; the other 68 bytes (controls,
// space, U+007F..U+00A0, U+00AD) map to U+0100, U+0101, ... in byte order.
var byteToRune [256]rune

// runeByte inverts byteToRune: the byte of each rune up to the largest
// byteToRune holds (U+0143), -1 for the runes no byte maps to.
var runeByte [256 + 68]int16

func init() {
	for r := range runeByte {
		runeByte[r] = -1
	}
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = rune(256 + n)
			n++
		}
		runeByte[byteToRune[b]] = int16(b)
	}
}

// runeToByte is the byte that byteToRune maps to r; ok is false for a rune
// outside the byte-level alphabet.
func runeToByte(r rune) (b byte, ok bool) {
	if r < 0 || int(r) >= len(runeByte) || runeByte[r] < 0 {
		return 0, false
	}
	return byte(runeByte[r]), true
}

// bytesToText maps raw bytes to their byte-level text form, as stored in vocab.json.
func bytesToText(b string) string {
	out := make([]byte, 0, 2*len(b))
	for i := range len(b) {
		out = utf8.AppendRune(out, byteToRune[b[i]])
	}
	return string(out)
}

// textToBytes maps a byte-level token text back to raw bytes. Runes outside the
// byte-level alphabet (possible only in added tokens, which byte-level BPE never
// produces) are kept as their own UTF-8 bytes.
func textToBytes(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := runeToByte(r); ok {
			out = append(out, b)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return string(out)
}
