package wgsl

func (p *parser) leave() { p.depth-- }

func (p *parser) block() *blockStmt {
	p.enter()
	defer p.leave()
	attrs := p.attrs() // a compound statement may carry @diagnostic
	b := &blockStmt{Pos: p.expect("{")}
	if attrs != nil {
		p.stmtAttrs[b] = attrs
	}
	for !p.is("}") {
		if p.tok().kind == tEOF {
			p.fail(p.tok().pos, "expected '}', found end of file")
		}
		if s := p.stmt(); s != nil {
			b.Stmts = append(b.Stmts, s)
		}
	}
	p.expect("}")
	return b
}

func (p *parser) stmt() stmt {
	t := p.tok()
	if t.kind == tPunct && t.text == "@" {
		attrs := p.attrs()
		t = p.tok()
		if !(p.is("{") || p.is("if") || p.is("switch") || p.is("loop") || p.is("for") || p.is("while")) {
			p.fail(t.pos, "attributes may only precede a compound, if, switch, loop, for or while statement")
		}
		s := p.stmt()
		p.stmtAttrs[s] = attrs
		return s
	}
	switch {
	case p.got(";"):
		return nil
	case p.is("{"):
		return p.block()
	case p.is("var"):
		d := p.varDecl(nil)
		p.expect(";")
		return &declStmt{d}
	case p.is("let") || p.is("const"):
		d := p.valueDecl(nil)
		p.expect(";")
		return &declStmt{d}
	case p.is("override"):
		p.fail(t.pos, "'override' declarations are only allowed at module scope")
	case p.is("if"):
		return p.ifStmt()
	case p.is("for"):
		return p.forStmt()
	case p.is("while"):
		p.next()
		w := &whileStmt{Pos: t.pos, Cond: p.expr()}
		w.Body = p.block()
		return w
	case p.is("loop"):
		return p.loopStmt()
	case p.is("break"):
		p.next()
		if p.is("if") {
			p.fail(t.pos, "'break if' is only allowed as the last statement of a continuing block")
		}
		p.expect(";")
		return &breakStmt{t.pos}
	case p.is("continue"):
		p.next()
		p.expect(";")
		return &continueStmt{t.pos}
	case p.is("return"):
		p.next()
		r := &returnStmt{Pos: t.pos}
		if !p.is(";") {
			r.X = p.expr()
		}
		p.expect(";")
		return r
	case p.is("const_assert"):
		p.next()
		c := &constAssert{Pos: t.pos, Cond: p.expr()}
		p.expect(";")
		return c
	case p.is("switch"):
		return p.switchStmt()
	case p.is("discard"):
		p.fail(t.pos, "'discard' is only valid in fragment shaders, which this compiler does not support")
	case p.is("continuing"):
		p.fail(t.pos, "'continuing' is only allowed as the last statement of a loop body")
	}
	s := p.simpleStmt()
	p.expect(";")
	return s
}

// simpleStmt parses an assignment, increment, decrement or call (no semicolon).
func (p *parser) simpleStmt() stmt {
	t := p.tok()
	if p.is("_") {
		p.next()
		p.expect("=")
		return &assignStmt{Pos: t.pos, Op: opAssign, RHS: p.expr()}
	}
	if t.kind == tKeyword && (t.text == "var" || t.text == "let" || t.text == "const") {
		if t.text == "var" {
			return &declStmt{p.varDecl(nil)}
		}
		return &declStmt{p.valueDecl(nil)}
	}
	lhs := p.unary()
	op := p.tok()
	if op.kind == tPunct {
		switch op.text {
		case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=":
			p.next()
			return &assignStmt{Pos: op.pos, Op: assignOp(op.text), LHS: lhs, RHS: p.expr()}
		case "++", "--":
			p.next()
			return &incDecStmt{Pos: op.pos, Op: pick(op.text == "++", opInc, opDec), X: lhs}
		}
	}
	if c, ok := lhs.(*callExpr); ok {
		return &callStmt{c}
	}
	p.fail(op.pos, "expected assignment, increment or function call, found %s", describe(op))
	return nil
}

