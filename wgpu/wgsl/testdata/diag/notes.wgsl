// Redeclarations point at the previous declaration (a note).
const scale = 2.0;

@compute @workgroup_size(1)
fn main() {
	let y = 2.0;
	var y = 3.0;
}

const scale = 3.0;
