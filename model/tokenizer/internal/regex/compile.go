package regex

// opcode is what an instruction does.
type opcode uint8

const (
	opMatch    opcode = iota // the pattern has matched
	opRune                   // the rune r
	opRuneFold               // r or one of its case variants
	opClass                  // a rune of class
	opAny                    // any rune but '\n'
	opRun                    // a greedy run of min..max runes each matching one (class, r or any), longest first
	opSplit                  // go on at out; on failure, at arg
	opJmp                    // go on at out
	opLook                   // lookahead looks[arg] must match here (must not, when neg); consumes nothing
)

// inst is one instruction of a program.
type inst struct {
	op       opcode
	neg      bool
	one      opcode // opRun: what each rune must match (opRune, opRuneFold, opClass or opAny)
	r        rune
	out, arg int32
	min, max int // opRun: the run's bounds in runes (max -1: no bound)
	class    *charClass
}

// prog is a compiled pattern: instructions from start to an opMatch, and the
// programs of its lookaheads.
type prog struct {
	inst  []inst
	start int32
	looks []*prog
}

// maxInsts bounds a program's size (counted repetitions copy their body).
const maxInsts = 1 << 16

// compiler turns a syntax tree into a program.
type compiler struct {
	p    *prog
	root *prog // where lookahead programs are collected
	err  bool  // the program grew past maxInsts
}

func compile(n *node) (*prog, bool) {
	if size(n) > maxInsts {
		return nil, false
	}
	p := &prog{}
	c := &compiler{p: p, root: p}
	c.emitNode(n)
	c.emit(inst{op: opMatch})
	return p, !c.err
}

func (c *compiler) emit(in inst) int32 {
	if len(c.p.inst) >= maxInsts {
		c.err = true
		return int32(len(c.p.inst) - 1)
	}
	c.p.inst = append(c.p.inst, in)
	pc := int32(len(c.p.inst) - 1)
	if in.op != opSplit && in.op != opJmp {
		c.p.inst[pc].out = pc + 1
	}
	return pc
}

func (c *compiler) here() int32 { return int32(len(c.p.inst)) }

// size bounds the number of instructions n compiles to (saturating above
// maxInsts), so that nested counted repetitions are refused before they are
// expanded.
func size(n *node) int {
	total := 0
	switch n.kind {
	case nLit, nClass, nAny, nEmpty:
		return 1
	case nConcat:
		for _, s := range n.subs {
			total += size(s)
		}
	case nAlt:
		for _, s := range n.subs {
			total += size(s) + 2
		}
	case nLook:
		total = size(n.subs[0]) + 2
	case nRepeat:
		copies := max(n.min, n.max, 1) + 1
		total = copies * (size(n.subs[0]) + 2)
	}
	return min(total, maxInsts+1)
}

// single returns the instruction that matches one rune as n does, if n is
// a literal, a class or '.'.
func single(n *node) (inst, bool) {
	switch n.kind {
	case nLit:
		if n.fold {
			return inst{op: opRuneFold, r: n.r}, true
		}
		return inst{op: opRune, r: n.r}, true
	case nClass:
		return inst{op: opClass, class: n.class}, true
	case nAny:
		return inst{op: opAny}, true
	}
	return inst{}, false
}

// emitNode emits n so that control falls through to what follows it.
func (c *compiler) emitNode(n *node) {
	if c.err {
		return
	}
	if in, ok := single(n); ok {
		c.emit(in)
		return
	}
	switch n.kind {
	case nEmpty:
	case nConcat:
		for _, s := range n.subs {
			c.emitNode(s)
		}
	case nAlt:
		var jumps []int32
		for _, s := range n.subs[:len(n.subs)-1] {
			split := c.emit(inst{op: opSplit})
			c.p.inst[split].out = split + 1
			c.emitNode(s)
			jumps = append(jumps, c.emit(inst{op: opJmp}))
			c.p.inst[split].arg = c.here()
		}
		c.emitNode(n.subs[len(n.subs)-1])
		for _, j := range jumps {
			c.p.inst[j].out = c.here()
		}
	case nRepeat:
		c.emitRepeat(n)
	case nLook:
		sub := &compiler{p: &prog{}, root: c.root}
		sub.emitNode(n.subs[0])
		sub.emit(inst{op: opMatch})
		if sub.err {
			c.err = true
			return
		}
		c.root.looks = append(c.root.looks, sub.p)
		c.emit(inst{op: opLook, neg: n.neg, arg: int32(len(c.root.looks) - 1)})
	}
}

// emitRepeat emits x{min,max}: a run instruction when x matches one rune and
// the repetition is greedy, else min copies of x and then either a loop or
// max-min nested optional copies.
func (c *compiler) emitRepeat(n *node) {
	x := n.subs[0]
	if one, ok := single(x); ok && !n.lazy {
		c.emit(inst{op: opRun, one: one.op, r: one.r, class: one.class, min: n.min, max: n.max})
		return
	}
	for range n.min {
		c.emitNode(x)
	}
	// split prefers the body (greedy) or what follows (lazy); the other
	// branch is patched to exit.
	split := func() int32 {
		pc := c.emit(inst{op: opSplit})
		if n.lazy {
			c.p.inst[pc].arg = pc + 1
		} else {
			c.p.inst[pc].out = pc + 1
		}
		return pc
	}
	exit := func(pc int32) {
		if n.lazy {
			c.p.inst[pc].out = c.here()
		} else {
			c.p.inst[pc].arg = c.here()
		}
	}
	if n.max < 0 {
		loop := split()
		c.emitNode(x)
		j := c.emit(inst{op: opJmp})
		c.p.inst[j].out = loop
		exit(loop)
		return
	}
	var splits []int32
	for range n.max - n.min {
		splits = append(splits, split())
		c.emitNode(x)
	}
	for _, pc := range splits {
		exit(pc)
	}
}
