// oracle.mjs: Tint (Dawn's WGSL front end, from the npm package webgpu@0.6.2)
// as a validity oracle for the wgpu/wgsl checker. It reads a JSON array of
// {name, src} on stdin and prints, after a marker line, a JSON array of {name, errors:
// [{line, col, message}]}. It needs no GPU: the device comes from Dawn's null backend.
//
//   npm install webgpu@0.6.2   (in some directory D)
//   NODE_PATH=D/node_modules node oracle.mjs < corpus.json
//
// Used by TestTintOracle in ../../oracle_test.go (WGSL_TINT=D/node_modules).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const modDir = process.env.NODE_PATH.split(':')[0];
const { create, globals } = await import(modDir + '/webgpu/index.js');

Object.assign(globalThis, globals);
// ORACLE_SUBGROUP_MATRIX=1 also enables Chromium's experimental subgroup
// matrices, which Dawn offers only with its unsafe APIs allowed.
const matrices = process.env.ORACLE_SUBGROUP_MATRIX === '1';
const gpu = create(matrices ? ['backend=null', 'enable-dawn-features=allow_unsafe_apis'] : ['backend=null']);
const adapter = await gpu.requestAdapter();
const features = ['shader-f16', 'subgroups'].concat(matrices ? ['chromium-experimental-subgroup-matrix'] : []);
const want = features.filter((f) => adapter.features.has(f));
const device = await adapter.requestDevice({ requiredFeatures: want });

const oracleMarker = '=== oracle results ===';
const corpus = JSON.parse(readFileSync(0, 'utf8'));
const out = [];
for (const { name, src } of corpus) {
  device.pushErrorScope('validation');
  const m = device.createShaderModule({ code: src });
  const info = await m.getCompilationInfo();
  await device.popErrorScope();
  const errors = info.messages
    .filter((x) => x.type === 'error')
    .map((x) => ({ line: x.lineNum, col: x.linePos, message: x.message }));
  out.push({ name, errors });
}
device.destroy();
// Dawn prints compilation warnings on stdout itself: the JSON follows a
// marker line. Exit only once stdout is flushed: pipes are asynchronous in node.
process.stdout.write('\n' + oracleMarker + '\n' + JSON.stringify(out), () => process.exit(0));
