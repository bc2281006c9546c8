package wgpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// DeviceDescriptor configures RequestDevice. The zero value asks for no optional features.
type DeviceDescriptor struct {
	Label string
	// RequiredFeatures must all be supported, or RequestDevice fails with ErrMissingFeature.
	RequiredFeatures []FeatureName
	// RequiredLimits: each nonzero field must be within the adapter's limit (LimitsCap's, where it is lower), or
	// RequestDevice fails with ErrLimit.
	RequiredLimits Limits
	// LimitsCap makes the device smaller than the adapter: each nonzero field lowers the device's limit to it (an
	// alignment, MinStorageBufferOffsetAlignment or MinUniformBufferOffsetAlignment, a power of two, raises it),
	// a value past the adapter's changes nothing. Device.Limits reports the result and every check of this package
	// holds to it, so code that sizes its work by the limits runs as on a device that has only these: for tests of
	// small devices on a large one, or to leave a shared GPU's room to others. The subgroup sizes and the
	// timestamp period are the hardware's: capping them is an ErrLimit.
	LimitsCap Limits
	// PipelineCacheDir is where the pipeline cache is persisted, one file per device UUID and driver version.
	// Empty means os.UserCacheDir()/wgpu-eval/pipelines; "-" disables persistence.
	PipelineCacheDir string
	// MemoryBlockSize is the size of the VkDeviceMemory blocks buffers are sub-allocated from (default 64 MiB).
	MemoryBlockSize uint64
	// RaceCheck compiles every WGSL module with wgsl.Options.RaceCheck, which finds data races on workgroup memory
	// between a workgroup's invocations, and on read_write storage buffers between the invocations of a dispatch
	// (code that a CPU's Vulkan driver runs correctly and a GPU does not), and Device.Races reports them. For tests:
	// slower (on lavapipe a kernel test with a cold shader cache takes about 1.7x as long), dispatches run one at a
	// time, the check takes @group(3), and a dispatch needs 12 bytes of shadow per scalar of workgroup memory and
	// workgroup, and 24 per scalar (4 bytes, or 2 of a binding holding f16) bound to a read_write storage binding,
	// out of at most 128 MiB. SPIR-V modules are not checked.
	RaceCheck bool
	// StageTransfers keeps the buffers made for the GPU (those without MapRead or MapWrite usage) out of
	// host-mapped memory even where all of the device's memory is host-visible (CPU drivers, integrated GPUs), so
	// that WriteBuffer, ReadBuffer and the zeroing of new buffers copy through staging buffers, ordered by
	// barriers, as they do on a discrete GPU, whose memory the host cannot map. For tests of those paths on a
	// unified-memory device; slower otherwise, and no change on a discrete GPU.
	StageTransfers bool
}

// Device is a logical device: it creates every other object and owns their memory.
type Device struct {
	adapter  *Adapter
	h        vk.Device
	fn       *vk.DeviceFuncs
	features map[FeatureName]bool
	limits   Limits
	queue    *Queue
	// fullGroups: computeFullSubgroups is enabled (with FeatureCooperativeMatrix, where the adapter has it), so
	// pipelines using cooperative matrices run with whole subgroups only.
	fullGroups bool

	mu   sync.Mutex // guards the fields below and all Vulkan objects shared between children
	mem  allocator
	live map[child]struct{}
	// pins counts, per object, what needs its Vulkan handle to stay valid: encoders and command buffers recorded
	// with it (until released), pipelines on a pipeline layout, bind groups and pipeline layouts on a bind group
	// layout, pipeline creations in progress. An object closed while pinned moves from live to dropped, and is
	// destroyed once its last pin goes (and the submissions so far have finished).
	pins      map[child]int
	dropped   map[child]struct{}
	creating  int  // CreateComputePipeline calls compiling with mu released; Close waits for them
	listed    bool // in the instance's devices (Instance.Close closes it)
	descPools []vk.DescriptorPool
	cmdSlots  []*cmdSlot // every command pool created
	cmdFree   []*cmdSlot // those not in use
	cache     vk.PipelineCache
	cachePath string
	cacheNote string      // PipelineCacheWarning
	saveNote  string      // PipelineCacheSaveWarning
	race      *deviceRace // DeviceDescriptor.RaceCheck
	lost      error
	closed    bool
	stats     []PipelineStatistics // FeaturePipelineStatistics: every compute pipeline's, in creation order
	gone      atomic.Bool          // closed, readable without d.mu (encoders check it before touching Vulkan)
}

