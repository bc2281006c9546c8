// A syntax error stops the declaration it is in; later declarations are still parsed.
fn broken() -> f32 {
	let x = (1.0 + ;
	return x;
}

struct S {
	a: f32
	b: u32,
}

@compute @workgroup_size(1)
fn main() {
	let ok = 1;
}
