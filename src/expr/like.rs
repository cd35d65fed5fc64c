//! LIKE patterns, compiled once and matched many times: `%` any run of characters, `_`
//! any one character, an escape character making the character after it literal.
//!
//! A pattern without `_` is matched without backtracking: its literal runs between `%`s
//! are a *prefix* (unless it starts with `%`), a *suffix* (unless it ends with `%`) and
//! *middles*. A text matches exactly when it starts with the prefix, ends with the suffix
//! where that does not overlap the prefix, and holds the middles in order between them
//! without overlap, each found leftmost by a substring searcher built once
//! (`memchr::memmem`): the leftmost occurrence leaves the most text for the rest, so no
//! other choice can succeed where it fails. `'%special%requests%'` is two searches a
//! text. A pattern with `_` walks its parts, trying each place a `%` can end.
//!
//! Invariants: bytes and characters agree: the text and the literals are UTF-8, so a
//! byte prefix, suffix or occurrence of a literal always lies on character boundaries.
//! The NULL pattern (Oracle's `''` too) matches no text and fails no text: `x LIKE NULL`
//! and `x NOT LIKE NULL` are both UNKNOWN ([`LikePattern::matches`] is `None`).

use memchr::memmem::Finder;
use std::hash::{Hash, Hasher};

/// A LIKE pattern compiled once.
#[derive(Debug, Clone)]
pub struct LikePattern {
    /// The pattern as written (what plans show), with `%` runs and literals parsed into
    /// `parts`; `None` for the NULL pattern.
    source: Option<String>,
    parts: Vec<LikePart>,
    matcher: Matcher,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum LikePart {
    Literal(String),
    AnyOne,
    AnyRun,
}

/// How a pattern is matched.
#[derive(Debug, Clone)]
enum Matcher {
    /// The NULL pattern: nothing is known of any text.
    Null,
    /// No `%` and no `_`: the text equals the literal.
    Exact(String),
    /// `%` and literals: the text starts with `prefix`, ends with `suffix`, and holds the
    /// middles in order between them.
    Runs { prefix: String, middles: Vec<Finder<'static>>, suffix: String },
    /// With `_`: the parts walked with backtracking.
    Walk,
}

/// `text` after `prefix`, when it starts with it. An empty prefix (a pattern starting
/// with `%`) costs no call of `bcmp`, which a slice compare makes whatever its length.
#[inline(always)]
fn after_prefix<'t>(text: &'t [u8], prefix: &[u8]) -> Option<&'t [u8]> {
    if prefix.is_empty() { Some(text) } else { text.strip_prefix(prefix) }
}

/// `text` before `suffix`, when it ends with it; an empty suffix costs no call.
#[inline(always)]
fn before_suffix<'t>(text: &'t [u8], suffix: &[u8]) -> Option<&'t [u8]> {
    if suffix.is_empty() { Some(text) } else { text.strip_suffix(suffix) }
}

impl LikePattern {
    /// Compiles `pattern` (`None`: the NULL pattern) with `escape` as its escape
    /// character, if any.
    pub fn compile(pattern: Option<&str>, escape: Option<char>) -> LikePattern {
        let Some(pattern) = pattern else {
            return LikePattern { source: None, parts: Vec::new(), matcher: Matcher::Null };
        };
        let parts = parse(pattern, escape);
        LikePattern { source: Some(pattern.to_owned()), matcher: Matcher::of(&parts), parts }
    }

    /// Whether `text` matches: `None` for the NULL pattern (UNKNOWN).
    #[inline]
    pub fn matches(&self, text: &str) -> Option<bool> {
        Some(match &self.matcher {
            Matcher::Null => return None,
            Matcher::Exact(literal) => text == literal,
            Matcher::Runs { prefix, middles, suffix } => {
                let Some(rest) = after_prefix(text.as_bytes(), prefix.as_bytes()) else { return Some(false) };
                let Some(mut between) = before_suffix(rest, suffix.as_bytes()) else { return Some(false) };
                middles.iter().all(|finder| match finder.find(between) {
                    Some(at) => {
                        between = &between[at + finder.needle().len()..];
                        true
                    }
                    None => false,
                })
            }
            Matcher::Walk => walk(&self.parts, text),
        })
    }

    /// Whether this is the NULL pattern.
    pub fn is_null(&self) -> bool {
        matches!(self.matcher, Matcher::Null)
    }

    /// The literal text every matching string starts with (empty if none).
    pub fn literal_prefix(&self) -> String {
        match self.parts.first() {
            Some(LikePart::Literal(s)) => s.clone(),
            _ => String::new(),
        }
    }

    /// The pattern as written; `None` for the NULL pattern.
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }
}

/// Patterns are equal when they were written the same, escapes resolved.
impl PartialEq for LikePattern {
    fn eq(&self, other: &LikePattern) -> bool {
        self.is_null() == other.is_null() && self.parts == other.parts
    }
}

impl Eq for LikePattern {}

impl Hash for LikePattern {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.is_null().hash(state);
        self.parts.hash(state);
    }
}