// child is an object the device destroys on Close if its owner did not.
type child interface {
	destroy()
	describe() string // what it is, for errors: `buffer "x"`
}

// RequestDevice creates a device with one compute queue and the required features enabled.
func (a *Adapter) RequestDevice(desc *DeviceDescriptor) (*Device, error) {
	if desc == nil {
		desc = &DeviceDescriptor{}
	}
	inst := a.inst
	inst.mu.Lock() // Instance.Close waits, and then closes the device
	defer inst.mu.Unlock()
	if inst.closed {
		return nil, ErrClosed
	}
	feats := map[FeatureName]bool{}
	for _, f := range desc.RequiredFeatures {
		if !a.HasFeature(f) {
			if why := a.missingReason(f); why != "" {
				return nil, errorf(ErrMissingFeature, "%s not supported by %s: %s", f, a.info.Name, why)
			}
			return nil, errorf(ErrMissingFeature, "%s not supported by %s", f, a.info.Name)
		}
		feats[f] = true
	}
	limits, err := capLimits(a.info.Limits, desc.LimitsCap)
	if err != nil {
		return nil, err
	}
	if err := checkLimits(desc.RequiredLimits, limits); err != nil {
		return nil, err
	}
	var ar vk.Arena
	defer ar.Release()
	f2, exts := a.featureChain(&ar, feats)
	prio := vk.New[float32](&ar)
	*prio = 1
	qci := vk.New[vk.DeviceQueueCreateInfo](&ar)
	qci.QueueFamilyIndex, qci.QueueCount, qci.PQueuePriorities = a.family, 1, prio
	ci := vk.New[vk.DeviceCreateInfo](&ar)
	ci.PNext = unsafe.Pointer(f2)
	ci.QueueCreateInfoCount, ci.PQueueCreateInfos = 1, qci
	ci.EnabledExtensionCount, ci.PpEnabledExtensionNames = uint32(len(exts)), ar.CStrings(exts)

	d := &Device{adapter: a, features: feats, limits: limits, live: map[child]struct{}{},
		pins: map[child]int{}, dropped: map[child]struct{}{}, fullGroups: feats[FeatureCooperativeMatrix] && a.fullGroups}
	if err := check("vkCreateDevice", a.inst.fn.CreateDevice(a.pd, ci, nil, &d.h)); err != nil {
		return nil, fmt.Errorf("create device on %s: %w", a.info.Name, err)
	}
	if d.fn, err = a.inst.fn.LoadDevice(d.h); err != nil {
		if d.fn.HasDestroyDevice() {
			d.fn.DestroyDevice(d.h, nil)
		}
		return nil, err
	}
	d.queue = &Queue{d: d, idle: sync.NewCond(&d.mu)}
	d.fn.GetDeviceQueue(d.h, a.family, 0, &d.queue.h)
	blockSize := desc.MemoryBlockSize
	if blockSize == 0 {
		blockSize = 64 << 20
	}
	if m := limits.MaxBufferSize; m != 0 {
		blockSize = min(blockSize, m)
	}
	d.mem = allocator{d: d, blockSize: blockSize, staged: desc.StageTransfers}
	if err := d.openPipelineCache(desc.PipelineCacheDir); err != nil {
		d.Close()
		return nil, err
	}
	if desc.RaceCheck {
		if err := d.startRaceCheck(); err != nil {
			d.Close()
			return nil, err
		}
	}
	if inst.devices == nil {
		inst.devices = map[*Device]struct{}{}
	}
	inst.devices[d] = struct{}{}
	d.listed = true
	return d, nil
}

