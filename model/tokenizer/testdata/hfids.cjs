// hfids.cjs prints the token ids Hugging Face's tokenizers give a text, for the
// Go tests of package tokenizer (crosscheck_hf_test.go) to compare with.
//
//	node hfids.cjs ENGINE NODE_MODULES TOKENIZER_DIR TEXT_FILE OUT_FILE
//
// ENGINE is "rust" (npm tokenizers: the Rust library itself, through its Node
// binding) or "js" (npm @huggingface/tokenizers: an independent
// implementation in JavaScript). TOKENIZER_DIR holds tokenizer.json and
// tokenizer_config.json. The text is encoded with add_special_tokens (what
// transformers' tokenizer(text) returns); the ids go to OUT_FILE as
// little-endian uint32, no header. TEXT_FILE may instead be a file of JSON
// strings, one per line, when its name ends in ".jsonl": each is encoded on
// its own and OUT_FILE gets, per string, its id count and then its ids (all
// little-endian uint32).
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

async function main() {
  const [engine, modules, dir, textFile, outFile] = process.argv.slice(2);
  if (!outFile) {
    throw new Error("usage: node hfids.cjs rust|js NODE_MODULES TOKENIZER_DIR TEXT_FILE OUT_FILE");
  }
  const req = createRequire(path.join(path.resolve(modules), "x.js"));
  const tjPath = path.join(dir, "tokenizer.json");
  let encode;
  if (engine === "rust") {
    const { Tokenizer } = req("tokenizers");
    const tok = Tokenizer.fromFile(tjPath);
    encode = async (s) => (await tok.encode(s, null, { addSpecialTokens: true })).getIds();
  } else if (engine === "js") {
    const { Tokenizer } = req("@huggingface/tokenizers");
    const json = JSON.parse(fs.readFileSync(tjPath, "utf8"));
    const cfgPath = path.join(dir, "tokenizer_config.json");
    const cfg = fs.existsSync(cfgPath) ? JSON.parse(fs.readFileSync(cfgPath, "utf8")) : {};
    const tok = new Tokenizer(json, cfg);
    encode = async (s) => tok.encode(s, { add_special_tokens: true }).ids;
  } else {
    throw new Error(`engine ${JSON.stringify(engine)}: want rust or js`);
  }
  const text = fs.readFileSync(textFile, "utf8");
  const out = [];
  if (textFile.endsWith(".jsonl")) {
    for (const line of text.split("\n")) {
      if (line === "") continue;
      const ids = await encode(JSON.parse(line));
      out.push(ids.length);
      for (const id of ids) out.push(id);
    }
  } else {
    for (const id of await encode(text)) out.push(id);
  }
  const buf = Buffer.alloc(4 * out.length);
  out.forEach((id, i) => buf.writeUInt32LE(id, 4 * i));
  fs.writeFileSync(outFile, buf);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
