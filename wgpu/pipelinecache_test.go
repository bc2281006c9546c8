package wgpu

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cacheInfo is a device as pipelineCacheData sees it.
var cacheInfo = AdapterInfo{VendorID: 0x10de, DeviceID: 0x2335, PipelineCacheUUID: "00112233-4455-6677-8899-aabbccddeeff"}

// driverCacheData is pipeline cache data as a driver for vendor and device
// with the UUID 00112233-...-eeff would write it: Vulkan's header of
// version one (or version) and size size, then body.
func driverCacheData(size, version, vendor, device uint32, body string) []byte {
	h := make([]byte, 16, 32+len(body))
	binary.NativeEndian.PutUint32(h[0:], size)
	binary.NativeEndian.PutUint32(h[4:], version)
	binary.NativeEndian.PutUint32(h[8:], vendor)
	binary.NativeEndian.PutUint32(h[12:], device)
	h = append(h, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff)
	return append(h, body...)
}

// TestPipelineCacheData: the data of a file pipelineCacheFile wrote comes
// back whole for the device it was written on, and every other file is
// refused with its reason: another format, a truncated or altered file, a
// header too short or past the data, another vendor, device or cache UUID.
// A header of another version is left to the driver.
func TestPipelineCacheData(t *testing.T) {
	good := driverCacheData(32, 1, 0x10de, 0x2335, "the driver's pipelines")
	if got, err := pipelineCacheData(pipelineCacheFile(good), cacheInfo); err != nil || !bytes.Equal(got, good) {
		t.Fatalf("a file of this device: %q, %v; want its data", got, err)
	}
	other := driverCacheData(32, 2, 0, 0, "Vulkan SC")
	if got, err := pipelineCacheData(pipelineCacheFile(other), cacheInfo); err != nil || !bytes.Equal(got, other) {
		t.Errorf("header version 2: %q, %v; want its data for the driver", got, err)
	}
	altered := pipelineCacheFile(good)
	altered[len(altered)-3] ^= 0x10
	for _, c := range []struct {
		name, want string
		file       []byte
	}{
		{"empty", "not a wgpu-eval pipeline cache", nil},
		{"the driver's data alone (an older wgpu-eval's file)", "not a wgpu-eval pipeline cache", good},
		{"magic only", "truncated", []byte(pipelineCacheMagic)},
		{"cut in the checksum", "truncated", pipelineCacheFile(good)[:len(pipelineCacheMagic)+20]},
		{"cut in the data", "checksum does not match", pipelineCacheFile(good)[:len(pipelineCacheMagic)+sha256.Size+40]},
		{"a byte altered", "checksum does not match", altered},
		{"no header", "shorter than Vulkan's pipeline cache header", pipelineCacheFile([]byte("short"))},
		{"header size 16", "a header of 16 bytes", pipelineCacheFile(driverCacheData(16, 1, 0x10de, 0x2335, ""))},
		{"header size past the data", "a header of 64 bytes in 40", pipelineCacheFile(driverCacheData(64, 1, 0x10de, 0x2335, "12345678"))},
		{"another vendor", "another device or driver (vendor 0x1002", pipelineCacheFile(driverCacheData(32, 1, 0x1002, 0x2335, "x"))},
		{"another device", "device 0x2330", pipelineCacheFile(driverCacheData(32, 1, 0x10de, 0x2330, "x"))},
	} {
		got, err := pipelineCacheData(c.file, cacheInfo)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error saying %q", c.name, got, err, c.want)
		}
	}
	uuid := cacheInfo
	uuid.PipelineCacheUUID = "00112233-4455-6677-8899-aabbccddeefe"
	if _, err := pipelineCacheData(pipelineCacheFile(good), uuid); err == nil || !strings.Contains(err.Error(), "cache UUID 00112233-4455-6677-8899-aabbccddeeff") {
		t.Errorf("another driver's cache UUID: %v", err)
	}
}

// FuzzPipelineCacheData: any file is either refused or gives the data after
// the magic and checksum, whose checksum it is, with a header of at least
// 32 bytes within it; never a panic.
func FuzzPipelineCacheData(f *testing.F) {
	good := driverCacheData(32, 1, 0x10de, 0x2335, "pipelines")
	f.Add(pipelineCacheFile(good))
	f.Add(pipelineCacheFile(driverCacheData(32, 2, 0, 0, "")))
	f.Add(pipelineCacheFile(driverCacheData(1<<31, 1, 0x10de, 0x2335, "")))
	f.Add(good)
	f.Add([]byte(pipelineCacheMagic))
	f.Fuzz(func(t *testing.T, file []byte) {
		data, err := pipelineCacheData(file, cacheInfo)
		if err != nil {
			return
		}
		head := len(pipelineCacheMagic) + sha256.Size
		if sum := sha256.Sum256(data); len(file) < head || !bytes.Equal(data, file[head:]) || !bytes.Equal(sum[:], file[len(pipelineCacheMagic):head]) {
			t.Fatalf("accepted data that is not the checksummed rest of the file")
		}
		if size := binary.NativeEndian.Uint32(data); len(data) < 32 || size < 32 || int64(size) > int64(len(data)) {
			t.Fatalf("accepted data with a header of %d bytes in %d", size, len(data))
		}
	})
}

