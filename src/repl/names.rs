//! `synchronous_standby_names`, parsed as PostgreSQL parses it:
//!
//! - `FIRST n (a, b, c)` (or the older `n (a, b, c)`): the `n` connected standbys that come
//!   first in the list are synchronous; the rest are potential ones that take over when
//!   one of them goes away.
//! - `ANY n (a, b, c)`: a commit waits for any `n` of the listed standbys.
//! - `a, b, c`: the same as `FIRST 1 (a, b, c)`.
//! - `*` matches every standby; names match `application_name` without regard to case,
//!   unquoted or `"quoted"`.
//! - An empty value: no synchronous standby; commits wait for the local flush only.

use crate::error::{Error, Result, SqlState};

/// How the synchronous standbys are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `FIRST n`: by priority, the position in the list.
    Priority,
    /// `ANY n`: any `n` of them.
    Quorum,
}

/// A parsed, non-empty `synchronous_standby_names`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncStandbys {
    pub method: Method,
    /// How many standbys a commit waits for (at least 1).
    pub num_sync: usize,
    /// The names, in priority order; `*` matches any.
    pub names: Vec<String>,
}

impl SyncStandbys {
    /// The priority of a standby named `application_name`: its 1-based place in the list
    /// (1 for every listed standby under `ANY`), or 0 for an asynchronous one.
    pub fn priority(&self, application_name: &str) -> u32 {
        let found = self
            .names
            .iter()
            .position(|n| n == "*" || n.eq_ignore_ascii_case(application_name));
        match (found, self.method) {
            (None, _) => 0,
            (Some(_), Method::Quorum) => 1,
            (Some(i), Method::Priority) => i as u32 + 1,
        }
    }
}

/// The longest value accepted, and the most names in it (every list has a limit).
const MAX_NAMES: usize = 1024;

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Number(usize),
    Open,
    Close,
    Comma,
}

fn invalid(value: &str, detail: &str) -> Error {
    Error::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("invalid value for parameter \"synchronous_standby_names\": \"{value}\""),
    )
    .with_detail(detail)
}

fn tokens(value: &str) -> Result<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = value.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | ',' => {
                chars.next();
                out.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Comma,
                });
            }
            '"' => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            s.push('"');
                        }
                        Some('"') => break,
                        Some(c) => s.push(c),
                        None => return Err(invalid(value, "unterminated quoted identifier")),
                    }
                }
                out.push(Token::Quoted(s));
            }
            '*' => {
                chars.next();
                out.push(Token::Word("*".into()));
            }
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let mut s = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_alphanumeric() || c == '_' || c == '$' {
                        s.push(c);
                        chars.next();
                    } else {
                        break;
                    }
                }
                match s.parse::<usize>() {
                    Ok(n) if s.bytes().all(|b| b.is_ascii_digit()) => out.push(Token::Number(n)),
                    _ => out.push(Token::Word(s)),
                }
            }
            _ => return Err(invalid(value, &format!("syntax error at or near \"{c}\""))),
        }
        if out.len() > 2 * MAX_NAMES + 8 {
            return Err(invalid(value, "too many standby names"));
        }
    }
    Ok(out)
}

/// Parse a value of `synchronous_standby_names`: `None` for an empty one.
pub fn parse(value: &str) -> Result<Option<SyncStandbys>> {
    let toks = tokens(value)?;
    if toks.is_empty() {
        return Ok(None);
    }
    let keyword = |t: &Token, k: &str| matches!(t, Token::Word(w) if w.eq_ignore_ascii_case(k));
    let (method, num_sync, list) = match toks.as_slice() {
        [first, Token::Number(n), Token::Open, rest @ .., Token::Close]
            if keyword(first, "first") =>
        {
            (Method::Priority, *n, rest)
        }
        [any, Token::Number(n), Token::Open, rest @ .., Token::Close] if keyword(any, "any") => {
            (Method::Quorum, *n, rest)
        }
        [Token::Number(n), Token::Open, rest @ .., Token::Close] => (Method::Priority, *n, rest),
        list => (Method::Priority, 1, list),
    };
    if num_sync == 0 {
        return Err(invalid(
            value,
            "number of synchronous standbys (0) must be greater than zero",
        ));
    }
    let mut names = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let want_name = i % 2 == 0;
        match (t, want_name) {
            (Token::Word(w), true) => names.push(w.to_lowercase()),
            (Token::Quoted(w), true) => names.push(w.clone()),
            (Token::Number(n), true) => names.push(n.to_string()),
            (Token::Comma, false) => {}
            (t, _) => {
                let near = match t {
                    Token::Open => "(".to_string(),
                    Token::Close => ")".to_string(),
                    Token::Comma => ",".to_string(),
                    Token::Word(w) | Token::Quoted(w) => w.clone(),
                    Token::Number(n) => n.to_string(),
                };
                return Err(invalid(
                    value,
                    &format!("syntax error at or near \"{near}\""),
                ));
            }
        }
    }
    if names.is_empty() || list.len() % 2 == 0 {
        return Err(invalid(value, "syntax error at end of input"));
    }
    Ok(Some(SyncStandbys {
        method,
        num_sync,
        names,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &str) -> SyncStandbys {
        parse(v).unwrap().unwrap()
    }

    #[test]
    fn the_four_forms() {
        assert_eq!(parse("").unwrap(), None);
        assert_eq!(parse("  ").unwrap(), None);
        let list = p("s1, S2 ,\"Mixed Case\"");
        assert_eq!(list.method, Method::Priority);
        assert_eq!(list.num_sync, 1);
        assert_eq!(list.names, ["s1", "s2", "Mixed Case"]);
        let first = p("FIRST 2 (a, b, c)");
        assert_eq!((first.method, first.num_sync), (Method::Priority, 2));
        let old = p("2 (a, b)");
        assert_eq!((old.method, old.num_sync), (Method::Priority, 2));
        let any = p("any 1 (s1, s2)");
        assert_eq!((any.method, any.num_sync), (Method::Quorum, 1));
        assert_eq!(p("*").names, ["*"]);
    }

    #[test]
    fn priorities() {
        let first = p("FIRST 1 (a, b, *)");
        assert_eq!(first.priority("A"), 1);
        assert_eq!(first.priority("b"), 2);
        assert_eq!(first.priority("zzz"), 3);
        let any = p("ANY 2 (a, b)");
        assert_eq!(
            (any.priority("a"), any.priority("b"), any.priority("c")),
            (1, 1, 0)
        );
    }

    #[test]
    fn errors() {
        for bad in [
            "FIRST 0 (a)",
            "a,,b",
            "a b",
            "(a)",
            "a,",
            "FIRST 1 (a",
            "\"a",
            "a;b",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE, "{bad}");
        }
    }
}
