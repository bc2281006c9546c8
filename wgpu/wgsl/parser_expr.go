package wgsl

// expr parses an expression following the WGSL grammar, which forbids mixing
// bitwise operators with other binary operators, and relational chaining,
// without parentheses.
func (p *parser) expr() expr {
	p.enter()
	defer p.leave()
	lhs := p.unary()
	if t := p.tok(); t.kind == tPunct && (t.text == "&" || t.text == "|" || t.text == "^") {
		op := t.text
		for p.is(op) {
			pos := p.next().pos
			lhs = p.binary(pos, op, lhs, p.unary())
		}
		if t := p.tok(); t.kind == tPunct && isBinaryOp(t.text) && !p.closesTemplate() {
			p.fail(t.pos, "mixing '%s' with '%s' requires parentheses", op, t.text)
		}
		return lhs
	}
	lhs = p.relationalFrom(lhs)
	if p.is("&&") || p.is("||") {
		op := p.tok().text
		for p.is(op) {
			pos := p.next().pos
			lhs = p.binary(pos, op, lhs, p.relationalFrom(p.unary()))
		}
		if p.is("&&") || p.is("||") {
			p.fail(p.tok().pos, "mixing '&&' and '||' requires parentheses")
		}
	}
	return lhs
}

// binary builds x op y from the operator's token text; it ends where y does.
func (p *parser) binary(pos int, op string, x, y expr) *binaryExpr {
	return &binaryExpr{Pos: pos, End: y.exprEnd(), Op: binaryOps[op], X: x, Y: y}
}

func isBinaryOp(s string) bool {
	switch s {
	case "+", "-", "*", "/", "%", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&&", "||", "&", "|", "^":
		return true
	}
	return false
}

// closesTemplate reports whether the current '>' token would close a template list.
func (p *parser) closesTemplate() bool {
	if p.noGT == 0 {
		return false
	}
	t := p.tok()
	return t.kind == tPunct && (t.text == ">" || t.text == ">>" || t.text == ">=" || t.text == ">>=")
}

func (p *parser) relationalFrom(lhs expr) expr {
	lhs = p.shiftFrom(lhs)
	t := p.tok()
	if t.kind == tPunct && !p.closesTemplate() {
		switch t.text {
		case "<", ">", "<=", ">=", "==", "!=":
			p.next()
			rhs := p.shiftFrom(p.unary())
			lhs = p.binary(t.pos, t.text, lhs, rhs)
			if t2 := p.tok(); t2.kind == tPunct && !p.closesTemplate() {
				switch t2.text {
				case "<", ">", "<=", ">=", "==", "!=":
					p.fail(t2.pos, "comparisons cannot be chained; use parentheses")
				}
			}
		}
	}
	return lhs
}

func (p *parser) shiftFrom(lhs expr) expr {
	if t := p.tok(); t.kind == tPunct && (t.text == "<<" || t.text == ">>" && !p.closesTemplate()) {
		p.next()
		return p.binary(t.pos, t.text, lhs, p.unary())
	}
	// additive over multiplicative
	lhs = p.multiplicativeFrom(lhs)
	for p.is("+") || p.is("-") || p.is("--") && startsOperand(p.peek(1)) {
		t := p.next()
		if t.text == "--" {
			// 'a--b' is 'a - -b': the second minus starts the operand.
			p.i--
			p.toks[p.i] = token{tPunct, "-", t.pos + 1}
			t.text = "-"
		}
		lhs = p.binary(t.pos, t.text, lhs, p.multiplicativeFrom(p.unary()))
	}
	return lhs
}

func (p *parser) multiplicativeFrom(lhs expr) expr {
	for p.is("*") || p.is("/") || p.is("%") {
		t := p.next()
		lhs = p.binary(t.pos, t.text, lhs, p.unary())
	}
	return lhs
}

func (p *parser) unary() expr {
	t := p.tok()
	if t.kind == tPunct {
		switch t.text {
		case "-", "!", "~", "&", "*":
			p.enter()
			defer p.leave()
			p.next()
			x := p.unary()
			return &unaryExpr{Pos: t.pos, End: p.end, Op: unaryOps[t.text], X: x}
		case "--":
			// WGSL tokenizes by context: here '--' is two minus signs.
			p.toks[p.i] = token{tPunct, "-", t.pos + 1}
			p.enter()
			defer p.leave()
			x := p.unary()
			return &unaryExpr{Pos: t.pos, End: p.end, Op: opNeg, X: x}
		case "&&":
			// '&&x' is '&(&x)', which WGSL rejects anyway; say so plainly.
			p.fail(t.pos, "cannot take the address of an address")
		}
	}
	return p.postfix(p.primary())
}

func (p *parser) primary() expr {
	t := p.tok()
	switch t.kind {
	case tInt, tFloat:
		p.next()
		return &lit{Pos: t.pos, End: p.end, Kind: t.kind, Text: t.text}
	case tKeyword:
		if t.text == "true" || t.text == "false" {
			p.next()
			return &lit{Pos: t.pos, End: p.end, Kind: tKeyword, Text: t.text}
		}
	case tIdent:
		name, pos := p.ident()
		id := &ident{Pos: pos, Name: name}
		if p.is("<") && templated[name] {
			id.Args = p.templateArgs()
		}
		id.End = p.end
		if p.is("(") {
			args := p.callArgs()
			return &callExpr{Pos: pos, End: p.end, Fn: id, Args: args}
		}
		return id
	case tPunct:
		if t.text == "(" {
			p.next()
			save := p.noGT
			p.noGT = 0
			x := p.expr()
			p.noGT = save
			p.expect(")")
			return &parenExpr{Pos: t.pos, End: p.end, X: x}
		}
	}
	p.fail(t.pos, "expected expression, found %s", describe(t))
	return nil
}

func (p *parser) callArgs() []expr {
	p.expect("(")
	save := p.noGT
	p.noGT = 0
	defer func() { p.noGT = save }()
	var args []expr
	for !p.is(")") {
		args = append(args, p.expr())
		if !p.got(",") {
			break
		}
	}
	p.expect(")")
	return args
}

func (p *parser) postfix(x expr) expr {
	for {
		switch {
		case p.is("["):
			pos := p.next().pos
			save := p.noGT
			p.noGT = 0
			i := p.expr()
			p.noGT = save
			p.expect("]")
			x = &indexExpr{Pos: pos, End: p.end, X: x, Index: i}
		case p.is("."):
			p.next()
			t := p.tok()
			if t.kind != tIdent {
				p.fail(t.pos, "expected member name after '.', found %s", describe(t))
			}
			p.next()
			x = &memberExpr{Pos: t.pos, End: p.end, X: x, Name: t.text}
		default:
			return x
		}
	}
}

// startsOperand reports a token that can begin a unary expression.
func startsOperand(t token) bool {
	switch t.kind {
	case tIdent, tInt, tFloat:
		return true
	case tKeyword:
		return t.text == "true" || t.text == "false"
	case tPunct:
		switch t.text {
		case "(", "-", "--", "!", "~", "&", "*":
			return true
		}
	}
	return false
}
