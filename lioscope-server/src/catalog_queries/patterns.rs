//! PostgreSQL's regular expressions as LIKE patterns, where LIKE can say what one says:
//! psql's `\d` patterns (`^(emp.*)$`) and the `!~ '^pg_'` of its catalog queries. A
//! pattern that needs more (alternation, repetition, classes) has no LIKE pattern, and
//! the query is refused rather than matched wrongly.

/// A regular expression as a LIKE pattern (with `\` escaping), when it says exactly
/// what LIKE can: anchored at both ends (or open at one), literal characters, `.` and
/// `.*`, in an optional group. psql's patterns are of this form.
pub(super) fn like_of_regex(regex: &str) -> Option<String> {
    let (anchored_start, rest) = match regex.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, regex),
    };
    let (anchored_end, body) = match rest.strip_suffix('$') {
        Some(body) if !body.ends_with('\\') => (true, body),
        _ => (false, rest),
    };
    let body = body.strip_prefix('(').and_then(|b| b.strip_suffix(')')).unwrap_or(body);
    let mut like = String::new();
    if !anchored_start {
        like.push('%');
    }
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                like.push('%');
            }
            '.' => like.push('_'),
            '\\' => {
                let escaped = chars.next()?;
                if escaped.is_alphanumeric() {
                    return None;
                }
                push_literal(&mut like, escaped);
            }
            '*' | '+' | '?' | '[' | ']' | '(' | ')' | '{' | '}' | '|' | '^' | '$' => return None,
            c => push_literal(&mut like, c),
        }
    }
    if !anchored_end {
        like.push('%');
    }
    Some(like)
}

fn push_literal(like: &mut String, c: char) {
    if matches!(c, '%' | '_' | '\\') {
        like.push('\\');
    }
    like.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psql_patterns_become_like() {
        assert_eq!(like_of_regex("^(emp)$").as_deref(), Some("emp"));
        assert_eq!(like_of_regex("^(e.p.*)$").as_deref(), Some("e_p%"));
        assert_eq!(like_of_regex("^pg_toast").as_deref(), Some("pg\\_toast%"));
        assert_eq!(like_of_regex("^(a|b)$"), None, "an alternation LIKE cannot say");
        assert_eq!(like_of_regex("^x+$"), None);
    }
}
