// gen.cjs writes the small tokenizer files of this folder and goldens.json,
// the ids Hugging Face's tokenizers give test strings with them (and the
// text it decodes those ids to, where that is not the string), for
// hf_golden_test.go (which needs no node). Run it after changing the
// variants or the strings:
//
//	node gen.cjs NODE_MODULES
//
// NODE_MODULES holds npm tokenizers@0.23.2 (the Rust library's Node binding)
// and @huggingface/tokenizers@0.2.0 (the JavaScript implementation), as
// $WGPU_TEST_HF_TOKENIZERS does. The vocabularies are trained here, by a
// plain BPE on train.txt, so that the files hold nothing of any real model.
"use strict";
const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const here = __dirname;
const req = createRequire(path.join(path.resolve(process.argv[2] || "."), "x.js"));
const rust = req("tokenizers");
const js = req("@huggingface/tokenizers");

// GPT-2's bytes_to_unicode.
function byteChars() {
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const m = new Map();
  bs.forEach((b, i) => m.set(b, String.fromCodePoint(cs[i])));
  return m;
}
const B2C = byteChars();

// train learns merges from words (arrays of symbols), most frequent pair
// first, ties by the pair's text.
function train(words, merges) {
  const out = [];
  for (let k = 0; k < merges; k++) {
    const counts = new Map();
    for (const [w, n] of words) {
      for (let i = 0; i + 1 < w.length; i++) {
        const key = w[i] + "\u0000" + w[i + 1];
        counts.set(key, (counts.get(key) || 0) + n);
      }
    }
    let best = null;
    for (const [key, c] of counts) {
      if (best === null || c > best[1] || (c === best[1] && key < best[0])) best = [key, c];
    }
    if (best === null || best[1] < 2) break;
    const [a, b] = best[0].split("\u0000");
    out.push([a, b]);
    for (const entry of words) {
      const w = entry[0];
      const nw = [];
      for (let i = 0; i < w.length; i++) {
        if (i + 1 < w.length && w[i] === a && w[i + 1] === b) {
          nw.push(a + b);
          i++;
        } else nw.push(w[i]);
      }
      entry[0] = nw;
    }
  }
  return out;
}

function countWords(pieces) {
  const m = new Map();
  for (const p of pieces) m.set(p, (m.get(p) || 0) + 1);
  return m;
}

const text = fs.readFileSync(path.join(here, "train.txt"), "utf8");

// Byte-level: words as GPT-2 splits them, in the byte-level alphabet.
function byteLevelModel(nMerges) {
  const re = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
  const words = [...countWords(text.match(re))].map(([w, n]) => [[...Buffer.from(w, "utf8")].map((b) => B2C.get(b)), n]);
  const merges = train(words, nMerges);
  const vocab = {};
  let id = 0;
  for (let b = 0; b < 256; b++) vocab[B2C.get(b)] = id++;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = id++;
  return { vocab, merges };
}

// SentencePiece style: "▁" for spaces and before each word, characters of
// the text (the commonest 150 of them) as the alphabet, byte tokens.
function sentencePieceModel(nMerges, withBytes) {
  const words = [...countWords(text.split(/(?= )/u).map((w) => "▁" + w.trimStart().replaceAll(" ", "▁")))].map(([w, n]) => [[...w], n]);
  const charCount = new Map();
  for (const [w, n] of words) for (const c of w) charCount.set(c, (charCount.get(c) || 0) + n);
  const chars = [...charCount].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, 150).map((x) => x[0]);
  const known = new Set(chars);
  for (const entry of words) if (entry[0].some((c) => !known.has(c))) entry[1] = 0;
  const merges = train(words.filter((e) => e[1] > 0), nMerges);
  const vocab = { "<unk>": 0, "<s>": 1, "</s>": 2 };
  let id = 3;
  if (withBytes) for (let b = 0; b < 256; b++) vocab["<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">"] = id++;
  for (const c of chars) if (!(c in vocab)) vocab[c] = id++;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = id++;
  return { vocab, merges: merges.map(([a, b]) => a + " " + b) };
}

const tok = (id, content, o = {}) => ({ id, content, single_word: !!o.single_word, lstrip: !!o.lstrip, rstrip: !!o.rstrip,
  normalized: !!o.normalized, special: o.special !== false });