// TestPipelineCacheDamaged: a device writes its cache in the checked format;
// a device opened on that file altered, or on another device's data, starts
// with an empty cache and says why (PipelineCacheWarning), works, and
// rewrites the file on Close, which the next device then uses silently. An
// older build's file (the driver's data without the format's magic and
// checksum) is replaced without a warning.
func TestPipelineCacheDamaged(t *testing.T) {
	env := newEnv(t)
	dir := t.TempDir()
	open := func() *Device {
		t.Helper()
		d, err := env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		newKernel(t, d, "spec", 0, map[string]float64{"MUL": 2}, BindingReadOnlyStorage, BindingStorage)
		return d
	}
	closed := func(d *Device) []byte {
		t.Helper()
		path := d.PipelineCachePath()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pipelineCacheData(file, env.ad.Info()); err != nil {
			t.Fatalf("the file Close wrote: %v", err)
		}
		return file
	}
	d := open()
	if w := d.PipelineCacheWarning(); w != "" {
		t.Errorf("no file yet: warning %q", w)
	}
	path := d.PipelineCachePath()
	file := closed(d)

	file[len(file)-1] ^= 1
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	d = open()
	if w := d.PipelineCacheWarning(); !strings.Contains(w, path) || !strings.Contains(w, "checksum does not match") {
		t.Errorf("an altered file: warning %q", w)
	}
	closed(d)

	foreign := driverCacheData(32, 1, env.ad.Info().VendorID+1, 7, "another GPU's pipelines")
	if err := os.WriteFile(path, pipelineCacheFile(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	d = open()
	if w := d.PipelineCacheWarning(); !strings.Contains(w, "another device or driver") {
		t.Errorf("another device's data: warning %q", w)
	}
	closed(d)

	d = open()
	if w := d.PipelineCacheWarning(); w != "" {
		t.Errorf("the rewritten file: warning %q", w)
	}
	file = closed(d)

	if err := os.WriteFile(path, file[len(pipelineCacheMagic)+sha256.Size:], 0o644); err != nil { // as an older build wrote it
		t.Fatal(err)
	}
	d = open()
	if w := d.PipelineCacheWarning(); w != "" {
		t.Errorf("an older build's file: warning %q", w)
	}
	closed(d)
}

// TestPipelineCacheUnsaved: a pipeline cache directory that cannot be made
// (under a missing parent in /proc, where nothing can be created, or under a
// regular file; chmod would not stop root) is no error of Close: the device
// closes, and PipelineCacheSaveWarning, "" until then, says which file was not
// saved and why. SavePipelineCache, asked explicitly, returns the error. A
// directory that can be made gives no warning.
func TestPipelineCacheUnsaved(t *testing.T) {
	env := newEnv(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(file, "pipelines")}
	if _, err := os.Stat("/proc/self"); err == nil {
		dirs = append(dirs, "/proc/nonexistent/pipelines")
	}
	for _, dir := range dirs {
		d, err := env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		newKernel(t, d, "spec", 0, map[string]float64{"MUL": 2}, BindingReadOnlyStorage, BindingStorage)
		if err := d.SavePipelineCache(); err == nil || !strings.Contains(err.Error(), "save pipeline cache") {
			t.Errorf("%s: SavePipelineCache: %v, want an error", dir, err)
		}
		if w := d.PipelineCacheSaveWarning(); w != "" {
			t.Errorf("%s: before Close: warning %q", dir, w)
		}
		if err := d.Close(); err != nil {
			t.Errorf("%s: Close: %v, want nil", dir, err)
		}
		if w := d.PipelineCacheSaveWarning(); !strings.Contains(w, d.PipelineCachePath()) || !strings.Contains(w, "not saved") {
			t.Errorf("%s: after Close: warning %q, want the file and why", dir, w)
		}
		if _, err := d.CreateBuffer(&BufferDescriptor{Size: 16, Usage: BufferUsageStorage}); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: after Close: CreateBuffer: %v, want ErrClosed", dir, err)
		}
		if err := d.Close(); err != nil || d.PipelineCacheSaveWarning() == "" {
			t.Errorf("%s: a second Close: %v, warning %q", dir, err, d.PipelineCacheSaveWarning())
		}
	}
	d, err := env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: filepath.Join(t.TempDir(), "a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil || d.PipelineCacheSaveWarning() != "" {
		t.Errorf("a directory that can be made: Close %v, warning %q", err, d.PipelineCacheSaveWarning())
	}
}
