package wgpu

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// ValidationLayer is the Khronos validation layer enabled by InstanceDescriptor.Validation.
const ValidationLayer = "VK_LAYER_KHRONOS_validation"

// InstanceDescriptor configures CreateInstance. The zero value is usable.
type InstanceDescriptor struct {
	// Validation enables ValidationLayer and a debug messenger, if the layer is installed (see
	// Instance.ValidationEnabled), with the layer's synchronization validation (missing or wrong barriers are
	// reported as SYNC-HAZARD-* errors; see Instance.SyncValidationEnabled). Meant for tests and debugging; it
	// slows everything down.
	Validation bool
	// OnMessage receives the warnings and errors the validation layer or driver reports. It may be called from
	// any goroutine, during any Vulkan call (with package locks held): it must not call into this package. Nil
	// drops them.
	OnMessage func(Message)
}

// Message is one diagnostic from the validation layer or driver.
type Message struct {
	Severity string // "error", "warning", "info" or "verbose"
	Type     string // "validation", "performance" or "general"
	ID       string // the message ID name, e.g. "VUID-vkCmdDispatch-None-02697"
	Text     string
}

// String formats the message on one line.
func (m Message) String() string {
	return fmt.Sprintf("%s %s: %s: %s", m.Type, m.Severity, m.ID, m.Text)
}

// Instance is a Vulkan instance: the entry point that enumerates adapters.
type Instance struct {
	loader     *vk.Loader
	h          vk.Instance
	fn         *vk.InstanceFuncs
	apiVersion uint32
	validation bool
	// validationSpec is the Vulkan header version the validation layer was
	// written for: extensions newer than it are not used under it.
	validationSpec uint32
	syncValidation bool // the layer's synchronization validation was asked for
	messenger      vk.DebugUtilsMessengerEXT
	cbID           uintptr

	mu      sync.Mutex           // guards closed and devices; held while a device is created
	closed  bool                 // Close was called
	devices map[*Device]struct{} // not closed yet: Close closes them first
}

