package x86emu

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"runtime"
	"unsafe"
)

// Func is the machine code of one function in this process.
type Func struct {
	Name string
	Addr uint64 // entry address
	Size uint64 // bytes of code

	static bool   // in the executable's text: decoded instructions may be cached
	code   []byte // Code's bytes: pinned (so on the heap, and still) while they run
}

// Code returns a Func for the machine code in b, for tests of hand-made
// instruction sequences (b must not change while it runs).
func Code(name string, b []byte) Func {
	if len(b) == 0 {
		return Func{Name: name}
	}
	return Func{Name: name, Addr: uint64(uintptr(unsafe.Pointer(&b[0]))), Size: uint64(len(b)), code: b}
}

// maxFuncSize bounds the code FuncOf attributes to one function.
const maxFuncSize = 1 << 20

// FuncOf returns the machine code of the Go function fn. An assembly (ABI0)
// function's func value points at the wrapper Go generates to call it with
// the register ABI; FuncOf follows that wrapper's CALL to the body.
func FuncOf(fn any) (Func, error) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return Func{}, fmt.Errorf("FuncOf: %T is not a non-nil func", fn)
	}
	f, err := funcAt(uint64(v.Pointer()))
	if err != nil {
		return Func{}, err
	}
	// Walk the wrapper (it saves the argument registers, then calls).
	pc := f.Addr
	for range 32 {
		if pc < f.Addr || pc >= f.Addr+f.Size {
			break
		}
		b := unsafe.Slice((*byte)(ptr(pc)), min(maxInstLen, f.Addr+f.Size-pc))
		in, err := Decode(b)
		if err != nil {
			break
		}
		pc += uint64(in.Len)
		if in.Op == 0xE8 && in.Map == 0 && in.Enc == Legacy {
			body, err := funcAt(pc + uint64(in.Imm))
			if err != nil {
				return Func{}, err
			}
			// The runtime names the body as the wrapper (the linker adds
			// ".abi0" only in the ELF symbol table).
			if body.Name != f.Name || body.Addr == f.Addr {
				return Func{}, fmt.Errorf("FuncOf: %s calls %s, not its ABI0 body", f.Name, body.Name)
			}
			return body, nil
		}
	}
	return f, nil
}

// funcAt is the function whose code holds pc, with its extent found from
// the runtime's symbol table.
func funcAt(pc uint64) (Func, error) {
	rf := runtime.FuncForPC(uintptr(pc))
	if rf == nil {
		return Func{}, fmt.Errorf("no function at %#x", pc)
	}
	entry := uint64(rf.Entry())
	size := uint64(0)
	for size < maxFuncSize {
		g := runtime.FuncForPC(uintptr(entry + size))
		if g == nil || uint64(g.Entry()) != entry {
			break
		}
		size++
	}
	return Func{Name: rf.Name(), Addr: entry, Size: size, static: true}, nil
}

// stackWords is the emulated stack's size: the kernels are leaf functions
// with no frame, so a little room above the arguments is plenty.
const stackWords = 64

// Call runs f with the Go ABI0 argument frame args (arguments then results,
// each at its aligned offset, as 0(FP) onwards sees them): the frame is
// copied to an emulated stack above a return address, f runs until it
// returns from that frame, and the frame, results included, is copied back
// into args. Registers other than RSP start as m holds them. If m.Memory is
// set, the stack is added to it for the call.
func (m *Machine) Call(f Func, args []byte) error {
	if f.Size == 0 {
		return fmt.Errorf("call %s: no code", f.Name)
	}
	if len(args) > (stackWords-9)*8 {
		return fmt.Errorf("call %s: %d-byte frame too large", f.Name, len(args))
	}
	// The stack must not move while the emulator uses its address: Pin makes
	// it a heap object (goroutine stacks move as they grow; heap objects do
	// not) and keeps it alive.
	stack := make([]uint64, stackWords)
	var pin runtime.Pinner
	pin.Pin(&stack[0])
	if f.code != nil {
		pin.Pin(&f.code[0])
	}
	defer pin.Unpin()
	base := uint64(uintptr(unsafe.Pointer(&stack[0])))
	// 0(SP): the return address (a value no code lives at); args from 8(SP).
	sp := base + 8*8
	stack[8] = 0
	frame := unsafe.Slice((*byte)(unsafe.Pointer(&stack[9])), len(args))
	copy(frame, args)
	saved := m.Memory
	if m.Memory != nil {
		m.Memory = append(append([]Region(nil), saved...), Region{Addr: base, Size: 8 * stackWords, Write: true})
	}
	defer func() { m.Memory = saved }()
	m.GPR[rSP] = sp
	m.RIP = f.Addr
	m.code = Region{Addr: f.Addr, Size: f.Size}
	m.cache = f.static
	m.stopRSP = sp + 8
	err := m.run()
	copy(args, frame)
	if err != nil {
		return fmt.Errorf("emulate %s: %w", f.Name, err)
	}
	return nil
}

// Frame builds an ABI0 argument frame: Put* append a value at its aligned
// offset; Bytes is the frame for Call, Float32At and Uint64At read results.
type Frame struct {
	b    []byte
	keep []unsafe.Pointer // PutPointer's pointers: they escape to the heap, and live
}

func (fr *Frame) align(n int) {
	for len(fr.b)%n != 0 {
		fr.b = append(fr.b, 0)
	}
}

// PutUint64 appends an 8-byte word (a pointer, an int).
func (fr *Frame) PutUint64(v uint64) {
	fr.align(8)
	fr.b = binary.LittleEndian.AppendUint64(fr.b, v)
}

// PutPointer appends a pointer. The Frame holds it, so whatever p points to
// is allocated on the heap (which Go's collector does not move; a goroutine
// stack may move while the emulator runs) and stays alive with the Frame.
func (fr *Frame) PutPointer(p unsafe.Pointer) {
	fr.keep = append(fr.keep, p)
	fr.PutUint64(uint64(uintptr(p)))
}

// PutFloat32 appends a float32's bits.
func (fr *Frame) PutFloat32(bits uint32) {
	fr.align(4)
	fr.b = binary.LittleEndian.AppendUint32(fr.b, bits)
}

// Result reserves n bytes for results, after aligning to 8 as ABI0 does, and
// returns their offset.
func (fr *Frame) Result(n int) int {
	fr.align(8)
	off := len(fr.b)
	fr.b = append(fr.b, make([]byte, n)...)
	return off
}

// Bytes is the frame.
func (fr *Frame) Bytes() []byte { return fr.b }

// Uint32At reads 4 bytes at off.
func (fr *Frame) Uint32At(off int) uint32 { return binary.LittleEndian.Uint32(fr.b[off:]) }