const template = (bos, id) => ({ type: "TemplateProcessing",
  single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
  pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
  special_tokens: { [bos]: { id: bos, ids: [id], tokens: [bos] } } });
const bpe = (m, o = {}) => ({ type: "BPE", dropout: null, unk_token: o.unk === undefined ? null : o.unk,
  continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: !!o.fuse_unk, byte_fallback: !!o.byte_fallback,
  ignore_merges: !!o.ignore_merges, vocab: m.vocab, merges: m.merges });
const file = (o) => ({ version: "1.0", truncation: null, padding: null, added_tokens: o.added || [],
  normalizer: o.normalizer || null, pre_tokenizer: o.pre || null, post_processor: o.post || null, decoder: o.decoder || null, model: o.model });
const spNormalizer = { type: "Sequence", normalizers: [{ type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] };
const spDecoder = { type: "Sequence", decoders: [{ type: "Replace", pattern: { String: "▁" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" }, { type: "Strip", content: " ", start: 1, stop: 0 }] };
const llama3Re = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const qwenRe = llama3Re.replace("\\p{N}{1,3}", "\\p{N}");
const byteLevelPre = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false };
const blDecoder = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false };
const split = (pattern, behavior, invert = false) => ({ type: "Split", pattern, behavior, invert });

function variants() {
  const sp = sentencePieceModel(400, true);
  const spN = Object.keys(sp.vocab).length;
  const spSmall = sentencePieceModel(200, false);
  const bl = byteLevelModel(600);
  const blN = Object.keys(bl.vocab).length;
  const spAdded = [tok(0, "<unk>"), tok(1, "<s>"), tok(2, "</s>")];
  const v = {};
  v["sp"] = { json: file({ added: [...spAdded, tok(spN, "<mask>", { lstrip: true, rstrip: true, single_word: true, special: false }),
    tok(spN + 1, "ADDED", { normalized: true, special: false }), tok(spN + 2, "[X]", { rstrip: true }), tok(spN + 3, "<|x|>", { lstrip: true })],
    normalizer: spNormalizer, post: template("<s>", 1), decoder: spDecoder, model: bpe(sp, { unk: "<unk>", fuse_unk: true, byte_fallback: true }) }),
    config: { tokenizer_class: "LlamaTokenizer", bos_token: "<s>", eos_token: "</s>", add_bos_token: true, add_eos_token: false } };
  v["sp-unk"] = { json: file({ added: spAdded, normalizer: spNormalizer, post: template("<s>", 1), decoder: spDecoder,
    model: bpe(spSmall, { unk: "<unk>", fuse_unk: false }) }) };
  v["sp-unk-fused"] = { json: file({ added: spAdded, normalizer: spNormalizer, decoder: spDecoder, model: bpe(spSmall, { unk: "<unk>", fuse_unk: true }) }) };
  v["sp-no-unk"] = { json: file({ added: spAdded, normalizer: spNormalizer, decoder: spDecoder, model: bpe(spSmall, {}) }) };
  v["sp-regex-replace"] = { json: file({ added: spAdded, decoder: spDecoder, model: bpe(sp, { unk: "<unk>", byte_fallback: true }),
    normalizer: { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Replace", pattern: { Regex: "\\s+" }, content: " " },
      { type: "Prepend", prepend: "▁" }, { type: "Replace", pattern: { String: " " }, content: "▁" }] } }) };
  const blAdded = [tok(blN, "<|begin|>"), tok(blN + 1, "<|end|>"), tok(blN + 2, "<tool>", { lstrip: true, rstrip: true, special: false }),
    tok(blN + 3, "<|end|>x", { single_word: true })];
  v["bl-llama3"] = { json: file({ added: blAdded, pre: { type: "Sequence", pretokenizers: [split({ Regex: llama3Re }, "Isolated"), byteLevelPre] },
    post: { type: "Sequence", processors: [{ type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true }, template("<|begin|>", blN)] },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true }, model: bpe(bl, { ignore_merges: true }) }),
    config: { tokenizer_class: "PreTrainedTokenizerFast", bos_token: "<|begin|>", eos_token: "<|end|>" } };
  v["bl-qwen"] = { json: file({ added: blAdded, normalizer: { type: "NFC" }, pre: { type: "Sequence", pretokenizers: [split({ Regex: qwenRe }, "Isolated"), byteLevelPre] },
    post: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false }, model: bpe(bl, {}) }),
    config: { tokenizer_class: "Qwen2Tokenizer", bos_token: null, eos_token: "<|end|>", split_special_tokens: false } };
  v["bl-gpt2-split-nfkd"] = { json: file({ normalizer: { type: "NFKD" }, pre: { type: "Sequence", pretokenizers: [{ type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true }] },
    decoder: blDecoder, model: bpe(bl, {}) }) };
  // Digits before GPT-2's ByteLevel split, as SmolLM2 (Llama's
  // architecture) has it, and its other form (runs of digits together).
  for (const [name, individual] of [["bl-digits", true], ["bl-digits-runs", false]]) {
    v[name] = { json: file({ added: blAdded, pre: { type: "Sequence", pretokenizers: [{ type: "Digits", individual_digits: individual },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true }] },
      decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true }, model: bpe(bl, {}) }) };
  }
  // Falcon3's (Llama's architecture): Punctuation, GPT-2's ByteLevel split,
  // then Digits on the byte-level characters (which cuts the bytes of ² and
  // of the characters whose UTF-8 holds 0xB2, as β's does); and the other
  // Punctuation behaviors.
  v["bl-falcon3"] = { json: file({ added: blAdded, pre: { type: "Sequence", pretokenizers: [{ type: "Punctuation", behavior: "Contiguous" },
    { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true }, { type: "Digits", individual_digits: true }] },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true }, model: bpe(bl, {}) }) };
  v["bl-punctuation"] = { json: file({ pre: { type: "Sequence", pretokenizers: [{ type: "Punctuation" },
    { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false }, { type: "Digits", individual_digits: false }] },
    decoder: blDecoder, model: bpe(bl, {}) }) };
  // DeepSeek LLM's (Llama's architecture): Splits with long classes and
  // \s+$ (Oniguruma's '$' ends a line), Digits, ByteLevel without its split.
  v["bl-deepseek-llm"] = { json: file({ added: blAdded, normalizer: { type: "Sequence", normalizers: [] }, pre: { type: "Sequence", pretokenizers: [
    split({ Regex: "[\r\n]" }, "Isolated"),
    split({ Regex: "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\ud801\udc00-\ud801\udc4f\ud801\udcb0-\ud801\udcd3\ud801\udcd8-\ud801\udcfb\ud803\udc80-\ud803\udcb2\ud803\udcc0-\ud803\udcf2\ud806\udca0-\ud806\udcdf\ud83a\udd00-\ud83a\udd43]+" }, "Isolated"),
    split({ Regex: "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+" }, "Isolated"),
    split({ Regex: "\\s+$" }, "Isolated"),
    split({ Regex: "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+" }, "Isolated"),
    { type: "Digits", individual_digits: true }, byteLevelPre] },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true }, model: bpe(bl, {}) }) };
  // '$' where a line ends inside the text (the Splits above cut at '\n' first).
  v["bl-split-eol"] = { json: file({ pre: { type: "Sequence", pretokenizers: [split({ Regex: "\\s+$" }, "Isolated"), byteLevelPre] },
    decoder: blDecoder, model: bpe(bl, {}) }) };
  // Metaspace (newer conversions of Llama 2-style files, Mistral 7B v0.3):
  // every prepend_scheme with and without split, the pre-tokenizer alone
  // (no normalizer), with the full set of added tokens; decoded by a
  // Metaspace decoder of the same scheme, or (Mistral's) by spDecoder.
  const metaspace = (scheme, cut) => ({ type: "Metaspace", replacement: "▁", prepend_scheme: scheme, split: cut });
  for (const scheme of ["first", "always", "never"]) {
    for (const cut of [true, false]) {
      const name = "ms-" + scheme + (cut ? "-split" : "");
      const mistral = scheme === "first" && !cut;
      v[name] = { json: file({ added: v["sp"].json.added_tokens, pre: metaspace(scheme, cut), post: template("<s>", 1),
        decoder: mistral ? spDecoder : metaspace(scheme, cut), model: bpe(sp, { unk: "<unk>", fuse_unk: true, byte_fallback: true }) }),
        config: mistral ? { tokenizer_class: "LlamaTokenizerFast", bos_token: "<s>", eos_token: "</s>", add_bos_token: true, add_eos_token: false, legacy: false } : undefined };
    }
  }
  // The older forms: add_prefix_space alone (tokenizers before 0.14, as
  // SentencePieceBPETokenizer wrote it), with prepend_scheme (0.14-0.15,
  // with the old str_rep), and false with never.
  const older = { "ms-add-prefix-space": { replacement: "▁", add_prefix_space: true },
    "ms-add-prefix-space-first": { replacement: "▁", str_rep: "▁", add_prefix_space: true, prepend_scheme: "first" },
    "ms-no-prefix-space": { replacement: "▁", add_prefix_space: false, prepend_scheme: "never" } };
  for (const [name, o] of Object.entries(older)) {
    const c = { type: "Metaspace", ...o };
    v[name] = { json: file({ added: spAdded, pre: c, decoder: c, model: bpe(spSmall, { unk: "<unk>", fuse_unk: true }) }) };
  }
  // "first" after a normalizer that deletes the text's first characters
  // (Hugging Face then no longer counts the text as starting at offset 0),
  // and after a Split (only the piece at offset 0 is first).
  v["ms-first-deleted-start"] = { json: file({ added: spAdded, normalizer: { type: "Replace", pattern: { String: "#" }, content: "" },
    pre: metaspace("first", false), decoder: metaspace("first", false), model: bpe(sp, { unk: "<unk>", byte_fallback: true }) }) };
  v["ms-first-after-split"] = { json: file({ added: spAdded, pre: { type: "Sequence", pretokenizers: [split({ String: "." }, "Isolated"),
    metaspace("first", true)] }, decoder: metaspace("first", true), model: bpe(sp, { unk: "<unk>", byte_fallback: true }) }) };
  for (const behavior of ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]) {
    for (const invert of [false, true]) {
      const name = "bl-split-" + behavior + (invert ? "-invert" : "");
      v[name] = { json: file({ pre: { type: "Sequence", pretokenizers: [split({ Regex: "\\s+|[\\p{P}\\p{S}]" }, behavior, invert),
        split({ String: "an" }, behavior, invert), byteLevelPre] }, decoder: blDecoder, model: bpe(bl, {}) }) };
    }
  }
  return v;
}

