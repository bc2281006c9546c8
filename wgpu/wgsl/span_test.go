package wgsl

import "testing"

func TestSpans(t *testing.T) {
	src := "const a = vec3<f32>(1.0, 2.0 /* c */, 3.0,);\nconst b = -(a.x + max(a[1], 2.0)) * 4.0;\nconst c = array<u32, 2>();\n" + ep
	f, err := parse("s.wgsl", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"vec3<f32>(1.0, 2.0 /* c */, 3.0,)",
		"-(a.x + max(a[1], 2.0)) * 4.0",
		"array<u32, 2>()",
	}
	for i, w := range want {
		e := f.Decls[i].(*varDecl).Init
		sp := f.Span(e)
		if got := src[sp.Start:sp.End]; got != w {
			t.Errorf("span %d = %q, want %q", i, got, w)
		}
	}
	b := f.Decls[1].(*varDecl).Init.(*binaryExpr)
	inner := b.X.(*unaryExpr).X.(*parenExpr).X.(*binaryExpr).Y.(*callExpr)
	if sp := f.Span(inner); src[sp.Start:sp.End] != "max(a[1], 2.0)" {
		t.Errorf("call span %q", src[sp.Start:sp.End])
	}
	if sp := f.Span(inner.Args[0]); src[sp.Start:sp.End] != "a[1]" {
		t.Errorf("index span %q", src[sp.Start:sp.End])
	}
	// Ends are stored at parse time, also where '>>' closes two template lists.
	src2 := "@group(0) @binding(0) var<storage, read_write> v: array<vec2<u32>>;\nconst k = 1-2--3;\n" + ep
	f2, err := parse("s2.wgsl", src2)
	if err != nil {
		t.Fatal(err)
	}
	ty := f2.Decls[0].(*varDecl).Type
	if sp := f2.Span(ty); src2[sp.Start:sp.End] != "array<vec2<u32>>" {
		t.Errorf("type span %q", src2[sp.Start:sp.End])
	}
	if sp := f2.Span(ty.Args[0]); src2[sp.Start:sp.End] != "vec2<u32>" {
		t.Errorf("inner type span %q", src2[sp.Start:sp.End])
	}
	k := f2.Decls[1].(*varDecl).Init.(*binaryExpr)
	if sp := f2.Span(k.Y); src2[sp.Start:sp.End] != "-3" {
		t.Errorf("operand span %q", src2[sp.Start:sp.End])
	}
}