// CreateInstance loads Vulkan and creates an instance. Without a loader it fails with an error for which
// Unavailable is true.
func CreateInstance(desc *InstanceDescriptor) (*Instance, error) {
	if desc == nil {
		desc = &InstanceDescriptor{}
	}
	l, err := vk.Load()
	if err != nil {
		return nil, err
	}
	var loaderVersion uint32
	if err := check("vkEnumerateInstanceVersion", l.Global.EnumerateInstanceVersion(&loaderVersion)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLoader, err)
	}
	if loaderVersion < vk.MakeAPIVersion(1, 1, 0) {
		return nil, fmt.Errorf("%w: loader supports Vulkan %s, 1.1 needed", ErrNoLoader, vk.VersionString(loaderVersion))
	}
	inst := &Instance{loader: l, apiVersion: min(loaderVersion, vk.MakeAPIVersion(1, 3, 0))}
	exts, err := instanceExtensions(l, "")
	if err != nil {
		return nil, err
	}
	var enableExts, layers []string
	var flags vk.InstanceCreateFlags
	var syncModes []syncMode // the ways to ask for synchronization validation, best first
	if exts["VK_KHR_portability_enumeration"] {
		enableExts = append(enableExts, "VK_KHR_portability_enumeration")
		flags |= vk.InstanceCreateEnumeratePortabilityBitKHR
	}
	if desc.Validation {
		if ok, spec, err := hasLayer(l, ValidationLayer); err != nil {
			return nil, err
		} else if ok {
			layers = append(layers, ValidationLayer)
			inst.validation, inst.validationSpec = true, spec
			lexts, err := instanceExtensions(l, ValidationLayer)
			if err != nil {
				return nil, err
			}
			if !exts["VK_EXT_debug_utils"] && !lexts["VK_EXT_debug_utils"] {
				return nil, errorf(ErrMissingFeature, "validation layer without VK_EXT_debug_utils")
			}
			enableExts = append(enableExts, "VK_EXT_debug_utils")
			// A layer that takes settings (VK_EXT_layer_settings) is told through them: such a layer deprecates
			// VK_EXT_validation_features, and only settings can ask it to check the accesses of shaders.
			if lexts[extLayerSettings] {
				syncModes = append(syncModes, syncSettings)
			}
			if lexts[extValidationFeatures] {
				syncModes = append(syncModes, syncFeatures)
			}
		}
	}
	// Messages of vkCreateInstance are held until it is known whether the attempt stands: a refused one's (the
	// loader's complaint about an extension it does not know) are dropped.
	creating := &heldMessages{held: true}
	if inst.validation {
		inst.cbID = registerCallback(creating.wrap(desc.OnMessage))
	}
	var mci *vk.DebugUtilsMessengerCreateInfoEXT
	var a vk.Arena
	defer a.Release()
	for i := 0; ; i++ {
		mode := syncOff
		if i < len(syncModes) {
			mode = syncModes[i]
		}
		mci = nil
		ci := vk.New[vk.InstanceCreateInfo](&a)
		app := vk.New[vk.ApplicationInfo](&a)
		app.PApplicationName = a.CString("wgpu-eval")
		app.PEngineName = a.CString("wgpu-eval/wgpu")
		app.ApiVersion = inst.apiVersion
		ci.Flags = flags
		ci.PApplicationInfo = app
		ci.EnabledLayerCount, ci.PpEnabledLayerNames = uint32(len(layers)), a.CStrings(layers)
		enable := enableExts
		if mode != syncOff {
			enable = append(enable[:len(enable):len(enable)], mode.extension())
		}
		ci.EnabledExtensionCount, ci.PpEnabledExtensionNames = uint32(len(enable)), a.CStrings(enable)
		if inst.validation {
			mci = vk.New[vk.DebugUtilsMessengerCreateInfoEXT](&a)
			mci.MessageSeverity = vk.DebugUtilsMessageSeverityWarningBitEXT | vk.DebugUtilsMessageSeverityErrorBitEXT
			mci.MessageType = vk.DebugUtilsMessageTypeGeneralBitEXT | vk.DebugUtilsMessageTypeValidationBitEXT |
				vk.DebugUtilsMessageTypePerformanceBitEXT
			mci.PfnUserCallback = messengerCallback()
			*(*uintptr)(unsafe.Pointer(&mci.PUserData)) = inst.cbID // an ID, not a pointer
			ci.PNext = unsafe.Pointer(mci)                          // also covers vkCreateInstance itself
			mci.PNext = mode.chain(&a)
		}
		r := l.Global.CreateInstance(ci, nil, &inst.h)
		// A loader older than VK_EXT_layer_settings refuses it even where the layer offers it (Debian 12's
		// 1.3.239 loader with a newer layer): then the next way is tried.
		if r == vk.ErrorExtensionNotPresent && mode == syncSettings && i+1 < len(syncModes) {
			creating.drop()
			continue
		}
		creating.release(desc.OnMessage)
		if err := check("vkCreateInstance", r); err != nil {
			unregisterCallback(inst.cbID)
			return nil, err
		}
		inst.syncValidation = mode != syncOff
		break
	}
	if inst.fn, err = l.LoadInstance(inst.h); err != nil {
		inst.Close()
		return nil, err
	}
	if mci != nil {
		mci.PNext = nil // the validation features or settings were for vkCreateInstance only
		if err := check("vkCreateDebugUtilsMessengerEXT", inst.fn.CreateDebugUtilsMessengerEXT(inst.h, mci, nil, &inst.messenger)); err != nil {
			inst.Close()
			return nil, err
		}
	}
	return inst, nil
}

// ValidationEnabled reports whether the validation layer is active (requested and installed).
func (i *Instance) ValidationEnabled() bool { return i.validation }

// SyncValidationEnabled reports whether the validation layer's synchronization validation was asked for: the layer
// is active and offers VK_EXT_layer_settings or VK_EXT_validation_features (a layer manifest that lists neither
// leaves it off). Through the settings, newer layers are also asked to check the accesses of shaders
// (syncval_shader_accesses_heuristic), which older ones (Debian 12's 1.3.239) check unasked.
func (i *Instance) SyncValidationEnabled() bool { return i.syncValidation }

const (
	extLayerSettings      = "VK_EXT_layer_settings"
	extValidationFeatures = "VK_EXT_validation_features"
)

// syncMode is how synchronization validation is asked of the validation layer.
type syncMode int

const (
	syncOff      syncMode = iota
	syncSettings          // VK_EXT_layer_settings: validate_sync and syncval_shader_accesses_heuristic
	syncFeatures          // VK_EXT_validation_features: VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
)

// extension is the instance extension the mode needs.
func (m syncMode) extension() string {
	if m == syncSettings {
		return extLayerSettings
	}
	return extValidationFeatures
}

// chain is the structure that asks for the mode in VkInstanceCreateInfo's pNext chain, allocated in a; nil for
// syncOff.
func (m syncMode) chain(a *vk.Arena) unsafe.Pointer {
	switch m {
	case syncSettings:
		return unsafe.Pointer(syncValidationSettings(a))
	case syncFeatures:
		vf := vk.New[vk.ValidationFeaturesEXT](a)
		enable := vk.NewSlice[vk.ValidationFeatureEnableEXT](a, 1)
		enable[0] = vk.ValidationFeatureEnableSynchronizationValidationEXT
		vf.EnabledValidationFeatureCount, vf.PEnabledValidationFeatures = 1, &enable[0]
		return unsafe.Pointer(vf)
	}
	return nil
}