// featureChain builds the VkPhysicalDeviceFeatures2 chain of vkCreateDevice in ar, and the extensions to enable, for
// the required features feats (already checked against the adapter) and the free ones the adapter offers.
func (a *Adapter) featureChain(ar *vk.Arena, feats map[FeatureName]bool) (f2 *vk.PhysicalDeviceFeatures2, exts []string) {
	f2 = vk.New[vk.PhysicalDeviceFeatures2](ar)
	chain := func(p unsafe.Pointer, next *unsafe.Pointer) { *next, f2.PNext = f2.PNext, p }
	if feats[FeatureShaderF16] || feats[FeatureStorage16Bit] {
		s16 := vk.New[vk.PhysicalDevice16BitStorageFeatures](ar)
		s16.StorageBuffer16BitAccess = vk.True
		if a.uniform16 { // f16 in uniform buffers, which WGSL allows with `enable f16;`
			s16.UniformAndStorageBuffer16BitAccess = vk.True
		}
		chain(unsafe.Pointer(s16), &s16.PNext)
	}
	// Modules with i8 or u8 subgroup matrices declare 8-bit integers (Int8):
	// with the matrix units, shaderInt8 is enabled wherever the adapter has it.
	int8 := feats[FeatureCooperativeMatrix] && a.int8
	if feats[FeatureShaderF16] || int8 {
		f16 := vk.New[vk.PhysicalDeviceShaderFloat16Int8Features](ar)
		if feats[FeatureShaderF16] {
			f16.ShaderFloat16 = vk.True
		}
		if int8 {
			f16.ShaderInt8 = vk.True
		}
		chain(unsafe.Pointer(f16), &f16.PNext)
		exts = a.needExt(exts, 1, 2, "VK_KHR_shader_float16_int8")
	}
	if feats[FeatureShaderF16] {
		feats[FeatureStorage16Bit] = true // implied
		if feats[FeatureSubgroups] && a.extTypes {
			et := vk.New[vk.PhysicalDeviceShaderSubgroupExtendedTypesFeatures](ar)
			et.ShaderSubgroupExtendedTypes = vk.True
			chain(unsafe.Pointer(et), &et.PNext)
			exts = a.needExt(exts, 1, 2, "VK_KHR_shader_subgroup_extended_types")
		}
	}
	fullGroups := feats[FeatureCooperativeMatrix] && a.fullGroups // whole subgroups for cooperative matrices
	if feats[FeatureSubgroupSizeControl] || fullGroups {
		sc := vk.New[vk.PhysicalDeviceSubgroupSizeControlFeatures](ar)
		if feats[FeatureSubgroupSizeControl] {
			sc.SubgroupSizeControl = vk.True
		}
		if fullGroups {
			sc.ComputeFullSubgroups = vk.True
		}
		chain(unsafe.Pointer(sc), &sc.PNext)
		exts = a.needExt(exts, 1, 3, "VK_EXT_subgroup_size_control")
	}
	if feats[FeatureCooperativeMatrix] {
		// SPV_KHR_cooperative_matrix requires the Vulkan memory model in shaders: vulkanMemoryModel is enabled below
		// (the feature is absent without it). f16 operands need FeatureShaderF16, which the caller requires.
		cm := vk.New[vk.PhysicalDeviceCooperativeMatrixFeaturesKHR](ar)
		cm.CooperativeMatrix = vk.True
		chain(unsafe.Pointer(cm), &cm.PNext)
		exts = append(exts, extCooperativeMatrix)
	}
	if a.memModel { // compilers may emit the Vulkan memory model; it costs nothing to allow
		mm := vk.New[vk.PhysicalDeviceVulkanMemoryModelFeatures](ar)
		mm.VulkanMemoryModel = vk.True
		if a.memScope { // the Device scope WGSL compilers use for storage atomics and barriers
			mm.VulkanMemoryModelDeviceScope = vk.True
		}
		chain(unsafe.Pointer(mm), &mm.PNext)
		exts = a.needExt(exts, 1, 2, "VK_KHR_vulkan_memory_model")
	}
	if a.stdUniform { // WGSL uniform buffers with the storage layout (arrays of f32, vec2 members); free to allow
		ul := vk.New[vk.PhysicalDeviceUniformBufferStandardLayoutFeatures](ar)
		ul.UniformBufferStandardLayout = vk.True
		chain(unsafe.Pointer(ul), &ul.PNext)
		exts = a.needExt(exts, 1, 2, "VK_KHR_uniform_buffer_standard_layout")
	}
	if feats[FeaturePipelineStatistics] {
		pe := vk.New[vk.PhysicalDevicePipelineExecutablePropertiesFeaturesKHR](ar)
		pe.PipelineExecutableInfo = vk.True
		chain(unsafe.Pointer(pe), &pe.PNext)
		exts = append(exts, extPipelineStatistics)
	}
	if a.exts["VK_EXT_memory_budget"] { // Device.MemoryBudget reports the driver's budget
		exts = append(exts, "VK_EXT_memory_budget")
	}
	if a.exts["VK_KHR_portability_subset"] {
		exts = append(exts, "VK_KHR_portability_subset")
	}
	return f2, exts
}

