// Package wgpu is a WebGPU-shaped compute API over Vulkan: Instance, Adapter, Device, Queue, Buffer,
// ShaderModule, ComputePipeline, BindGroupLayout, BindGroup, CommandEncoder, ComputePass and QuerySet
// (timestamps). Vulkan is loaded at run time (package wgpu/internal/vk, purego, no cgo); where no loader or
// driver exists, CreateInstance or EnumerateAdapters returns an error for which Unavailable is true, so callers can
// fall back to the CPU.
//
// Semantics follow WebGPU where they fit compute: dispatches in a pass see the writes of earlier dependent
// dispatches (the encoder inserts the barriers), Queue.WriteBuffer is ordered before later submissions, errors in
// encoding surface at CommandEncoder.Finish. Differences: shaders are SPIR-V or WGSL (compiled by
// wgpu/wgsl), push constants exist (as wgpu's var<push_constant>), mapping is synchronous (Buffer.Map waits
// for the GPU), and timestamps resolved into buffers are raw ticks (QuerySet.Read gives ns).
//
// Memory: buffers are sub-allocated from a few large VkDeviceMemory blocks; Device.MemoryStats reports bytes in
// use and the peak. Errors are Go errors that wrap the failing Vulkan call; errors.Is works with ErrOutOfMemory,
// ErrDeviceLost, ErrMissingFeature, ErrLimit, ErrBadUsage and ErrClosed. Every object has Close; Device.Close
// also releases whatever its children did not, and Instance.Close closes its open devices. A closed object passed to
// any call is ErrClosed; while a recording, pipeline, layout or bind group still refers to it, its Vulkan object is
// kept until that reference goes (WebGPU's destroy semantics), so no call hands a destroyed handle to the driver.
//
// Allowed imports: the standard library, wgpu/wgsl, wgpu/internal/vk and github.com/x448/float16
// (f16 override constants); internal/archtest enforces it.
package wgpu