/// `pattern`'s parts: literals with escapes resolved, each `%` run as one `AnyRun`.
fn parse(pattern: &str, escape: Option<char>) -> Vec<LikePart> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            c if Some(c) == escape => literal.extend(chars.next()),
            '%' | '_' => {
                if !literal.is_empty() {
                    parts.push(LikePart::Literal(std::mem::take(&mut literal)));
                }
                let part = if c == '%' { LikePart::AnyRun } else { LikePart::AnyOne };
                if !(part == LikePart::AnyRun && parts.last() == Some(&LikePart::AnyRun)) {
                    parts.push(part);
                }
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        parts.push(LikePart::Literal(literal));
    }
    parts
}

impl Matcher {
    fn of(parts: &[LikePart]) -> Matcher {
        if parts.contains(&LikePart::AnyOne) {
            return Matcher::Walk;
        }
        let literal = |part: Option<&LikePart>| match part {
            Some(LikePart::Literal(l)) => Some(l.clone()),
            _ => None,
        };
        if !parts.contains(&LikePart::AnyRun) {
            return Matcher::Exact(literal(parts.first()).unwrap_or_default());
        }
        let prefix = literal(parts.first()).unwrap_or_default();
        let suffix = literal(parts.last()).unwrap_or_default();
        // Between the first `%` and the last, every literal is a middle.
        let first_run = parts.iter().position(|p| *p == LikePart::AnyRun).expect("a % run");
        let last_run = parts.iter().rposition(|p| *p == LikePart::AnyRun).expect("a % run");
        let middles = parts[first_run..last_run]
            .iter()
            .filter_map(|p| match p {
                LikePart::Literal(l) => Some(Finder::new(l.as_bytes()).into_owned()),
                _ => None,
            })
            .collect();
        Matcher::Runs { prefix, middles, suffix }
    }
}

/// Whether `text` matches `parts`, trying every end of each `%` run.
fn walk(parts: &[LikePart], text: &str) -> bool {
    let Some((first, rest)) = parts.split_first() else { return text.is_empty() };
    match first {
        LikePart::Literal(l) => text.strip_prefix(l.as_str()).is_some_and(|t| walk(rest, t)),
        LikePart::AnyOne => {
            let mut cs = text.chars();
            cs.next().is_some() && walk(rest, cs.as_str())
        }
        LikePart::AnyRun => {
            if rest.is_empty() {
                return true;
            }
            text.char_indices().map(|(i, _)| i).chain([text.len()]).any(|i| walk(rest, &text[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn like(pattern: &str, text: &str) -> bool {
        LikePattern::compile(Some(pattern), Some('\\')).matches(text).expect("not the NULL pattern")
    }

    #[test]
    fn runs_and_single_characters() {
        assert!(like("%consistent%", "consistent gets"));
        assert!(like("%consistent%", "no work - consistent read gets"));
        assert!(!like("%consistent%", "db block gets"));
        assert!(like("a_c", "abc"));
        assert!(!like("a_c", "abbc"));
        assert!(like("100\\%", "100%"));
        assert!(!like("100\\%", "1000"));
        assert!(like("%", ""));
        assert!(like("%%", "x"));
        assert!(like("abc", "abc"));
        assert!(!like("abc", "abcd"));
        assert!(like("%special%requests%", "the special, quiet requests sleep"));
        assert!(!like("%special%requests%", "requests for special"));
        assert!(like("PROMO%", "PROMO BRUSHED TIN"));
        assert!(like("%BRASS", "LARGE POLISHED BRASS"));
        assert!(!like("%BRASS", "BRASS TIN"));
        // The prefix and the suffix may not share characters.
        assert!(!like("ab%ba", "aba"));
        assert!(like("ab%ba", "abba"));
        // A middle found once is not found again in the text after it.
        assert!(!like("%aa%aa%", "aaa"));
        assert!(like("%aa%aa%", "aaaa"));
        assert!(like("é%ü", "éaü"));
        assert!(like("_ü", "éü"));
    }

    #[test]
    fn the_null_pattern_is_unknown_for_every_text() {
        let null = LikePattern::compile(None, None);
        assert!(null.is_null());
        assert_eq!(null.matches("abc"), None);
        assert_eq!(null.matches(""), None);
        assert_eq!(null.source(), None);
    }

    #[test]
    fn patterns_written_the_same_are_equal() {
        assert_eq!(LikePattern::compile(Some("a%%b"), None), LikePattern::compile(Some("a%b"), None));
        assert_ne!(LikePattern::compile(Some("a%b"), None), LikePattern::compile(Some("a_b"), None));
        assert_ne!(LikePattern::compile(Some(""), None), LikePattern::compile(None, None));
    }

    proptest! {
        /// Matching without backtracking agrees with the walk over the parts, which
        /// tries every way a `%` run can end.
        #[test]
        fn runs_agree_with_the_walk(pattern in "[ab%]{0,7}", text in "[abc]{0,10}") {
            let compiled = LikePattern::compile(Some(&pattern), None);
            prop_assert_eq!(compiled.matches(&text), Some(walk(&compiled.parts, &text)));
        }
    }
}