// strings are the test texts: edge cases, the added tokens in every
// surrounding, and the lines of ../hostile.txt.
function strings() {
  const s = ["", " ", "  ", "\n", "a", " a", "Hello world", "Hello, world!", "hello   world  ", "I'm you're we'LL IT'S x'ſx",
    "123 4567 89012345 3.14 1,000", "tabs\tand\t\ttabs\t", "crlf\r\nline\r\n", "\r\n\r\n", "café naïve e\u0301 Å A\u030a ﬁ ① ｗｉｄｅ",
    "日本語のテキスト 中文", "Здравствуй, мир", "emoji 😀🎉👍🏽", "\u00a0nbsp\u00a0 x", "\u3000\u2028\u0085", "zero\u200bwidth",
    "<s>", "<s>x</s>", " <s> ", "a<s>b", "<unk>", "<mask>", " <mask> ", "a<mask>b", "x <mask>\ty", "a <mask>b", "<mask><mask>",
    "ADDED", "added", " ADDED x", "xADDED", "[X]   y", "[X]\n\nz", "a <|x|>", "a   <|x|> b", "<|x|><|x|>",
    "<|begin|>hi<|end|>", "<|end|>x", "a<|end|>x", "<|end|>xy", "<tool> a", "a  <tool>  b", "x<tool>y",
    "an banana and ananas", "a.b,c!d?e", "x - y -- z", "...!!!", "  leading and trailing  ",
    "▁", "▁▁a", "a ▁ b", "▁already spaced", "<s>hello world", "<s> hello", "hello<s>world", "x<s>y z", "<mask>x", "[X]x y",
    "<|x|>x", "   <|x|>x", "#a b", "a#b", "##", "# x", ".a b", "a.b c", "...", ". x",
    "a".repeat(70), "ab".repeat(40) + " " + "😀".repeat(10), " ".repeat(40) + "x", "1".repeat(40),
    // Characters whose Unicode data the Rust library's normalizers lack
    // (newer than theirs; the JavaScript implementation has it).
    "line  \nnext \t\n\n  end  ", "a \r\n b\u3000\n\u00a0", "x  \u2e43y\n\n\u2e52  \u061d  \u166d  \u{111c9}  \u{11a40}  \u2e3b  \u00a1", "αβγ x² ³¹ ¼½¾ 12.5% a,b;c!! $x+y=z^2 |~| «q» — ‘q’ … ¿¡ 㐀²", "x1 23 456 7890 1.5 x12y ٣٤ ²³ ½ Ⅻ ①② ３４ 12,345 a-1 \u{1d7ce}\u{1d7cf}",
    "marks \u0627\u0650\u0898\u064e NKo \u07ca\u07fd\u07eb a\u0301\u1abf \u{11935}\u{11930} \u{1fbf1}\u{1fbf2} \u32ff",
    // Characters of Unicode 15.1, 16.0 and 17.0, which Go's unicode (15.0)
    // lacks: CJK Extension I, Garay letters (with case), digits and marks,
    // Kirat Rai, Ol Onal and outlined digits, Tolong Siki digits and a
    // Tangut numeral (17.0: Rust's is_numeric has them, Oniguruma not), new
    // punctuation and symbols; before a contraction, which a letter or digit
    // leaves whole and another character takes its quote from; beside the
    // added tokens with single_word.
    "x\u{2ebf0}'s \u{10d4a}'s \u{10d50}\u{10d70}'ll \u{16d43}'d \u{10d40}'s \u{16d70}'re \u{1ccf0}'m \u{1e5f1}'ve \u{11de0}'s \u{16ff4}'t \u{10d69}'s \u{2ebf0}1 \u{10d40}\u{10d41}7",
    "\u2ffc\u2ffd'd \u31ef!! \u1b4e\u1b4f. \u{1cc00}\u{1cc01}$ \u{10d6e}- \u{10d8e}+ \u1b4e's \u2ffc's a\u{1171e}\u{11700} \u{113b8}\u{113c2}ok \u{105c0}\u{105c1}",
    "\u{10d50}<|end|>x \u{2ebf0}<|end|>xy <|end|>x\u{10d70} \u{11de0}<|end|>x \u{10d50}<mask> y \u{1c89}\u{1c8a} \ua7cb\ua7dc"];
  const hostile = fs.readFileSync(path.join(here, "..", "hostile.txt"), "utf8");
  return s.concat(hostile.split("\n"));
}

