package x86emu

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Hand-made encodings, each decoded by GNU objdump (`objdump -D -b binary
// -m i386:x86-64 -M intel`; its output is the comment) and the fields that
// decoding implies written out: registers (rax=0 ... r15=15, xmm/ymm/zmm by
// number), base 16 for RIP, base/index -1 for none, EVEX disp8 scaled by N.
var decodeCases = []struct {
	hex, objdump, want string
}{
	{"c5fc58c1", "vaddps ymm0,ymm0,ymm1", "vex.VADDPS.256 reg=0 vvvv=0 rm=1"},
	{"c4e275b8c2", "vfmadd231ps ymm0,ymm1,ymm2", "vex.VFMADD231PS.256 reg=0 vvvv=1 rm=2"},
	{"62f17c48584101", "vaddps zmm0,zmm0,ZMMWORD PTR [rcx+0x40]", "evex.VADDPS.512 reg=0 vvvv=0 mem=[base=1 index=-1*1 disp=0x40]"},
	{"62f16cd9584802", "vaddps zmm1{k1}{z},zmm2,DWORD BCST [rax+0x8]", "evex.VADDPS.512 reg=1 vvvv=2 mem=[base=0 index=-1*1 disp=0x8] {k1}{z} {1to}"},
	{"62f2764852c2", "vdpbf16ps zmm0,zmm1,zmm2", "evex.VDPBF16PS.512 reg=0 vvvv=1 rm=2"},
	{"62e2764052050001" + "0000", "vdpbf16ps zmm16,zmm17,ZMMWORD PTR [rip+0x100]", "evex.VDPBF16PS.512 reg=16 vvvv=17 mem=[base=16 index=-1*1 disp=0x100]"},
	{"62f27e4872ca", "vcvtneps2bf16 ymm1,zmm2", "evex.VCVTNEPS2BF16.512 reg=1 vvvv=0 rm=2"},
	{"62f27e28724c2402", "vcvtneps2bf16 xmm1,YMMWORD PTR [rsp+0x40]", "evex.VCVTNEPS2BF16.256 reg=1 vvvv=0 mem=[base=4 index=-1*1 disp=0x40]"},
	{"62f27d48134001", "vcvtph2ps zmm0,YMMWORD PTR [rax+0x20]", "evex.VCVTPH2PS.512 reg=0 vvvv=0 mem=[base=0 index=-1*1 disp=0x20]"},
	{"62f37d4819520101", "vextractf32x4 XMMWORD PTR [rdx+0x10],zmm2,0x1", "evex.VEXTRACTF128/VEXTRACTF32X4.512 reg=2 vvvv=0 mem=[base=2 index=-1*1 disp=0x10] imm=0x1"},
	{"62f3fd481bd101", "vextractf64x4 ymm1,zmm2,0x1", "evex.VEXTRACTF64X4.512 reg=2 vvvv=0 rm=1 imm=0x1"},
	{"c4e37d19c101", "vextractf128 xmm1,ymm0,0x1", "vex.VEXTRACTF128/VEXTRACTF32X4.256 reg=0 vvvv=0 rm=1 imm=0x1"},
	{"62f27d48184101", "vbroadcastss zmm0,DWORD PTR [rcx+0x4]", "evex.VBROADCASTSS.512 reg=0 vvvv=0 mem=[base=1 index=-1*1 disp=0x4]"},
	{"62617c48117c8801", "vmovups ZMMWORD PTR [rax+rcx*4+0x40],zmm31", "evex.VMOVUPS.512 reg=31 vvvv=0 mem=[base=0 index=1*4 disp=0x40]"},
	{"62b17c4810cc", "vmovups zmm1,zmm20", "evex.VMOVUPS.512 reg=1 vvvv=0 rm=20"},
	{"62f17c4a1000", "vmovups zmm0{k2},ZMMWORD PTR [rax]", "evex.VMOVUPS.512 reg=0 vvvv=0 mem=[base=0 index=-1*1 disp=0x0] {k2}"},
	{"62e27d48b85c24fe", "vfmadd231ps zmm19,zmm0,ZMMWORD PTR [rsp-0x80]", "evex.VFMADD231PS.512 reg=19 vvvv=0 mem=[base=4 index=-1*1 disp=-0x80]"},
	{"62f1754872f217", "vpslld zmm1,zmm2,0x17", "evex.VPSLLD imm8.512 reg=6 vvvv=1 rm=2 imm=0x17"},
	{"c4e37d08c100", "vroundps ymm0,ymm1,0x0", "vex.VROUNDPS/VRNDSCALEPS.256 reg=0 vvvv=0 rm=1 imm=0x0"},
	{"62f37d4808c100", "vrndscaleps zmm0,zmm1,0x0", "evex.VROUNDPS/VRNDSCALEPS.512 reg=0 vvvv=0 rm=1 imm=0x0"},
	{"c5f96ec0", "vmovd xmm0,eax", "vex.VMOVD/VMOVQ xmm, r/m.128 reg=0 vvvv=0 rm=0"},
	{"c5f877", "vzeroupper", "vex.VZEROUPPER.128"},
	{"62f17448c6c244", "vshufps zmm0,zmm1,zmm2,0x44", "evex.VSHUFPS.512 reg=0 vvvv=1 rm=2 imm=0x44"},
	{"62b17440c6eedd", "vshufps zmm5,zmm17,zmm22,0xdd", "evex.VSHUFPS.512 reg=5 vvvv=17 rm=22 imm=-0x23"},
	{"c5d8c6ebee", "vshufps xmm5,xmm4,xmm3,0xee", "vex.VSHUFPS.128 reg=5 vvvv=4 rm=3 imm=-0x12"},
	{"c4e2784900", "ldtilecfg [rax]", "vex.LDTILECFG/TILERELEASE.128 reg=0 vvvv=0 mem=[base=0 index=-1*1 disp=0x0]"},
	{"c4e27849c0", "tilerelease", "vex.LDTILECFG/TILERELEASE.128 reg=0 vvvv=0 rm=0"},
	{"c4e27b49d8", "tilezero tmm3", "vex.TILEZERO.128 reg=3 vvvv=0 rm=0"},
	{"c4827b4b2408", "tileloadd tmm4,[r8+r9*1]", "vex.TILELOADD.128 reg=4 vvvv=0 mem=[base=8 index=9*1 disp=0x0]"},
	{"c4e27b4b4c0e40", "tileloadd tmm1,[rsi+rcx*1+0x40]", "vex.TILELOADD.128 reg=1 vvvv=0 mem=[base=6 index=1*1 disp=0x40]"},
	{"c4a27a4b140f", "tilestored [rdi+r9*1],tmm2", "vex.TILESTORED.128 reg=2 vvvv=0 mem=[base=7 index=9*1 disp=0x0]"},
	{"c4e24a5cc4", "tdpbf16ps tmm0,tmm4,tmm6", "vex.TDPBF16PS.128 reg=0 vvvv=6 rm=4"},
	{"c4e2425cdd", "tdpbf16ps tmm3,tmm5,tmm7", "vex.TDPBF16PS.128 reg=3 vvvv=7 rm=5"},
	{"62f3754823c288", "vshuff32x4 zmm0,zmm1,zmm2,0x88", "evex.VSHUFF32X4.512 reg=0 vvvv=1 rm=2 imm=-0x78"},
	{"62b3754023eedd", "vshuff32x4 zmm5,zmm17,zmm22,0xdd", "evex.VSHUFF32X4.512 reg=5 vvvv=17 rm=22 imm=-0x23"},
	{"c5f4590510000000", "vmulps ymm0,ymm1,YMMWORD PTR [rip+0x10]", "vex.VMULPS.256 reg=0 vvvv=1 mem=[base=16 index=-1*1 disp=0x10]"},
	{"6281ff486f0468", "vmovdqu16 zmm16,ZMMWORD PTR [r8+r13*2]", "evex.VMOVDQU16.512 reg=16 vvvv=0 mem=[base=8 index=13*2 disp=0x0]"},
	{"6281ffc96f0468", "vmovdqu16 zmm16{k1}{z},ZMMWORD PTR [r8+r13*2]", "evex.VMOVDQU16.512 reg=16 vvvv=0 mem=[base=8 index=13*2 disp=0x0] {k1}{z}"},
	{"62f1ff2a6f4101", "vmovdqu16 ymm0{k2},YMMWORD PTR [rcx+0x20]", "evex.VMOVDQU16.256 reg=0 vvvv=0 mem=[base=1 index=-1*1 disp=0x20] {k2}"},
	{"62f1ff8b6fc1", "vmovdqu16 xmm0{k3}{z},xmm1", "evex.VMOVDQU16.128 reg=0 vvvv=0 rm=1 {k3}{z}"},
	{"62b1ff486fc4", "vmovdqu16 zmm0,zmm20", "evex.VMOVDQU16.512 reg=0 vvvv=0 rm=20"},
	{"62f1ff497f08", "vmovdqu16 ZMMWORD PTR [rax]{k1},zmm1", "evex.VMOVDQU16.512 reg=1 vvvv=0 mem=[base=0 index=-1*1 disp=0x0] {k1}"},
	{"62e1ff2d7f4c2403", "vmovdqu16 YMMWORD PTR [rsp+0x60]{k5},ymm17", "evex.VMOVDQU16.256 reg=17 vvvv=0 mem=[base=4 index=-1*1 disp=0x60] {k5}"},
	{"c5fb92ca", "kmovd k1,edx", "vex.KMOVD/KMOVQ k, r.128 reg=1 vvvv=0 rm=2"},
	{"c4e1fb92d0", "kmovq k2,rax", "vex.KMOVD/KMOVQ k, r.128 reg=2 vvvv=0 rm=0"},
	{"c4c17892d9", "kmovw k3,r9d", "vex.KMOVW k, r32.128 reg=3 vvvv=0 rm=9"},
	{"f30f11442420", "movss DWORD PTR [rsp+0x20],xmm0", "MOVSS reg=0 mem=[base=4 index=-1*1 disp=0x20]"},
	{"c5fc5a5482" + "10", "vcvtps2pd ymm2,XMMWORD PTR [rdx+rax*4+0x10]", "vex.VCVTPS2PD.256 reg=2 vvvv=0 mem=[base=2 index=0*4 disp=0x10]"},
	{"62e17c485a4a02", "vcvtps2pd zmm17,YMMWORD PTR [rdx+0x40]", "evex.VCVTPS2PD.512 reg=17 vvvv=0 mem=[base=2 index=-1*1 disp=0x40]"},
	{"62f17c485acb", "vcvtps2pd zmm1,ymm3", "evex.VCVTPS2PD.512 reg=1 vvvv=0 rm=3"},
	{"c5fd58c2", "vaddpd ymm0,ymm0,ymm2", "vex.VADDPD.256 reg=0 vvvv=0 rm=2"},
	{"62f1ed40584902", "vaddpd zmm1,zmm18,ZMMWORD PTR [rcx+0x80]", "evex.VADDPD.512 reg=1 vvvv=18 mem=[base=1 index=-1*1 disp=0x80]"},
	{"62f1ed485cd0", "vsubpd zmm2,zmm2,zmm0", "evex.VSUBPD.512 reg=2 vvvv=2 rm=0"},
	{"c5ed59d2", "vmulpd ymm2,ymm2,ymm2", "vex.VMULPD.256 reg=2 vvvv=2 rm=2"},
	{"c5f358c0", "vaddsd xmm0,xmm1,xmm0", "vex.VADDSD.128 reg=0 vvvv=1 rm=0"},
	{"62a1f70058c2", "vaddsd xmm16,xmm17,xmm18", "evex.VADDSD.128 reg=16 vvvv=17 rm=18"},
	{"c4e27d19442418", "vbroadcastsd ymm0,QWORD PTR [rsp+0x18]", "vex.VBROADCASTSD.256 reg=0 vvvv=0 mem=[base=4 index=-1*1 disp=0x18]"},
	{"62f2fd4819442403", "vbroadcastsd zmm0,QWORD PTR [rsp+0x18]", "evex.VBROADCASTSD.512 reg=0 vvvv=0 mem=[base=4 index=-1*1 disp=0x18]"},
	{"f20f11442420", "movsd QWORD PTR [rsp+0x20],xmm0", "MOVSD reg=0 mem=[base=4 index=-1*1 disp=0x20]"},
	{"488b042500100000", "mov rax,QWORD PTR ds:0x1000", "MOV r, r/m reg=0 mem=[base=-1 index=-1*1 disp=0x1000]"},
	{"4883c110", "add rcx,0x10", "ALU r/m, imm8 reg=0 rm=1 imm=0x10"},
	{"4839de", "cmp rsi,rbx", "CMP reg=3 rm=6"},
	{"7305", "jae 0x7", "Jcc rel8 imm=0x5"},
	{"e900010000", "jmp 0x105", "JMP rel32 imm=0x100"},
	{"48c1e202", "shl rdx,0x2", "SHIFT r/m, imm8 reg=4 rm=2 imm=0x2"},
	{"0fb70451", "movzx eax,WORD PTR [rcx+rdx*2]", "MOVZX r, r/m16 reg=0 mem=[base=1 index=2*2 disp=0x0]"},
	{"4f8d44d17f", "lea r8,[r9+r10*8+0x7f]", "LEA reg=8 mem=[base=9 index=10*8 disp=0x7f]"},
	{"49ffc3", "inc r11", "INC/DEC r/m reg=0 rm=11"},
	{"49bc8877665544332211", "movabs r12,0x1122334455667788", "MOV r, imm imm=0x1122334455667788"},
}

