// headblock: the numbering of the tiled LM head kernels' workgroups
// (lmhead_loss_shared.wgsl, lmhead_loss_coop.wgsl).

// GX is the blocks of positions a group of workgroups takes (headBlock):
// an override, so that the autotuner can fit the groups to a GPU's L2
// cache (lmhead_loss_coop.wgsl's tilings; the SIMT kernel keeps 16).
override GX: u32 = 16u;

// headBlock is the block of positions (x) and the slice of the vocabulary
// (y) that workgroup wid of a dispatch of nwg = (blocks, slices, 1) takes.
// Not (wid.x, wid.y): workgroups start in the order of wid.y * nwg.x +
// wid.x, so those resident at once would each read another block of h,
// NT times over (once per tile), more than a GPU's L2 cache holds (GPT-2's
// 64 windows: some 260 blocks of 128 positions at 393 KB each, against an
// H200's 50 MB), from memory at every tile. Instead the workgroups take
// the blocks in groups of GX, and within a group slice after slice with
// the group's blocks in turn (the last group may have fewer blocks): those
// resident at once read GX blocks of h (6 MB at GX 16) and some slices of
// wte, each slice by GX workgroups. The same work, the same results; a
// bijection onto the grid.
fn headBlock(wid: vec3<u32>, nwg: vec3<u32>) -> vec2<u32> {
	let l = wid.y * nwg.x + wid.x;
	let xg = l / (GX * nwg.y);          // the group
	let gw = min(GX, nwg.x - xg * GX);  // its blocks
	let r = l - xg * GX * nwg.y;        // the workgroup within the group
	return vec2<u32>(xg * GX + r % gw, r / gw);
}
