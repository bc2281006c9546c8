package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// node is a generic XML element; chardata children have an empty Name.
type node struct {
	Name string
	Attr map[string]string
	Kids []*node
	Text string
}

func parseXML(r io.Reader) (*node, error) {
	dec := xml.NewDecoder(r)
	root := &node{Name: "#root"}
	stack := []*node{root}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{Name: t.Name.Local, Attr: map[string]string{}}
			for _, a := range t.Attr {
				n.Attr[a.Name.Local] = a.Value
			}
			top.Kids = append(top.Kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.Kids = append(top.Kids, &node{Text: string(t)})
		}
	}
}

// text is the concatenated character data of n and its descendants, comments excluded.
func (n *node) text() string {
	if n.Name == "" {
		return n.Text
	}
	if n.Name == "comment" {
		return ""
	}
	var b strings.Builder
	for _, k := range n.Kids {
		b.WriteString(k.text())
	}
	return b.String()
}

func (n *node) child(name string) *node {
	for _, k := range n.Kids {
		if k.Name == name {
			return k
		}
	}
	return nil
}

func (n *node) all(name string) []*node {
	var out []*node
	for _, k := range n.Kids {
		if k.Name == name {
			out = append(out, k)
		}
	}
	return out
}

// forVulkan reports whether an element applies to the Vulkan API (not only Vulkan SC).
func forVulkan(n *node) bool {
	api, ok := n.Attr["api"]
	if !ok {
		return true
	}
	for _, a := range strings.Split(api, ",") {
		if a == "vulkan" {
			return true
		}
	}
	return false
}

// decl is a C declaration of a struct member or command parameter.
type decl struct {
	Name    string
	Type    string   // C type name, e.g. uint32_t or VkBufferCreateInfo
	Ptr     int      // pointer depth
	Const   bool     // pointee is const
	Arrays  []string // array dimensions, literal or API constant name
	Values  string   // for sType: the VK_STRUCTURE_TYPE_* it must hold
	Comment string
}

var (
	bitfieldRE      = regexp.MustCompile(`:\s*\d+`)
	headerVersionRE = regexp.MustCompile(`#define VK_HEADER_VERSION (\d+)`)
)

func parseDecl(n *node) (decl, error) {
	var d decl
	d.Values = n.Attr["values"]
	seenName := false
	for _, k := range n.Kids {
		switch k.Name {
		case "type":
			d.Type = k.text()
		case "name":
			d.Name = k.text()
			seenName = true
		case "enum":
			if seenName {
				d.Arrays = append(d.Arrays, k.text())
			}
		case "comment":
			d.Comment = strings.TrimSpace(k.text())
		case "":
			t := k.Text
			if !seenName {
				d.Ptr += strings.Count(t, "*")
				if strings.Contains(t, "const") {
					d.Const = true
				}
				continue
			}
			if bitfieldRE.MatchString(t) {
				return d, fmt.Errorf("%s: bit fields are not supported", d.Name)
			}
			for _, m := range regexp.MustCompile(`\[(\d+)\]`).FindAllStringSubmatch(t, -1) {
				d.Arrays = append(d.Arrays, m[1])
			}
		}
	}
	if d.Name == "" || d.Type == "" {
		return d, fmt.Errorf("cannot parse declaration %q", n.text())
	}
	return d, nil
}

// typeDef is one <type> of the registry.
type typeDef struct {
	Name        string
	Category    string // handle, struct, union, enum, bitmask, basetype, funcpointer, ...
	Alias       string
	Dispatch    bool   // handle: dispatchable (pointer-sized)
	Base        string // bitmask: VkFlags or VkFlags64; basetype: underlying C type
	Bits        string // bitmask: the FlagBits enum it takes its values from
	Members     []decl // struct
	ReturnedOnl bool
}

// enumVal is one named value of an enum or bitmask.
type enumVal struct {
	Name  string
	Value int64
	Alias string
}

// command is one <command>.
type command struct {
	Name   string
	Return string
	Params []decl
	Alias  string
}

