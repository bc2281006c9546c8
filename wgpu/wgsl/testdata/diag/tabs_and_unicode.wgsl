@compute @workgroup_size(1)
fn main() {
		let naïve = 1;
		let ñ: bool = naïve; let z: u32 = 1.5;
}