// needExt adds ext to exts when the adapter's Vulkan version lacks the feature as core.
func (a *Adapter) needExt(exts []string, major, minor uint32, ext string) []string {
	if a.apiVersion >= vk.MakeAPIVersion(major, minor, 0) {
		return exts
	}
	return append(exts, ext)
}

func checkLimits(want, have Limits) error {
	type lim struct {
		name       string
		want, have uint64
		minimum    bool // an alignment: the wanted value must be >= the adapter's
	}
	for _, l := range []lim{
		{"maxStorageBufferBindingSize", want.MaxStorageBufferBindingSize, have.MaxStorageBufferBindingSize, false},
		{"maxBufferSize", want.MaxBufferSize, have.MaxBufferSize, false},
		{"maxComputeWorkgroupStorageSize", uint64(want.MaxComputeWorkgroupStorageSize), uint64(have.MaxComputeWorkgroupStorageSize), false},
		{"maxComputeInvocationsPerWorkgroup", uint64(want.MaxComputeInvocationsPerWorkgroup), uint64(have.MaxComputeInvocationsPerWorkgroup), false},
		{"maxComputeWorkgroupSizeX", uint64(want.MaxComputeWorkgroupSizeX), uint64(have.MaxComputeWorkgroupSizeX), false},
		{"maxComputeWorkgroupSizeY", uint64(want.MaxComputeWorkgroupSizeY), uint64(have.MaxComputeWorkgroupSizeY), false},
		{"maxComputeWorkgroupSizeZ", uint64(want.MaxComputeWorkgroupSizeZ), uint64(have.MaxComputeWorkgroupSizeZ), false},
		{"maxComputeWorkgroupsPerDimension", uint64(want.MaxComputeWorkgroupsPerDimension), uint64(have.MaxComputeWorkgroupsPerDimension), false},
		{"maxStorageBuffersPerShaderStage", uint64(want.MaxStorageBuffersPerShaderStage), uint64(have.MaxStorageBuffersPerShaderStage), false},
		{"maxBindGroups", uint64(want.MaxBindGroups), uint64(have.MaxBindGroups), false},
		{"maxPushConstantSize", uint64(want.MaxPushConstantSize), uint64(have.MaxPushConstantSize), false},
		{"minStorageBufferOffsetAlignment", uint64(want.MinStorageBufferOffsetAlignment), uint64(have.MinStorageBufferOffsetAlignment), true},
		{"minUniformBufferOffsetAlignment", uint64(want.MinUniformBufferOffsetAlignment), uint64(have.MinUniformBufferOffsetAlignment), true},
	} {
		if l.want == 0 {
			continue
		}
		if (!l.minimum && l.want > l.have) || (l.minimum && l.want < l.have) {
			return errorf(ErrLimit, "required %s %d, adapter offers %d", l.name, l.want, l.have)
		}
	}
	return nil
}

