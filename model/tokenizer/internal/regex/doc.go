// Package regex matches the regular expressions of Hugging Face
// tokenizer.json files (the patterns of their Split pre-tokenizers and
// Replace normalizers) as the tokenizers library does, which compiles them
// with Oniguruma: leftmost-first alternation, greedy quantifiers, Unicode
// classes, and lookahead, which Go's regexp lacks.
//
// The supported subset: literals and escaped symbols; \n \r \t \f \v \a \e
// \xHH (ASCII) \x{H...} \uHHHH; '.' (any rune but '\n'); classes [...] and
// [^...] with ranges; \s \S \d \D \w \W \h \H with Oniguruma's Unicode
// meanings; \p{..} \P{..} \p{^..} for the general categories (short and long
// names) and the scripts; groups (...) (?:...) (?<name>...), (?i:...),
// (?-i:...) and a leading (?i); lookahead (?=...) (?!...); '$' (the end of a
// line: before '\n' or at the end); quantifiers ? * + {m,n} {m,} {,n} {m},
// greedy or lazy (?). Anything else ('^' and the other anchors, word
// boundaries, lookbehind, atomic groups, possessive quantifiers,
// back-references, POSIX brackets, nested classes and intersections) is
// refused by Compile with an *Error naming it and its place, never matched
// differently. Case-insensitivity uses Unicode 16.0's simple case folding
// and, as in Oniguruma, applies to literals and bracketed classes, not to
// \p{..}, \w, \s, \d written outside brackets. The classes use Unicode
// 16.0's data (package ucd), as Oniguruma 6.9.10 does.
//
// The matcher backtracks, trying alternatives in priority order; greedy
// repetitions of one rune (\p{L}+, \s*) run without a backtracking entry per
// rune, so long runs cost time and memory linear in their length. A search
// that backtracks far more than the text is long goes on remembering the
// states that failed, which bounds its work by the program's size times the
// text's length.
//
// It imports only the standard library and package ucd (the Unicode 16.0
// tables Oniguruma 6.9.10 matches classes with).
package regex
