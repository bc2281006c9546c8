package wgsl

import "math"

// Size limits. The WGSL specification lets an implementation refuse shaders
// beyond limits of its own (its "Limits" section); these are Tint's, so a
// module valid for Dawn is valid here and the other way round, and every
// size the compiler computes fits in 32 bits, as SPIR-V's offsets and
// strides must.

// maxByteSize bounds the byte size of every array and struct type and the
// offset of every struct member.
const maxByteSize = math.MaxUint32

// maxValueArrayCount bounds the element count of every array that is not in
// the storage address space: in a value (const, let, parameter, result,
// phony assignment) or in a variable of another address space. Only storage
// buffers hold larger arrays; a larger array that is a value in a
// const-expression and never declared (array<i32, 300000000>()[0]) is fine.
const maxValueArrayCount = 65535

// maxWorkgroupInvocations bounds the product of the constant
// @workgroup_size dimensions: the invocation count of a workgroup is a u32
// in every API. The device's own limits (WebGPU's maxComputeWorkgroupSizeX,
// maxComputeInvocationsPerWorkgroup and their Vulkan counterparts) are not
// known here: package wgpu checks them when it makes a pipeline, as WebGPU
// does.
const maxWorkgroupInvocations = math.MaxUint32

// oversizedArray returns the element count of the first array in a value of
// type t with more than maxValueArrayCount elements, or 0. It looks through
// array elements, struct members and pointers outside the storage address
// space.
func oversizedArray(t *wgslType) int {
	switch t.Kind {
	case kArray:
		if t.N > maxValueArrayCount {
			return t.N
		}
		return oversizedArray(t.Elem)
	case kStruct:
		for _, m := range t.Struct.Members {
			if n := oversizedArray(m.Type); n != 0 {
				return n
			}
		}
	case kPtr:
		if t.Space != spaceStorage {
			return oversizedArray(t.Elem)
		}
	}
	return 0
}

// valueArrays reports, at pos, an array of type t (the type of what is
// declared) with more elements than maxValueArrayCount. what names the
// declaration, for the message.
func (c *checker) valueArrays(t *wgslType, pos int, what string) bool {
	if t == nil {
		return true
	}
	if n := oversizedArray(t); n != 0 {
		c.errorf(pos, "%s holds an array of %d elements: outside the storage address space, arrays must have fewer than %d", what, n, maxValueArrayCount+1)
		return false
	}
	return true
}