// capLimits is have lowered by cap's nonzero fields (DeviceDescriptor.LimitsCap).
func capLimits(have, cap Limits) (Limits, error) {
	if cap.SubgroupSize != 0 || cap.MinSubgroupSize != 0 || cap.MaxSubgroupSize != 0 || cap.TimestampPeriod != 0 {
		return have, errorf(ErrLimit, "LimitsCap: the subgroup sizes and the timestamp period are the hardware's, not limits to lower")
	}
	lowerTo(&have.MaxStorageBufferBindingSize, cap.MaxStorageBufferBindingSize)
	lowerTo(&have.MaxBufferSize, cap.MaxBufferSize)
	lowerTo(&have.MaxComputeWorkgroupStorageSize, cap.MaxComputeWorkgroupStorageSize)
	lowerTo(&have.MaxComputeInvocationsPerWorkgroup, cap.MaxComputeInvocationsPerWorkgroup)
	lowerTo(&have.MaxComputeWorkgroupSizeX, cap.MaxComputeWorkgroupSizeX)
	lowerTo(&have.MaxComputeWorkgroupSizeY, cap.MaxComputeWorkgroupSizeY)
	lowerTo(&have.MaxComputeWorkgroupSizeZ, cap.MaxComputeWorkgroupSizeZ)
	lowerTo(&have.MaxComputeWorkgroupsPerDimension, cap.MaxComputeWorkgroupsPerDimension)
	lowerTo(&have.MaxStorageBuffersPerShaderStage, cap.MaxStorageBuffersPerShaderStage)
	lowerTo(&have.MaxBindGroups, cap.MaxBindGroups)
	lowerTo(&have.MaxPushConstantSize, cap.MaxPushConstantSize)
	for _, a := range []struct {
		name string
		v, c *uint32
	}{
		{"MinStorageBufferOffsetAlignment", &have.MinStorageBufferOffsetAlignment, &cap.MinStorageBufferOffsetAlignment},
		{"MinUniformBufferOffsetAlignment", &have.MinUniformBufferOffsetAlignment, &cap.MinUniformBufferOffsetAlignment},
	} {
		if *a.c&(*a.c-1) != 0 {
			return have, errorf(ErrLimit, "LimitsCap: %s %d is not a power of two", a.name, *a.c)
		}
		*a.v = max(*a.v, *a.c)
	}
	return have, nil
}

// lowerTo lowers *v to c, where c is not 0.
func lowerTo[T uint32 | uint64](v *T, c T) {
	if c != 0 {
		*v = min(*v, c)
	}
}

// Queue returns the device's queue.
func (d *Device) Queue() *Queue { return d.queue }

// Limits returns the device's limits: the adapter's, lowered by DeviceDescriptor.LimitsCap.
func (d *Device) Limits() Limits { return d.limits }

// AdapterInfo describes the adapter the device runs on.
func (d *Device) AdapterInfo() AdapterInfo { return d.adapter.info }

// HasFeature reports whether a feature was enabled at RequestDevice.
func (d *Device) HasFeature(f FeatureName) bool { return d.features[f] }

