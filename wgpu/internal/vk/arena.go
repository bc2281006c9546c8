package vk

import (
	"runtime"
	"unsafe"
)

// Arena is C-layout memory for the structs a Vulkan command reads: allocations are 8-byte aligned, zeroed, and
// pinned until Release, so structs in it may point to each other and be passed to C. It is not safe for
// concurrent use. The zero Arena is ready to use; after Release it may be reused.
type Arena struct {
	chunks [][]uint64 // all chunks, pinned
	used   int        // chunks[:used] are full or in use
	off    int        // next free word in chunks[used-1]
	pin    runtime.Pinner
	pinned bool
}

const arenaChunkWords = 512 // 4 KiB

// alloc returns size zeroed bytes, 8-byte aligned, valid until Release.
func (a *Arena) alloc(size uintptr) unsafe.Pointer {
	words := int((size + 7) / 8)
	if words == 0 {
		words = 1
	}
	if a.used == 0 || a.off+words > len(a.chunks[a.used-1]) {
		a.nextChunk(words)
	}
	c := a.chunks[a.used-1]
	p := unsafe.Pointer(&c[a.off])
	clear(c[a.off : a.off+words])
	a.off += words
	return p
}

func (a *Arena) nextChunk(words int) {
	for a.used < len(a.chunks) {
		a.used++
		a.off = 0
		if len(a.chunks[a.used-1]) >= words {
			a.pinChunk(a.chunks[a.used-1])
			return
		}
	}
	c := make([]uint64, max(words, arenaChunkWords))
	a.chunks = append(a.chunks, c)
	a.used = len(a.chunks)
	a.off = 0
	a.pinChunk(c)
}

func (a *Arena) pinChunk(c []uint64) {
	a.pin.Pin(&c[0])
	a.pinned = true
}

// Release unpins the arena's memory; pointers into it must no longer be passed to Vulkan. The chunks are kept
// for reuse.
func (a *Arena) Release() {
	if a.pinned {
		a.pin.Unpin()
		a.pinned = false
	}
	a.used, a.off = 0, 0
}

// sTyped is implemented by generated structs that have a fixed sType.
type sTyped interface{ structureType() StructureType }

// New allocates a zeroed T in the arena. If T is a Vulkan struct with a fixed sType, sType is set.
func New[T any](a *Arena) *T {
	var zero T
	p := (*T)(a.alloc(unsafe.Sizeof(zero)))
	if s, ok := any(p).(sTyped); ok {
		*(*StructureType)(unsafe.Pointer(p)) = s.structureType()
	}
	return p
}

// NewSlice allocates n zeroed Ts in the arena (nil for n == 0). Fixed sTypes are set as by New.
func NewSlice[T any](a *Arena, n int) []T {
	if n == 0 {
		return nil
	}
	var zero T
	s := unsafe.Slice((*T)(a.alloc(unsafe.Sizeof(zero)*uintptr(n))), n)
	if st, ok := any(&s[0]).(sTyped); ok {
		for i := range s {
			*(*StructureType)(unsafe.Pointer(&s[i])) = st.structureType()
		}
	}
	return s
}

// Copy copies a slice into the arena and returns a pointer to its first element (nil for an empty slice).
func Copy[T any](a *Arena, src []T) *T {
	if len(src) == 0 {
		return nil
	}
	s := NewSlice[T](a, len(src))
	copy(s, src)
	return &s[0]
}

// CString copies s into the arena as a NUL-terminated C string.
func (a *Arena) CString(s string) *byte {
	b := unsafe.Slice((*byte)(a.alloc(uintptr(len(s)+1))), len(s)+1)
	copy(b, s)
	return &b[0]
}

// CStrings copies ss into the arena as an array of C strings (nil when empty).
func (a *Arena) CStrings(ss []string) **byte {
	if len(ss) == 0 {
		return nil
	}
	ps := NewSlice[*byte](a, len(ss))
	for i, s := range ss {
		ps[i] = a.CString(s)
	}
	return &ps[0]
}

// Bytes copies b into the arena.
func (a *Arena) Bytes(b []byte) unsafe.Pointer {
	p := a.alloc(uintptr(len(b)))
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return p
}
