//! Constants a plan is sized by, read from the statement: ROWNUM limits, CONNECT BY
//! LEVEL limits, FETCH FIRST and OFFSET counts; and the conjuncts of an AND.

use super::*;

/// Flattens a tree of ANDs.
pub(crate) fn split_and<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::Nested(inner) => split_and(inner, out),
        other => out.push(other),
    }
}

pub(super) fn is_ident(e: &ast::Expr, name: &str) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case(name))
}

/// `ROWNUM <= n`, `ROWNUM < n`, `n >= ROWNUM`, `n > ROWNUM`: the row limit n.
pub(crate) fn rownum_limit(e: &ast::Expr, f: &FunctionContext) -> Result<Option<u64>> {
    let ast::Expr::BinaryOp { left, op, right } = e else { return Ok(None) };
    let (op, bound) = if is_ident(left, "ROWNUM") {
        (op.clone(), right)
    } else if is_ident(right, "ROWNUM") {
        let flipped = match op {
            BinaryOperator::GtEq => BinaryOperator::LtEq,
            BinaryOperator::Gt => BinaryOperator::Lt,
            other => other.clone(),
        };
        (flipped, left)
    } else {
        return Ok(None);
    };
    let n = constant_int(bound, f, "ROWNUM")?;
    match op {
        BinaryOperator::LtEq => Ok(Some(n.max(0) as u64)),
        BinaryOperator::Lt => Ok(Some(n.saturating_sub(1).max(0) as u64)),
        _ => Err(unsupported("a ROWNUM condition other than ROWNUM < n or ROWNUM <= n".into(), e)),
    }
}

/// `LEVEL <= n` or `LEVEL < n` of the CONNECT BY row generator.
pub(super) fn level_limit(e: &ast::Expr, f: &FunctionContext) -> Result<i64> {
    if let ast::Expr::BinaryOp { left, op, right } = e
        && is_ident(left, "LEVEL")
    {
        {
            let n = constant_int(right, f, "CONNECT BY")?;
            match op {
                // Oracle's generator always returns its root row.
                BinaryOperator::LtEq => return Ok(n.max(1)),
                BinaryOperator::Lt => return Ok(n.saturating_sub(1).max(1)),
                _ => {}
            }
        }
    }
    Err(unsupported("CONNECT BY other than LEVEL <= n".into(), e))
}

/// A constant whole-number expression. Bind variables in it take this execution's values,
/// and the plan notes that it holds them ([`FunctionContext::taken`]).
pub(super) fn constant_int(e: &ast::Expr, f: &FunctionContext, context: &str) -> Result<i64> {
    let scope = Scope::default();
    let bound = Binder { scope: &scope, f, grouping: None, subqueries: None }.bind(e)?;
    // Constant when it reads no column and calls no function with effects (literals alone
    // were folded by the binder; what is left is bind variables and what uses them).
    let mut constant = true;
    bound.visit_nodes(&mut |e| match e {
        Expr::Column(_) => constant = false,
        Expr::Function { func, .. } if !func.is_deterministic() => constant = false,
        _ => {}
    });
    let value = match &bound {
        Expr::Literal(v) => v.clone(),
        _ if constant => {
            bound.visit_binds(&mut |slot| f.taken.borrow_mut().binds.push(slot));
            let mut values = FunctionContext::new(f.now(), 0);
            values.binds = f.binds.clone();
            let empty: &[Datum] = &[];
            bound.eval(empty, &mut values)?.into_owned()
        }
        _ => return Err(Error::value(context, format!("expects a constant, got {e}"))),
    };
    value.to_i64(context)?.ok_or_else(|| Error::value(context, "expects a number, got NULL"))
}

pub(super) fn constant_count(e: &ast::Expr, f: &FunctionContext, context: &str) -> Result<u64> {
    let n = constant_int(e, f, context)?;
    u64::try_from(n).map_err(|_| Error::value(context, format!("{n} is negative")))
}

pub(super) fn mentions_rownum(text: &str) -> bool {
    text.to_ascii_uppercase()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '#'))
        .any(|w| w == "ROWNUM")
}