func TestDecode(t *testing.T) {
	for _, c := range decodeCases {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		// Trailing bytes must not change the decoding.
		in, err := Decode(append(b, 0xCC, 0xCC))
		if err != nil {
			t.Errorf("%s (%s): %v", c.hex, c.objdump, err)
			continue
		}
		if got := in.String(); got != c.want || in.Len != len(b) {
			t.Errorf("%s (%s):\n got %s (%d bytes)\nwant %s (%d bytes)", c.hex, c.objdump, got, in.Len, c.want, len(b))
		}
	}
}

// Bytes outside the subset, invalid or truncated give an error naming the
// bytes and what is wrong.
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ hex, why string }{
		{"62f17c", "truncated"},
		{"c5", "truncated"},
		{"4883", "truncated"},
		{"0f0b", "not in the supported subset"},                       // ud2
		{"62f17c6858c1", "L'L = 11b"},                                 // reserved vector length
		{"62f17cc858c1", "z without a mask"},                          // zeroing, k0
		{"66c5fc58c1", "after a 66/F2/F3/REX prefix"},                 // prefix before VEX
		{"62f17c1858c1", "embedded rounding"},                         // EVEX.b on registers
		{"62f1fc4858c1", "W1 not supported"},                          // vaddpd
		{"62f37d4808c1", "truncated"},                                 // missing imm8
		{"f0480101", "prefix 0xf0"},                                   // lock
		{"c5ff92ca", "vector length not supported"},                   // kmovd with VEX.L1: (bad) to objdump
		{"62f17f486fc1", "VMOVDQU16 with W0 not supported"},           // vmovdqu8 zmm0,zmm1
		{"62f1ffc97f08", "zeroing-masking with a memory destination"}, // vmovdqu16 [rax]{k1}{z},zmm1
		{"c5f89200", "with a memory operand not supported"},           // 92 with memory: (bad) to objdump
		{"62f1f54958ca", "masking of 64-bit elements"},                // vaddpd zmm1{k1},zmm1,zmm2
		{"62f1f5585809", "broadcast not supported"},                   // vaddpd zmm1,zmm1,QWORD BCST [rcx]
		{"62f17d4858ca", "EVEX.W0 is not this instruction"},           // vaddpd with W0 (the SDM defines W1 only; objdump decodes it)
		{"62f27d4819442403", "W must be 1 (EVEX) or 0 (VEX)"},         // vbroadcastf32x2 zmm0,QWORD PTR [rsp+0x18]
		{"c4e27919442418", "no 128-bit form"},                         // vbroadcastsd xmm: (bad) to objdump
		{"c5fb92c9", ""},                                              // kmovd k1,ecx: valid (control)
		{"62f17c485cc1" + strings.Repeat("", 0), ""},                  // vsubps zmm: valid (control)
		{"666666666666666666666666666666c3", "longer than 15"},        // 15 prefixes then ret
	} {
		b, _ := hex.DecodeString(c.hex)
		_, err := Decode(b)
		if c.why == "" {
			if err != nil {
				t.Errorf("%s: %v", c.hex, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "decode "+strings.TrimSpace(spaced(b[:min(len(b), 15)]))) {
			t.Errorf("%s: error %v, want one naming the bytes and %q", c.hex, err, c.why)
		}
	}
}

func spaced(b []byte) string {
	var s []string
	for _, c := range b {
		s = append(s, hex.EncodeToString([]byte{c}))
	}
	return strings.Join(s, " ")
}

// Random bytes give an error or an instruction within the bytes and the
// architectural 15, never a panic.
func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		b, _ := hex.DecodeString(c.hex)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Decode(b)
		if err != nil {
			return
		}
		if in.Len < 1 || in.Len > len(b) || in.Len > maxInstLen {
			t.Fatalf("% x: length %d", b, in.Len)
		}
		_ = in.String()
	})
}
