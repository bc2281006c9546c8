// hfnorm.cjs prints the NFC, NFD, NFKC and NFKD normal forms that Hugging
// Face's tokenizers (npm tokenizers, the Rust library's Node binding) give
// texts, for unicodenorm_hf_test.go to compare with.
//
//	node hfnorm.cjs NODE_MODULES TEXTS.jsonl OUT.jsonl
//
// TEXTS.jsonl holds a JSON string per line; OUT.jsonl gets, per line, a
// JSON array of the four forms of that string, in that order.
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const [modules, textFile, outFile] = process.argv.slice(2);
if (!outFile) {
  throw new Error("usage: node hfnorm.cjs NODE_MODULES TEXTS.jsonl OUT.jsonl");
}
const t = createRequire(path.join(path.resolve(modules), "x.js"))("tokenizers");
const forms = [t.nfcNormalizer(), t.nfdNormalizer(), t.nfkcNormalizer(), t.nfkdNormalizer()];
const out = [];
for (const line of fs.readFileSync(textFile, "utf8").split("\n")) {
  if (line === "") continue;
  const s = JSON.parse(line);
  out.push(JSON.stringify(forms.map((f) => f.normalizeString(s))));
}
fs.writeFileSync(outFile, out.join("\n") + "\n");