// Features lists the enabled features, sorted.
func (d *Device) Features() []FeatureName {
	var out []FeatureName
	for f := range d.features {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// usable returns the error that makes the device unusable, if any. d.mu must be held.
func (d *Device) usable() error {
	if d.closed {
		return ErrClosed
	}
	return d.lost
}

// noteLost records a device-lost error so later calls fail fast. d.mu must be held.
func (d *Device) noteLost(err error) error {
	if errors.Is(err, ErrDeviceLost) && d.lost == nil {
		d.lost = err
	}
	return err
}

// track registers a child for cleanup at Device.Close.
func (d *Device) track(c child) {
	d.mu.Lock()
	d.live[c] = struct{}{}
	d.mu.Unlock()
}

// release destroys a child unless the device already did: now if the GPU is idle, else once the submissions so
// far have finished (WebGPU semantics: destroying an object in use by submitted work is allowed). A pinned child
// is destroyed when its last pin goes; from now on it counts as closed.
func (d *Device) release(c child) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.live[c]; !ok {
		return nil
	}
	delete(d.live, c)
	if d.pins[c] == 0 {
		return d.queue.deferDestroy(c)
	}
	d.dropped[c] = struct{}{}
	if b, ok := c.(*Buffer); ok && d.queue.pending != nil && d.queue.pending.uses(b) {
		_, err := d.queue.submitLocked(nil) // the pending uploads hold it: let them go now, and it with them
		return err
	}
	return nil
}

// pin keeps c's Vulkan handle valid until the matching unpin, even if c is closed meanwhile; it fails with
// ErrClosed, naming c, if c was closed already (or the device). d.mu must be held.
func (d *Device) pin(c child) error {
	if _, ok := d.live[c]; !ok {
		return fmt.Errorf("%w: %s", ErrClosed, c.describe())
	}
	d.pins[c]++
	return nil
}

// unpin drops a pin of c; the last pin of a closed child destroys it once the submissions so far have finished.
// d.mu must be held. After Device.Close it does nothing: Close destroyed everything.
func (d *Device) unpin(c child) {
	if d.closed {
		return
	}
	if d.pins[c]--; d.pins[c] > 0 {
		return
	}
	delete(d.pins, c)
	if _, ok := d.dropped[c]; ok {
		delete(d.dropped, c)
		// Nothing pending can use c (the pending uploads would pin it), so deferDestroy submits nothing and
		// cannot fail.
		_ = d.queue.deferDestroy(c)
	}
}

// Close waits for the GPU, destroys every object still alive, saves the pipeline cache and destroys the device.
// It is safe after errors, including a lost device, and while other goroutines wait for the GPU or create
// pipelines: it waits for their fences and compiles, and their calls then fail with ErrClosed. A pipeline cache
// that cannot be saved (a read-only or missing directory) is not an error of Close: PipelineCacheSaveWarning says
// why afterwards.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	var errs []error
	if d.queue != nil {
		if err := d.queue.WaitIdle(); err != nil && !errors.Is(err, ErrDeviceLost) && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if inst := d.adapter.inst; d.listed { // (not while RequestDevice, holding inst.mu, gives up on d)
		inst.mu.Lock()
		delete(inst.devices, d)
		inst.mu.Unlock()
	}
	d.gone.Store(true)
	if d.fn == nil {
		return nil
	}
	// Waiters return ErrClosed once their fence signals; pipeline creations, once their compile is done.
	for d.queue != nil && (d.queue.waiters > 0 || d.creating > 0) {
		d.queue.idle.Wait()
	}
	d.fn.DeviceWaitIdle(d.h)
	if d.queue != nil {
		d.queue.destroy()
	}
	for c := range d.dropped { // closed, but still pinned by something Close destroys now
		d.live[c] = struct{}{}
	}
	d.dropped, d.pins = nil, nil
	for c := range d.live {
		if _, ok := c.(*Buffer); !ok {
			c.destroy()
			delete(d.live, c)
		}
	}
	for c := range d.live {
		c.destroy()
	}
	d.live = nil
	for _, s := range d.cmdSlots {
		d.fn.DestroyCommandPool(d.h, s.pool, nil)
	}
	for _, p := range d.descPools {
		d.fn.DestroyDescriptorPool(d.h, p, nil)
	}
	d.mem.destroy()
	if err := d.savePipelineCache(); err != nil {
		d.saveNote = fmt.Sprintf("pipeline cache %s not saved: %v; the next device compiles its pipelines again", d.cachePath, err)
	}
	if d.cache != 0 {
		d.fn.DestroyPipelineCache(d.h, d.cache, nil)
	}
	d.fn.DestroyDevice(d.h, nil)
	return errors.Join(errs...)
}

// openPipelineCache creates the device's VkPipelineCache from the persisted file, if any.
func (d *Device) openPipelineCache(dir string) error {
	info := d.adapter.info
	if dir == "" {
		base, err := os.UserCacheDir()
		if err == nil {
			dir = filepath.Join(base, "wgpu-eval", "pipelines")
		} else {
			dir = "-"
		}
	}
	var data []byte
	if dir != "-" {
		d.cachePath = filepath.Join(dir, fmt.Sprintf("%s-%08x-%s.bin", info.StateKey(), info.DriverVersionRaw, info.PipelineCacheUUID))
		file, err := os.ReadFile(d.cachePath)
		switch {
		case errors.Is(err, os.ErrNotExist): // the first run on this device and driver
		case err != nil:
			d.cacheNote = fmt.Sprintf("pipeline cache %s: %v; the pipelines are compiled again", d.cachePath, err)
		default:
			// An older build's file (errCacheFormat) is replaced without a word: its pipelines are mostly of
			// other kernels anyway.
			if data, err = pipelineCacheData(file, info); err != nil && !errors.Is(err, errCacheFormat) {
				d.cacheNote = fmt.Sprintf("pipeline cache %s: %v; it is not used, the pipelines are compiled again and the file rewritten", d.cachePath, err)
			}
		}
	}
	var ar vk.Arena
	defer ar.Release()
	ci := vk.New[vk.PipelineCacheCreateInfo](&ar)
	if len(data) > 0 {
		ci.InitialDataSize, ci.PInitialData = uintptr(len(data)), ar.Bytes(data)
	}
	r := d.fn.CreatePipelineCache(d.h, ci, nil, &d.cache)
	if r != vk.Success && len(data) > 0 { // data the driver refuses: start empty
		d.cacheNote = fmt.Sprintf("pipeline cache %s: the driver refused its data (%v); the pipelines are compiled again and the file rewritten", d.cachePath, check("vkCreatePipelineCache", r))
		ci.InitialDataSize, ci.PInitialData = 0, nil
		r = d.fn.CreatePipelineCache(d.h, ci, nil, &d.cache)
	}
	return check("vkCreatePipelineCache", r)
}

// SavePipelineCache writes the pipeline cache to its file now (Close does too, and reports a failure only through
// PipelineCacheSaveWarning).
func (d *Device) SavePipelineCache() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return err
	}
	if err := d.savePipelineCache(); err != nil {
		return fmt.Errorf("save pipeline cache %s: %w", d.cachePath, err)
	}
	return nil
}