// syncValidationSettings turns on the validation layer's synchronization validation, with the accesses of
// shaders to the buffers they bind checked too (without syncval_shader_accesses_heuristic, a layer that takes
// settings reports no hazard between a dispatch and anything else).
func syncValidationSettings(a *vk.Arena) *vk.LayerSettingsCreateInfoEXT {
	names := []string{"validate_sync", "syncval_shader_accesses_heuristic"}
	settings := vk.NewSlice[vk.LayerSettingEXT](a, len(names))
	on := vk.NewSlice[uint32](a, 1)
	on[0] = vk.True
	for i, n := range names {
		settings[i] = vk.LayerSettingEXT{PLayerName: a.CString(ValidationLayer), PSettingName: a.CString(n),
			Type: vk.LayerSettingTypeBool32EXT, ValueCount: 1, PValues: unsafe.Pointer(&on[0])}
	}
	ls := vk.New[vk.LayerSettingsCreateInfoEXT](a)
	ls.SettingCount, ls.PSettings = uint32(len(settings)), &settings[0]
	return ls
}

// APIVersion is the Vulkan version the instance was created for, e.g. "1.3.0".
func (i *Instance) APIVersion() string { return vk.VersionString(i.apiVersion) }

// Close destroys the instance. Devices created from it that are still open are closed first (Device.Close), and
// their errors returned; using them afterwards fails with ErrClosed.
func (i *Instance) Close() error {
	i.mu.Lock()
	if i.closed {
		i.mu.Unlock()
		return nil
	}
	i.closed = true
	devices := i.devices
	i.devices = nil
	i.mu.Unlock()
	var errs []error
	for d := range devices {
		if err := d.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close device on %s: %w", d.adapter.info.Name, err))
		}
	}
	defer unregisterCallback(i.cbID)
	if i.fn != nil && i.fn.HasDestroyInstance() {
		if i.messenger != 0 {
			i.fn.DestroyDebugUtilsMessengerEXT(i.h, i.messenger, nil)
		}
		i.fn.DestroyInstance(i.h, nil)
	}
	return errors.Join(errs...)
}

// EnumerateAdapters lists every physical device, best first (discrete, integrated, virtual, CPU). No device at
// all is ErrNoDriver.
func (i *Instance) EnumerateAdapters() ([]*Adapter, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.closed {
		return nil, ErrClosed
	}
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", i.fn.EnumeratePhysicalDevices(i.h, &n, nil)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	if n == 0 {
		return nil, ErrNoDriver
	}
	pds := make([]vk.PhysicalDevice, n)
	if err := check("vkEnumeratePhysicalDevices", i.fn.EnumeratePhysicalDevices(i.h, &n, &pds[0])); err != nil {
		return nil, err
	}
	var out []*Adapter
	for _, pd := range pds[:n] {
		a, err := newAdapter(i, pd)
		if err != nil {
			return nil, err
		}
		if a != nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no device with a compute queue and Vulkan 1.1", ErrNoDriver)
	}
	sort.SliceStable(out, func(x, y int) bool { return typeRank[out[x].info.DeviceType] < typeRank[out[y].info.DeviceType] })
	return out, nil
}

var typeRank = map[string]int{"discrete-gpu": 0, "integrated-gpu": 1, "virtual-gpu": 2, "other": 3, "cpu": 4}