func (p *parser) ifStmt() *ifStmt {
	p.enter()
	defer p.leave()
	s := &ifStmt{Pos: p.expect("if")}
	s.Cond = p.expr()
	s.Then = p.block()
	if p.got("else") {
		if p.is("if") {
			s.Else = p.ifStmt()
		} else {
			s.Else = p.block()
		}
	}
	return s
}

func (p *parser) forStmt() *forStmt {
	s := &forStmt{Pos: p.expect("for")}
	p.expect("(")
	if !p.is(";") {
		s.Init = p.simpleStmt()
	}
	p.expect(";")
	if !p.is(";") {
		s.Cond = p.expr()
	}
	p.expect(";")
	if !p.is(")") {
		s.Update = p.simpleStmt()
		if _, ok := s.Update.(*declStmt); ok {
			p.fail(s.Update.stmtPos(), "a for loop's update may not declare a variable")
		}
	}
	p.expect(")")
	s.Body = p.block()
	return s
}

func (p *parser) loopStmt() *loopStmt {
	p.enter()
	defer p.leave()
	s := &loopStmt{Pos: p.expect("loop")}
	attrs := p.attrs()
	body := &blockStmt{Pos: p.expect("{")}
	if attrs != nil {
		p.stmtAttrs[body] = attrs
	}
	for !p.is("}") {
		if p.tok().kind == tEOF {
			p.fail(p.tok().pos, "expected '}', found end of file")
		}
		if p.is("continuing") {
			s.Continuing = p.continuing(s)
			if !p.is("}") {
				p.fail(p.tok().pos, "the continuing block must be the last statement of a loop")
			}
			break
		}
		if st := p.stmt(); st != nil {
			body.Stmts = append(body.Stmts, st)
		}
	}
	p.expect("}")
	s.Body = body
	return s
}

func (p *parser) continuing(l *loopStmt) *blockStmt {
	b := &blockStmt{Pos: p.expect("continuing")}
	p.expect("{")
	for !p.is("}") {
		if p.tok().kind == tEOF {
			p.fail(p.tok().pos, "expected '}', found end of file")
		}
		if p.is("break") && p.peek(1).kind == tKeyword && p.peek(1).text == "if" {
			l.BreakIfPos = p.next().pos
			p.next()
			l.BreakIf = p.expr()
			p.expect(";")
			if !p.is("}") {
				p.fail(p.tok().pos, "'break if' must be the last statement of a continuing block")
			}
			break
		}
		if p.is("return") {
			p.fail(p.tok().pos, "'return' is not allowed in a continuing block")
		}
		if st := p.stmt(); st != nil {
			b.Stmts = append(b.Stmts, st)
		}
	}
	p.expect("}")
	return b
}

func (p *parser) switchStmt() *switchStmt {
	p.enter()
	defer p.leave()
	s := &switchStmt{Pos: p.expect("switch")}
	s.Sel = p.expr()
	if attrs := p.attrs(); attrs != nil {
		// The switch body's filters cover its clauses; they are kept on the
		// switch, so they cover the selector too.
		p.stmtAttrs[s] = attrs
	}
	p.expect("{")
	for !p.is("}") {
		cl := &caseClause{Pos: p.tok().pos}
		switch {
		case p.got("default"):
			cl.Selectors = []expr{nil}
		case p.got("case"):
			for {
				if p.got("default") {
					cl.Selectors = append(cl.Selectors, nil)
				} else {
					cl.Selectors = append(cl.Selectors, p.expr())
				}
				if !p.got(",") || p.is(":") || p.is("{") {
					break
				}
			}
		default:
			p.fail(p.tok().pos, "expected 'case' or 'default', found %s", describe(p.tok()))
		}
		p.got(":")
		cl.Body = p.block()
		s.Clauses = append(s.Clauses, cl)
	}
	p.expect("}")
	return s
}
