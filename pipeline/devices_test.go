package pipeline

import "testing"

func TestParseDevice(t *testing.T) {
	for in, want := range map[string]DeviceSpec{"auto": {"auto", -1}, "CPU": {"cpu", -1}, "gpu": {"gpu", -1}, "Gpu:2": {"gpu", 2}, " ALL ": {"all", -1}} {
		if got, err := ParseDevice(in); err != nil || got != want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "gpu:", "gpu:-1", "tpu", "gpu:x", "gpu:1:2"} {
		if _, err := ParseDevice(bad); err == nil {
			t.Errorf("ParseDevice(%q) accepted", bad)
		}
	}
	for in, want := range map[string]Precision{"": PrecisionAuto, "auto": PrecisionAuto, "F16": PrecisionF16, "f32": PrecisionF32} {
		if got, err := ParsePrecision(in); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParsePrecision("bf16"); err == nil {
		t.Error("ParsePrecision(bf16) accepted")
	}
}