// RequestAdapter returns the best adapter for want == "", the adapter at that index of EnumerateAdapters' order
// for a decimal want ("0", "1"), or else the first whose name contains want (case-insensitive).
func (i *Instance) RequestAdapter(want string) (*Adapter, error) {
	as, err := i.EnumerateAdapters()
	if err != nil {
		return nil, err
	}
	if k, err := strconv.Atoi(want); err == nil {
		if k < 0 || k >= len(as) {
			return nil, fmt.Errorf("%w: adapter index %d, have %d adapters", ErrNoDriver, k, len(as))
		}
		return as[k], nil
	}
	nameContains := want
	for _, a := range as {
		if nameContains == "" || strings.Contains(strings.ToLower(a.info.Name), strings.ToLower(nameContains)) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: no adapter named like %q", ErrNoDriver, nameContains)
}

// EnumerateAdapters creates a temporary instance and returns the info of every adapter, best first: what
// `wgpu-eval devices` prints.
func EnumerateAdapters() ([]AdapterInfo, error) {
	inst, err := CreateInstance(nil)
	if err != nil {
		return nil, err
	}
	defer inst.Close()
	as, err := inst.EnumerateAdapters()
	if err != nil {
		return nil, err
	}
	out := make([]AdapterInfo, len(as))
	for k, a := range as {
		out[k] = a.Info()
	}
	return out, nil
}

func instanceExtensions(l *vk.Loader, layer string) (map[string]bool, error) {
	var a vk.Arena
	defer a.Release()
	var lp *byte
	if layer != "" {
		lp = a.CString(layer)
	}
	var n uint32
	if err := check("vkEnumerateInstanceExtensionProperties", l.Global.EnumerateInstanceExtensionProperties(lp, &n, nil)); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	if n == 0 {
		return out, nil
	}
	props := vk.NewSlice[vk.ExtensionProperties](&a, int(n))
	r := l.Global.EnumerateInstanceExtensionProperties(lp, &n, &props[0])
	if r != vk.Success && r != vk.Incomplete {
		return nil, check("vkEnumerateInstanceExtensionProperties", r)
	}
	for _, p := range props[:n] {
		out[vk.BytesString(p.ExtensionName[:])] = true
	}
	return out, nil
}

// hasLayer reports whether the instance layer name is installed, and the
// Vulkan header version it was written for (its specVersion).
func hasLayer(l *vk.Loader, name string) (ok bool, spec uint32, err error) {
	var n uint32
	if err := check("vkEnumerateInstanceLayerProperties", l.Global.EnumerateInstanceLayerProperties(&n, nil)); err != nil || n == 0 {
		return false, 0, err
	}
	props := make([]vk.LayerProperties, n)
	r := l.Global.EnumerateInstanceLayerProperties(&n, &props[0])
	if r != vk.Success && r != vk.Incomplete {
		return false, 0, check("vkEnumerateInstanceLayerProperties", r)
	}
	for _, p := range props[:n] {
		if vk.BytesString(p.LayerName[:]) == name {
			return true, p.SpecVersion, nil
		}
	}
	return false, 0, nil
}

// The debug messenger callback is one C function pointer for the whole process (purego callbacks cannot be
// freed); instances are told apart by an ID passed as pUserData.
var callbacks struct {
	sync.Mutex
	fn   uintptr
	next uintptr
	m    map[uintptr]func(Message)
}

// heldMessages holds messages while held is set, then passes them on.
type heldMessages struct {
	mu   sync.Mutex
	held bool
	msgs []Message
}

// wrap is f (nil: drop) behind h.
func (h *heldMessages) wrap(f func(Message)) func(Message) {
	return func(m Message) {
		h.mu.Lock()
		if h.held {
			h.msgs = append(h.msgs, m)
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		if f != nil {
			f(m)
		}
	}
}

// drop forgets the messages held so far.
func (h *heldMessages) drop() {
	h.mu.Lock()
	h.msgs = nil
	h.mu.Unlock()
}

// release passes the held messages to f (nil: drops them) and lets later ones through.
func (h *heldMessages) release(f func(Message)) {
	h.mu.Lock()
	msgs := h.msgs
	h.msgs, h.held = nil, false
	h.mu.Unlock()
	if f != nil {
		for _, m := range msgs {
			f(m)
		}
	}
}

func registerCallback(f func(Message)) uintptr {
	callbacks.Lock()
	defer callbacks.Unlock()
	if callbacks.m == nil {
		callbacks.m = map[uintptr]func(Message){}
	}
	callbacks.next++
	callbacks.m[callbacks.next] = f
	return callbacks.next
}

func unregisterCallback(id uintptr) {
	callbacks.Lock()
	delete(callbacks.m, id)
	callbacks.Unlock()
}

func messengerCallback() uintptr {
	callbacks.Lock()
	defer callbacks.Unlock()
	if callbacks.fn == 0 {
		callbacks.fn = vk.NewCallback(onMessage)
	}
	return callbacks.fn
}

// onMessage is PFN_vkDebugUtilsMessengerCallbackEXT.
func onMessage(severity, types, data, user uintptr) uintptr {
	callbacks.Lock()
	f := callbacks.m[user]
	callbacks.Unlock()
	if f == nil || data == 0 {
		return 0
	}
	d := vk.CallbackData(data)
	m := Message{ID: vk.GoString(d.PMessageIdName), Text: vk.GoString(d.PMessage), Severity: "verbose", Type: "general"}
	switch s := vk.DebugUtilsMessageSeverityFlagsEXT(uint32(severity)); {
	case s&vk.DebugUtilsMessageSeverityErrorBitEXT != 0:
		m.Severity = "error"
	case s&vk.DebugUtilsMessageSeverityWarningBitEXT != 0:
		m.Severity = "warning"
	case s&vk.DebugUtilsMessageSeverityInfoBitEXT != 0:
		m.Severity = "info"
	}
	switch t := vk.DebugUtilsMessageTypeFlagsEXT(uint32(types)); {
	case t&vk.DebugUtilsMessageTypeValidationBitEXT != 0:
		m.Type = "validation"
	case t&vk.DebugUtilsMessageTypePerformanceBitEXT != 0:
		m.Type = "performance"
	}
	f(m)
	return 0
}