// registry is the parsed subset of vk.xml the generator needs.
type registry struct {
	Types    map[string]*typeDef
	Enums    map[string][]enumVal // enum type name -> values, extension values included
	Consts   map[string]string    // API constants: name -> C value text
	Commands map[string]*command
	Core11   map[string]bool // commands in VK_VERSION_1_0 or VK_VERSION_1_1
	// ProvidedBy lists, per type name, the features (VK_VERSION_1_2) and extensions (VK_KHR_cooperative_matrix)
	// whose <require> names it: a C header declares the type when it defines any of these macros.
	ProvidedBy map[string][]string
	Tags       []string // vendor tags, e.g. KHR, EXT
	Version    string   // VK_HEADER_VERSION
}

func loadRegistry(root *node) (*registry, error) {
	reg := &registry{Types: map[string]*typeDef{}, Enums: map[string][]enumVal{}, Consts: map[string]string{},
		Commands: map[string]*command{}, Core11: map[string]bool{}, ProvidedBy: map[string][]string{}}
	top := root.child("registry")
	if top == nil {
		return nil, fmt.Errorf("no <registry> element")
	}
	if tags := top.child("tags"); tags != nil {
		for _, t := range tags.all("tag") {
			reg.Tags = append(reg.Tags, t.Attr["name"])
		}
	}
	for _, types := range top.all("types") {
		for _, t := range types.all("type") {
			if !forVulkan(t) {
				continue
			}
			if m := headerVersionRE.FindStringSubmatch(t.text()); m != nil && t.Attr["category"] == "define" {
				reg.Version = m[1]
			}
			if err := reg.addType(t); err != nil {
				return nil, err
			}
		}
	}
	for _, es := range top.all("enums") {
		name := es.Attr["name"]
		for _, e := range es.all("enum") {
			if !forVulkan(e) {
				continue
			}
			if name == "API Constants" {
				if e.Attr["alias"] == "" {
					reg.Consts[e.Attr["name"]] = e.Attr["value"]
				}
				continue
			}
			v, err := enumValue(e, 0)
			if err != nil {
				return nil, fmt.Errorf("enum %s: %w", e.Attr["name"], err)
			}
			reg.Enums[name] = append(reg.Enums[name], v)
		}
	}
	for _, cs := range top.all("commands") {
		for _, c := range cs.all("command") {
			if !forVulkan(c) {
				continue
			}
			if err := reg.addCommand(c); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range top.all("feature") {
		if !forVulkan(f) {
			continue
		}
		core11 := f.Attr["name"] == "VK_VERSION_1_0" || f.Attr["name"] == "VK_VERSION_1_1"
		if err := reg.addRequires(f, 0, core11); err != nil {
			return nil, err
		}
	}
	if exts := top.child("extensions"); exts != nil {
		for _, x := range exts.all("extension") {
			if !supportedByVulkan(x.Attr["supported"]) {
				continue
			}
			num, _ := strconv.Atoi(x.Attr["number"])
			if err := reg.addRequires(x, num, false); err != nil {
				return nil, err
			}
		}
	}
	return reg, nil
}

func (reg *registry) addType(t *node) error {
	name := t.Attr["name"]
	if name == "" {
		if n := t.child("name"); n != nil {
			name = n.text()
		}
	}
	if name == "" {
		return nil
	}
	td := &typeDef{Name: name, Category: t.Attr["category"], Alias: t.Attr["alias"]}
	switch td.Category {
	case "handle":
		if td.Alias == "" {
			tn := t.child("type")
			td.Dispatch = tn != nil && tn.text() == "VK_DEFINE_HANDLE"
		}
	case "bitmask":
		if tn := t.child("type"); tn != nil {
			td.Base = tn.text()
		}
		td.Bits = t.Attr["requires"]
		if td.Bits == "" {
			td.Bits = t.Attr["bitvalues"]
		}
	case "basetype":
		if tn := t.child("type"); tn != nil {
			td.Base = tn.text()
		}
	case "struct", "union":
		td.ReturnedOnl = t.Attr["returnedonly"] == "true"
		for _, m := range t.all("member") {
			if !forVulkan(m) {
				continue
			}
			d, err := parseDecl(m)
			if err != nil {
				if td.Category == "struct" {
					// Reported only if the struct is used.
					td.Category = "unsupported: " + err.Error()
					break
				}
				return fmt.Errorf("%s: %w", name, err)
			}
			td.Members = append(td.Members, d)
		}
	}
	if old, ok := reg.Types[name]; ok && old.Category != "" && td.Category == "" {
		return nil
	}
	reg.Types[name] = td
	return nil
}

func (reg *registry) addCommand(c *node) error {
	if alias := c.Attr["alias"]; alias != "" {
		reg.Commands[c.Attr["name"]] = &command{Name: c.Attr["name"], Alias: alias}
		return nil
	}
	proto := c.child("proto")
	if proto == nil {
		return fmt.Errorf("command without proto")
	}
	pd, err := parseDecl(proto)
	if err != nil {
		return err
	}
	cmd := &command{Name: pd.Name, Return: pd.Type}
	if pd.Ptr != 0 {
		return fmt.Errorf("%s: pointer return", pd.Name)
	}
	for _, p := range c.all("param") {
		if !forVulkan(p) {
			continue
		}
		d, err := parseDecl(p)
		if err != nil {
			return fmt.Errorf("%s: %w", cmd.Name, err)
		}
		cmd.Params = append(cmd.Params, d)
	}
	reg.Commands[cmd.Name] = cmd
	return nil
}

// supportedByVulkan reports whether an extension's supported attribute ("vulkan", "vulkan,vulkansc", "vulkansc",
// "disabled") names the Vulkan API itself.
func supportedByVulkan(supported string) bool {
	for _, a := range strings.Split(supported, ",") {
		if a == "vulkan" {
			return true
		}
	}
	return false
}

// addRequires records enum values that features and extensions add to existing enums, and which of them provide
// each type.
func (reg *registry) addRequires(f *node, extNumber int, core11 bool) error {
	for _, rq := range f.all("require") {
		if !forVulkan(rq) {
			continue
		}
		for _, t := range rq.all("type") {
			name, by := t.Attr["name"], f.Attr["name"]
			if !slices.Contains(reg.ProvidedBy[name], by) {
				reg.ProvidedBy[name] = append(reg.ProvidedBy[name], by)
			}
		}
		for _, e := range rq.all("enum") {
			ext := e.Attr["extends"]
			if ext == "" || !forVulkan(e) {
				continue
			}
			v, err := enumValue(e, extNumber)
			if err != nil {
				return fmt.Errorf("enum %s: %w", e.Attr["name"], err)
			}
			dup := false
			for _, old := range reg.Enums[ext] {
				if old.Name == v.Name {
					dup = true
				}
			}
			if !dup {
				reg.Enums[ext] = append(reg.Enums[ext], v)
			}
		}
		if core11 {
			for _, c := range rq.all("command") {
				reg.Core11[c.Attr["name"]] = true
			}
		}
	}
	return nil
}

func enumValue(e *node, extNumber int) (enumVal, error) {
	v := enumVal{Name: e.Attr["name"], Alias: e.Attr["alias"]}
	switch {
	case v.Alias != "":
	case e.Attr["bitpos"] != "":
		b, err := strconv.Atoi(e.Attr["bitpos"])
		if err != nil {
			return v, err
		}
		v.Value = 1 << b
	case e.Attr["offset"] != "":
		off, err := strconv.Atoi(e.Attr["offset"])
		if err != nil {
			return v, err
		}
		num := extNumber
		if s := e.Attr["extnumber"]; s != "" {
			if num, err = strconv.Atoi(s); err != nil {
				return v, err
			}
		}
		v.Value = 1000000000 + int64(num-1)*1000 + int64(off)
		if e.Attr["dir"] == "-" {
			v.Value = -v.Value
		}
	case e.Attr["value"] != "":
		n, err := strconv.ParseInt(e.Attr["value"], 0, 64)
		if err != nil {
			return v, err
		}
		v.Value = n
	default:
		return v, fmt.Errorf("no value")
	}
	return v, nil
}

// resolve follows type aliases.
func (reg *registry) resolve(name string) *typeDef {
	for range 8 {
		t := reg.Types[name]
		if t == nil || t.Alias == "" {
			return t
		}
		name = t.Alias
	}
	return nil
}
