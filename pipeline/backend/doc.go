// Package backend opens what scores a pipeline batch: the CPU (model's
// forward) or a GPU (package shaders' kernels through package wgpu on
// Vulkan), and lists the devices. Open takes a --device spec ("auto",
// "cpu", "gpu", "gpu:N", "all") and a precision and gives a
// pipeline.Backend; Devices lists the Vulkan adapters in the order gpu:N
// counts them. Every backend describes itself (pipeline.BackendInfo), so
// callers never switch on its type.
//
// It is the one package of the pipeline that links the kernels, the WGSL
// compiler and the Vulkan loader; packages pipeline and pipeline/runfile do
// not.
package backend