async function main() {
  const out = {};
  const texts = strings();
  for (const [name, v] of Object.entries(variants())) {
    const dir = path.join(here, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(v.json) + "\n");
    const cfgPath = path.join(dir, "tokenizer_config.json");
    if (v.config) fs.writeFileSync(cfgPath, JSON.stringify(v.config, null, 1) + "\n");
    else if (fs.existsSync(cfgPath)) fs.unlinkSync(cfgPath);
    const r = rust.Tokenizer.fromFile(path.join(dir, "tokenizer.json"));
    let j = null;
    let jsError = null;
    try {
      j = new js.Tokenizer(v.json, v.config || {});
    } catch (e) {
      jsError = String(e);
    }
    const cases = [];
    for (const t of texts) {
      const ids = (await r.encode(t, null, { addSpecialTokens: true })).getIds();
      const c = { text: t, ids };
      const decoded = await r.decode(ids, false); // transformers' decode(ids): special tokens kept
      if (decoded !== t) c.decoded = decoded;
      if (j) {
        try {
          const jids = j.encode(t, { add_special_tokens: true }).ids;
          if (JSON.stringify(jids) !== JSON.stringify(ids)) c.js = jids;
        } catch (e) {
          c.js_error = String(e);
        }
      }
      cases.push(c);
    }
    out[name] = { js_error: jsError, cases };
  }
  fs.writeFileSync(path.join(here, "goldens.json"), JSON.stringify(out, null, 0).replaceAll('{"text"', '\n{"text"') + "\n");
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
