// Package spirv holds the SPIR-V opcode and enumerant tables (generated from
// the Khronos grammar by gen.go) and a word-level module writer. It is the
// WGSL compiler's lowest layer and imports nothing of this module.
package spirv

//go:generate go run gen.go -o tables.go

import "fmt"

// Op is a SPIR-V opcode.
type Op uint16

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", uint16(o))
}

// Magic is the SPIR-V magic number.
const Magic = 0x07230203

// Version13 is the version word for SPIR-V 1.3.
const Version13 = 0x00010300

// Section is a growable run of instruction words.
type Section []uint32

// Add appends one instruction: opcode, then operands.
func (s *Section) Add(op Op, operands ...uint32) {
	*s = append(*s, uint32(len(operands)+1)<<16|uint32(op))
	*s = append(*s, operands...)
}

// String encodes a literal string operand: UTF-8, nul-terminated, padded to words.
func String(str string) []uint32 {
	b := append([]byte(str), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
	}
	return w
}
