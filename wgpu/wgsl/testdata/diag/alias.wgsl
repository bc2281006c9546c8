// Invalid aliasing: the note points at the other argument.
fn swap(a: ptr<function, f32>, b: ptr<function, f32>) {
	let t = *a;
	*a = *b;
	*b = t;
}

@compute @workgroup_size(1)
fn main() {
	var x = 1.0;
	swap(&x, &x);
}