// PipelineCachePath is the file the pipeline cache persists to ("" when persistence is off).
func (d *Device) PipelineCachePath() string { return d.cachePath }

// PipelineCacheWarning says why the device started with an empty pipeline cache although its file was there: the
// file could not be read, was damaged (its checksum), of another device or driver, or refused by the driver. ""
// when the file was used, absent, or an older build's (without this format's checksum: replaced silently). Either
// way the device works; its pipelines are compiled again, and Close rewrites the file.
func (d *Device) PipelineCacheWarning() string { return d.cacheNote }

// PipelineCacheSaveWarning says, once Close has returned, why Close could not save the pipeline cache to its file
// (PipelineCachePath): a directory that cannot be made or written, a full disk, the driver's data unreadable. ""
// before Close, when the file was saved, and when persistence is off or the device was lost. The device is closed
// all the same; the file keeps its earlier content, if any, and the next device compiles its pipelines again.
func (d *Device) PipelineCacheSaveWarning() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.saveNote
}

// savePipelineCache writes the driver's pipeline cache data to cachePath, behind our magic and checksum, through a
// temporary file and a rename. d.mu must be held.
func (d *Device) savePipelineCache() error {
	if d.cachePath == "" || d.cache == 0 || d.lost != nil {
		return nil
	}
	var n uintptr
	if err := check("vkGetPipelineCacheData", d.fn.GetPipelineCacheData(d.h, d.cache, &n, nil)); err != nil || n == 0 {
		return err
	}
	buf := make([]byte, n)
	r := d.fn.GetPipelineCacheData(d.h, d.cache, &n, unsafe.Pointer(&buf[0]))
	if r != vk.Success && r != vk.Incomplete {
		return check("vkGetPipelineCacheData", r)
	}
	if err := os.MkdirAll(filepath.Dir(d.cachePath), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(d.cachePath), ".pipelines-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(pipelineCacheFile(buf[:n]))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), d.cachePath); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
