package wgpu

// workgroupBytes is the workgroup memory SPIR-V code declares, at least: every Workgroup-class variable of the
// module, each of its natural size (scalars of their width, vectors of their components, 3 of them aligned as 4,
// arrays of their length, structs of their members aligned). Drivers lay the variables out as they like, never in
// fewer bytes. Arrays whose length is not a plain constant (a specialization constant of a SPIR-V module) count as
// empty, so the figure stays a lower bound; ok is false for code it cannot read.
func workgroupBytes(code []uint32) (n uint64, ok bool) {
	const (
		opTypeBool    = 20
		opTypeInt     = 21
		opTypeFloat   = 22
		opTypeVector  = 23
		opTypeMatrix  = 24
		opTypeArray   = 28
		opTypeStruct  = 30
		opTypePointer = 32
		opConstant    = 43
		opVariable    = 59
		opFunction    = 54
		scWorkgroup   = 4
	)
	type layout struct{ size, align uint64 }
	types := map[uint32]layout{}
	consts := map[uint32]uint64{}
	pointee := map[uint32]uint32{} // Workgroup pointer type -> pointee
	if len(code) < 5 {
		return 0, false
	}
	for i := 5; i < len(code); {
		op, wc := code[i]&0xffff, int(code[i]>>16)
		if wc == 0 || i+wc > len(code) {
			return 0, false
		}
		w := code[i+1 : i+wc]
		switch {
		case op == opFunction: // types, constants and global variables all come before the functions
			return n, true
		case op == opTypeBool && len(w) >= 1:
			types[w[0]] = layout{4, 4}
		case (op == opTypeInt || op == opTypeFloat) && len(w) >= 2:
			b := uint64(w[1] / 8)
			types[w[0]] = layout{b, b}
		case (op == opTypeVector || op == opTypeMatrix) && len(w) >= 3:
			c := types[w[1]]
			k := uint64(w[2])
			al := c.align * k
			if k == 3 {
				al = c.align * 4
			}
			if op == opTypeMatrix { // columns of vectors
				al = c.align
			}
			types[w[0]] = layout{c.size * k, max(al, 1)}
		case op == opTypeArray && len(w) >= 3:
			e := types[w[1]]
			stride := roundUp(e.size, max(e.align, 1))
			types[w[0]] = layout{stride * consts[w[2]], max(e.align, 1)}
		case op == opTypeStruct && len(w) >= 1:
			var s, al uint64 = 0, 1
			for _, m := range w[1:] {
				t := types[m]
				s = roundUp(s, max(t.align, 1)) + t.size
				al = max(al, t.align)
			}
			types[w[0]] = layout{roundUp(s, al), al}
		case op == opConstant && len(w) >= 3:
			consts[w[1]] = uint64(w[2])
		case op == opTypePointer && len(w) >= 3 && w[1] == scWorkgroup:
			pointee[w[0]] = w[2]
		case op == opVariable && len(w) >= 3 && w[2] == scWorkgroup:
			t := types[pointee[w[0]]]
			n = roundUp(n, max(t.align, 1)) + t.size
		}
		i += wc
	}
	return n, true
}

func roundUp(n, a uint64) uint64 { return (n + a - 1) / a * a }
