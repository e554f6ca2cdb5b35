//! Parsing: split a query string into statements, parse each with `sqlparser`, and route
//! the few statements it cannot parse (VACUUM, ANALYZE, CHECKPOINT, COPY ... FROM STDIN,
//! SHOW ALL) to a small parser of our own.

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

use crate::error::{Error, Result, SqlState};

/// A parsed statement.
#[derive(Debug)]
pub enum Statement {
    Ast(Box<ast::Statement>),
    Copy(CopyStatement),
    /// VACUUM / ANALYZE: storage has nothing to vacuum yet; `analyze` (ANALYZE, or
    /// VACUUM with its ANALYZE option) measures the tables' statistics.
    Maintenance {
        tag: &'static str,
        tables: Vec<String>,
        analyze: bool,
    },
    Checkpoint,
    ShowAll,
    /// GRANT / REVOKE of role membership (sqlparser has no WITH ADMIN OPTION).
    Role(crate::sql::roles::RoleStatement),
    /// ALTER SEQUENCE name OWNED BY table.column | NONE, or RESTART [WITH n] (sqlparser
    /// has no ALTER SEQUENCE).
    AlterSequence {
        name: String,
        action: SequenceAction,
    },
    /// SET CONSTRAINTS { ALL | name [, ...] } { DEFERRED | IMMEDIATE } (`names` None:
    /// ALL).
    SetConstraints {
        names: Option<Vec<String>>,
        deferred: bool,
    },
    /// ALTER TABLE t ALTER [COLUMN] c ADD GENERATED {BY DEFAULT | ALWAYS} AS IDENTITY
    /// [(sequence options)] (pg_dump's form of an identity column): the options as a
    /// CREATE SEQUENCE of the sequence's name (None: PostgreSQL's `t_c_seq`).
    AddIdentity {
        table: String,
        column: String,
        always: bool,
        sequence: Box<Statement>,
    },
    /// An empty query (only in a Parse message; simple queries drop empty statements).
    Empty,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SequenceAction {
    /// OWNED BY table.column (None: OWNED BY NONE).
    OwnedBy(Option<(String, String)>),
    /// RESTART [WITH n].
    Restart(Option<i64>),
    /// Options as CREATE SEQUENCE takes them (those not named keep their values), and
    /// perhaps RESTART [[WITH] n] (`Some(None)`: at the start).
    Options {
        data_type: Option<ast::DataType>,
        options: Vec<ast::SequenceOptions>,
        restart: Option<Option<i64>>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyFormat {
    Text,
    Csv,
    Binary,
}

#[derive(Debug, Clone)]
pub struct CopyStatement {
    /// The table copied to or from ("" for `COPY (query) TO`).
    pub table: String,
    pub columns: Vec<String>,
    /// `COPY (query) TO STDOUT`: the query's text.
    pub query: Option<String>,
    /// COPY ... TO STDOUT (else FROM STDIN).
    pub to: bool,
    pub format: CopyFormat,
    pub delimiter: Option<char>,
    pub null: Option<String>,
    pub header: bool,
    pub quote: char,
    pub escape: Option<char>,
}

/// Split a query string at top-level semicolons, respecting quotes, dollar quotes and
/// comments. Returns the non-empty statements' texts.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => {
                // E'...' strings treat backslash as an escape.
                let escaped = i > 0 && (bytes[i - 1] == b'E' || bytes[i - 1] == b'e');
                i += 1;
                while i < bytes.len() {
                    if escaped && bytes[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if bytes[i] == b'\'' {
                        if i + 1 < bytes.len() && bytes[i + 1] == b'\'' {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += 1;
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < bytes.len() {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'$' => {
                // $tag$ ... $tag$ (a tag is empty or an identifier not starting with a digit).
                let tag_end = bytes[i + 1..]
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'));
                match tag_end {
                    Some(len)
                        if bytes[i + 1 + len] == b'$'
                            && !bytes.get(i + 1).is_some_and(|c| c.is_ascii_digit()) =>
                    {
                        let tag = &sql[i..i + len + 2];
                        let body = i + len + 2;
                        i = match sql[body..].find(tag) {
                            Some(pos) => body + pos + tag.len(),
                            None => bytes.len(),
                        };
                    }
                    _ => i += 1,
                }
            }
            b';' => {
                let stmt = sql[start..i].trim();
                if !is_blank(stmt) {
                    out.push(stmt);
                }
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    let stmt = sql[start.min(sql.len())..].trim();
    if !is_blank(stmt) {
        out.push(stmt);
    }
    out
}

/// Whether a statement text holds only comments and white space.
fn is_blank(s: &str) -> bool {
    let mut rest = s.trim_start();
    loop {
        if rest.is_empty() {
            return true;
        }
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map(|p| r[p..].trim_start()).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map(|p| r[p + 2..].trim_start()).unwrap_or("");
        } else {
            return false;
        }
    }
}

/// Words after which a literal is an ordinary value that may become a parameter. After any
/// other word (a type name as in `date '2020-01-01'`, a keyword with special syntax) the
/// literal stays in the statement's text.
const VALUE_CONTEXT_WORDS: &[&str] = &[
    "and",
    "or",
    "not",
    "in",
    "is",
    "like",
    "ilike",
    "between",
    "then",
    "else",
    "when",
    "case",
    "values",
    "set",
    "where",
    "select",
    "limit",
    "offset",
    "returning",
    "having",
    "on",
];

/// For the simple protocol's plan cache: lift numeric and string literals out of a DML
/// statement, giving its shape (with `$n` in their place), the literal values and their
/// declared types (numbers typed as their literal would be, strings untyped). Returns None
/// for statements whose literals may carry meaning beyond their value (ORDER BY / GROUP BY
/// positions) or that are not DML, and for statements with more literals than a statement
/// may have parameters (they run as written).
pub fn lift_literals(
    sql: &str,
) -> Option<(
    String,
    Vec<crate::types::Value>,
    Vec<crate::types::DataType>,
)> {
    use crate::types::{DataType, Value};
    use sqlparser::tokenizer::{Token, Tokenizer};
    let first = sql.split_whitespace().next()?.to_ascii_lowercase();
    if !matches!(first.as_str(), "select" | "insert" | "update" | "delete") {
        return None;
    }
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql).tokenize().ok()?;
    let mut shape = String::with_capacity(sql.len());
    let mut values = Vec::new();
    let mut types = Vec::new();
    let mut prev_word: Option<String> = None;
    let mut prev_significant: Option<&Token> = None;
    for tok in &tokens {
        let lift = |t: &Token| match prev_significant {
            Some(Token::Word(_)) => {
                prev_word
                    .as_deref()
                    .is_some_and(|w| VALUE_CONTEXT_WORDS.contains(&w))
                    && !matches!(t, Token::Whitespace(_))
            }
            Some(Token::DoubleColon) => false,
            _ => true,
        };
        match tok {
            Token::Word(w) => {
                let lw = w.value.to_ascii_lowercase();
                if w.quote_style.is_none() && (lw == "order" || lw == "group") {
                    return None;
                }
                prev_word = Some(lw);
            }
            Token::Placeholder(_) => return None,
            Token::Number(_, _) | Token::SingleQuotedString(_) | Token::EscapedStringLiteral(_)
                if lift(tok) && values.len() == crate::constants::MAX_BIND_PARAMETERS =>
            {
                return None;
            }
            Token::Number(n, _) if lift(tok) => {
                let (v, t) = if let Ok(i) = n.parse::<i32>() {
                    (Value::Int4(i), DataType::Int4)
                } else if let Ok(i) = n.parse::<i64>() {
                    (Value::Int8(i), DataType::Int8)
                } else {
                    super::bind::numeric_literal(n).ok()?
                };
                values.push(v);
                types.push(t);
                shape.push_str(&format!("${}", values.len()));
                prev_significant = Some(tok);
                continue;
            }
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) if lift(tok) => {
                values.push(Value::Text(s.clone()));
                types.push(DataType::Unknown);
                shape.push_str(&format!("${}", values.len()));
                prev_significant = Some(tok);
                continue;
            }
            _ => {}
        }
        if !matches!(tok, Token::Whitespace(_)) {
            prev_significant = Some(tok);
        }
        shape.push_str(&tok.to_string());
    }
    if values.is_empty() {
        return None;
    }
    Some((shape, values, types))
}

/// Parse one statement's text.
pub fn parse_statement(sql: &str) -> Result<Statement> {
    let words = Words::new(sql);
    match words.first().as_deref() {
        Some("copy") => return parse_copy(sql),
        Some("vacuum") | Some("analyze") | Some("analyse") => return parse_maintenance(sql),
        Some("checkpoint") => {
            if words.rest(1).is_empty() {
                return Ok(Statement::Checkpoint);
            }
            return Err(syntax_near(&words.rest(1)));
        }
        Some("show") if words.rest(1).eq_ignore_ascii_case("all") => return Ok(Statement::ShowAll),
        Some("alter") if words.tokens.get(1).map(String::as_str) == Some("sequence") => {
            return parse_alter_sequence(&words)
        }
        // sqlparser takes CREATE SEQUENCE's options in one order only; PostgreSQL (and
        // pg_dump's output) in any.
        Some("create") if words.tokens.get(1).map(String::as_str) == Some("sequence") => {
            return parse_create_sequence(&words)
        }
        Some("alter")
            if words.tokens.get(1).map(String::as_str) == Some("table")
                && words
                    .tokens
                    .windows(2)
                    .any(|w| w[0] == "add" && w[1] == "generated") =>
        {
            return parse_add_identity(&words)
        }
        Some("set") if words.tokens.get(1).map(String::as_str) == Some("constraints") => {
            return parse_set_constraints(&words)
        }
        // sqlparser reads CREATE USER as Snowflake's; PostgreSQL's is CREATE ROLE with
        // LOGIN unless NOLOGIN is given.
        Some("create") if words.tokens.get(1).map(String::as_str) == Some("user") => {
            let at = words.offsets[1];
            let role = format!("{}ROLE{}", &sql[..at], &sql[at + "user".len()..]);
            let mut stmt = parse_statement(&role)?;
            if let Statement::Ast(ast) = &mut stmt {
                if let ast::Statement::CreateRole(cr) = ast.as_mut() {
                    cr.login.get_or_insert(true);
                }
            }
            return Ok(stmt);
        }
        // sqlparser takes only an unsigned CONNECTION LIMIT; PostgreSQL's may be -1.
        Some("create" | "alter")
            if matches!(
                words.tokens.get(1).map(String::as_str),
                Some("role" | "user")
            ) =>
        {
            if let Some(stmt) = parse_negative_connection_limit(sql)? {
                return Ok(stmt);
            }
        }
        // A GRANT or REVOKE without ON grants roles.
        Some("grant" | "revoke") if !words.tokens.iter().any(|t| t == "on") => {
            return parse_role_membership(&words)
        }
        Some("alter") if words.tokens.get(1).map(String::as_str) == Some("system") => {
            return Err(Error::unsupported("ALTER SYSTEM is not supported")
                .with_hint("Set the parameter in steadydb.conf in the data directory, then run SELECT pg_reload_conf()."))
        }
        // PostgreSQL's ABORT is ROLLBACK by another name.
        Some("abort") => {
            let at = sql.to_ascii_lowercase().find("abort").unwrap_or(0);
            return parse_statement(&format!("ROLLBACK{}", &sql[at + "abort".len()..]));
        }
        _ => {}
    }
    let respelled = respell_weak_row_locks(sql);
    let sql = respelled.as_deref().unwrap_or(sql);
    let respelled = respell_operator_any(sql);
    let sql = respelled.as_deref().unwrap_or(sql);
    check_nesting(sql)?;
    let mut stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(syntax_error)?;
    match stmts.len() {
        1 => Ok(Statement::Ast(Box::new(stmts.remove(0)))),
        _ => Err(Error::syntax("syntax error: expected one statement")),
    }
}

/// A role statement with `CONNECTION LIMIT -n`: parsed with `n`, then negated; None if
/// it has none.
fn parse_negative_connection_limit(sql: &str) -> Result<Option<Statement>> {
    use std::sync::OnceLock;
    static NEGATIVE: OnceLock<regex::Regex> = OnceLock::new();
    let negative = NEGATIVE.get_or_init(|| {
        regex::Regex::new(r"(?i)\bconnection\s+limit\s*-\s*([0-9]+)").expect("a valid pattern")
    });
    if !negative.is_match(sql) {
        return Ok(None);
    }
    let unsigned = negative.replace(sql, "CONNECTION LIMIT $1");
    let mut stmt = parse_statement(&unsigned)?;
    let negate = |e: &mut ast::Expr| {
        *e = ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr: Box::new(e.clone()),
        }
    };
    if let Statement::Ast(ast) = &mut stmt {
        match ast.as_mut() {
            ast::Statement::CreateRole(cr) => cr.connection_limit.iter_mut().for_each(negate),
            ast::Statement::AlterRole {
                operation: ast::AlterRoleOperation::WithOptions { options },
                ..
            } => {
                for option in options {
                    if let ast::RoleOption::ConnectionLimit(e) = option {
                        negate(e);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(Some(stmt))
}

/// GRANT role [, ...] TO role [, ...] [WITH ADMIN OPTION] [GRANTED BY role], or
/// REVOKE [ADMIN OPTION FOR] role [, ...] FROM role [, ...] [GRANTED BY role]
/// [CASCADE | RESTRICT].
fn parse_role_membership(words: &Words) -> Result<Statement> {
    let mut t: Vec<&str> = words.tokens.iter().map(String::as_str).collect();
    if t.last() == Some(&";") {
        t.pop();
    }
    let revoke = t[0] == "revoke";
    let mut at = 1;
    let mut admin = false;
    if revoke && t[at..].starts_with(&["admin", "option", "for"]) {
        admin = true;
        at += 3;
    }
    // A list of names up to `until` (a keyword) or the end.
    let list = |at: &mut usize, until: &[&str]| -> Result<Vec<String>> {
        let mut names = Vec::new();
        loop {
            let Some(token) = t.get(*at) else {
                return Err(Error::syntax("syntax error at end of input"));
            };
            if until.contains(token) || *token == "," {
                return Err(syntax_near(token));
            }
            let name = match *token {
                "current_user" | "current_role" | "session_user" => token.to_string(),
                _ => ident(token).ok_or_else(|| syntax_near(token))?,
            };
            names.push(name);
            *at += 1;
            match t.get(*at) {
                Some(&",") => *at += 1,
                _ => return Ok(names),
            }
        }
    };
    let roles = list(&mut at, &["to", "from"])?;
    let keyword = if revoke { "from" } else { "to" };
    match t.get(at) {
        Some(&w) if w == keyword => at += 1,
        Some(w) => return Err(syntax_near(w)),
        None => return Err(Error::syntax("syntax error at end of input")),
    }
    let members = list(&mut at, &["with", "granted", "cascade", "restrict"])?;
    if !revoke && t[at..].starts_with(&["with", "admin", "option"]) {
        admin = true;
        at += 3;
    }
    if t[at..].starts_with(&["granted", "by"]) {
        return Err(Error::unsupported("GRANTED BY is not supported yet"));
    }
    if revoke && matches!(t.get(at), Some(&"cascade" | &"restrict")) {
        if t[at] == "cascade" {
            return Err(Error::unsupported(
                "REVOKE of a role with CASCADE is not supported yet",
            ));
        }
        at += 1;
    }
    if let Some(w) = t.get(at) {
        return Err(syntax_near(w));
    }
    for name in roles.iter().chain(&members) {
        if name == "public" {
            return Err(Error::new(
                SqlState::UNDEFINED_OBJECT,
                "role \"public\" does not exist",
            ));
        }
    }
    Ok(Statement::Role(
        crate::sql::roles::RoleStatement::Membership {
            revoke,
            roles,
            members,
            admin,
        },
    ))
}

fn parse_set_constraints(words: &Words) -> Result<Statement> {
    let mut t: Vec<&str> = words.tokens[2..].iter().map(String::as_str).collect();
    if t.last() == Some(&";") {
        t.pop();
    }
    let deferred = match t.pop() {
        Some("deferred") => true,
        Some("immediate") => false,
        // The mode is missing: the list ran to the end.
        Some(_) if t.is_empty() || t.last() == Some(&",") => {
            return Err(Error::syntax("syntax error at end of input"));
        }
        Some(other) => return Err(syntax_near(other)),
        None => return Err(Error::syntax("syntax error at end of input")),
    };
    if t == ["all"] {
        return Ok(Statement::SetConstraints {
            names: None,
            deferred,
        });
    }
    let mut names = Vec::new();
    for (i, w) in t.iter().enumerate() {
        match (i % 2, *w) {
            (1, ",") => {}
            (0, w) if w != "," => names.push(word_name(w)),
            (_, w) => return Err(syntax_near(w)),
        }
    }
    if names.is_empty() || t.len().is_multiple_of(2) {
        return Err(Error::syntax("syntax error in SET CONSTRAINTS"));
    }
    Ok(Statement::SetConstraints {
        names: Some(names),
        deferred,
    })
}

/// An identifier as a word gives it: unquoted (and lower-cased), the `public.` schema
/// left out.
fn word_name(w: &str) -> String {
    let bare = w.strip_prefix("public.").unwrap_or(w);
    bare.strip_prefix('"')
        .map_or(bare.to_string(), str::to_string)
}

fn parse_create_sequence(words: &Words) -> Result<Statement> {
    let t: Vec<&str> = words.tokens.iter().map(String::as_str).collect();
    let mut i = 2;
    let if_not_exists = t[i..].starts_with(&["if", "not", "exists"]);
    if if_not_exists {
        i += 3;
    }
    let name = match t.get(i) {
        Some(n) => word_name(n),
        None => return Err(Error::syntax("syntax error at end of input")),
    };
    i += 1;
    let number = |i: &mut usize| -> Result<ast::Expr> {
        let negative = t.get(*i) == Some(&"-");
        if negative {
            *i += 1;
        }
        let n = t
            .get(*i)
            .ok_or_else(|| Error::syntax("syntax error at end of input"))?;
        if n.parse::<i64>().is_err() {
            return Err(syntax_near(n));
        }
        *i += 1;
        let value = ast::Expr::value(ast::Value::Number(n.to_string(), false));
        Ok(if negative {
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr: Box::new(value),
            }
        } else {
            value
        })
    };
    let mut data_type = None;
    let mut options = Vec::new();
    let mut owned_by = None;
    while i < t.len() {
        let word = t[i];
        i += 1;
        match word {
            "as" => {
                let ty = t
                    .get(i)
                    .ok_or_else(|| Error::syntax("syntax error at end of input"))?;
                i += 1;
                data_type = Some(match *ty {
                    "smallint" | "int2" => ast::DataType::SmallInt(None),
                    "integer" | "int" | "int4" => ast::DataType::Integer(None),
                    "bigint" | "int8" => ast::DataType::BigInt(None),
                    _ => ast::DataType::Text,
                });
            }
            "increment" => {
                let by = t.get(i) == Some(&"by");
                if by {
                    i += 1;
                }
                options.push(ast::SequenceOptions::IncrementBy(number(&mut i)?, by));
            }
            "start" => {
                let with = t.get(i) == Some(&"with");
                if with {
                    i += 1;
                }
                options.push(ast::SequenceOptions::StartWith(number(&mut i)?, with));
            }
            "minvalue" => options.push(ast::SequenceOptions::MinValue(Some(number(&mut i)?))),
            "maxvalue" => options.push(ast::SequenceOptions::MaxValue(Some(number(&mut i)?))),
            "cache" => options.push(ast::SequenceOptions::Cache(number(&mut i)?)),
            "cycle" => options.push(ast::SequenceOptions::Cycle(true)),
            "no" => {
                let what = t.get(i).copied().unwrap_or("");
                i += 1;
                options.push(match what {
                    "minvalue" => ast::SequenceOptions::MinValue(None),
                    "maxvalue" => ast::SequenceOptions::MaxValue(None),
                    "cycle" => ast::SequenceOptions::Cycle(false),
                    other => return Err(syntax_near(other)),
                });
            }
            "owned" if t.get(i) == Some(&"by") => {
                let target = t
                    .get(i + 1)
                    .ok_or_else(|| Error::syntax("syntax error at end of input"))?;
                i += 2;
                owned_by = Some(ast::ObjectName::from(
                    target
                        .split('.')
                        .map(|p| ast::Ident::new(word_name(p)))
                        .collect::<Vec<_>>(),
                ));
            }
            ";" => {}
            other => return Err(syntax_near(other)),
        }
    }
    Ok(Statement::Ast(Box::new(ast::Statement::CreateSequence {
        temporary: false,
        if_not_exists,
        name: ast::ObjectName::from(vec![ast::Ident::new(name)]),
        data_type,
        sequence_options: options,
        owned_by,
    })))
}

fn parse_add_identity(words: &Words) -> Result<Statement> {
    let t: Vec<&str> = words.tokens.iter().map(String::as_str).collect();
    let mut i = 2;
    if t.get(i) == Some(&"only") {
        i += 1;
    }
    let word = |i: usize| -> Result<&str> {
        t.get(i)
            .copied()
            .ok_or_else(|| Error::syntax("syntax error at end of input"))
    };
    let table = word_name(word(i)?);
    i += 1;
    if word(i)? != "alter" {
        return Err(syntax_near(word(i)?));
    }
    i += 1;
    if word(i)? == "column" {
        i += 1;
    }
    let column = word_name(word(i)?);
    i += 1;
    if word(i)? != "add" || word(i + 1)? != "generated" {
        return Err(syntax_near(word(i)?));
    }
    i += 2;
    let always = match word(i)? {
        "always" => {
            i += 1;
            true
        }
        "by" if word(i + 1)? == "default" => {
            i += 2;
            false
        }
        other => return Err(syntax_near(other)),
    };
    if word(i)? != "as" || word(i + 1)? != "identity" {
        return Err(syntax_near(word(i)?));
    }
    i += 2;
    let mut name = format!("{table}_{column}_seq");
    let mut options: Vec<String> = Vec::new();
    if t.get(i) == Some(&"(") {
        i += 1;
        while t.get(i).is_some_and(|w| *w != ")") {
            if t[i] == "sequence" && t.get(i + 1) == Some(&"name") {
                name = word_name(word(i + 2)?);
                i += 3;
                continue;
            }
            options.push(t[i].to_string());
            i += 1;
        }
        if t.get(i) != Some(&")") {
            return Err(Error::syntax("syntax error at end of input"));
        }
        i += 1;
    }
    match t.get(i) {
        None | Some(&";") => {}
        Some(other) => return Err(syntax_near(other)),
    }
    let mut tokens = vec![
        "create".to_string(),
        "sequence".to_string(),
        format!("\"{name}"),
    ];
    tokens.extend(options);
    let sequence = parse_create_sequence(&Words {
        tokens,
        offsets: Vec::new(),
        text: String::new(),
    })?;
    Ok(Statement::AddIdentity {
        table,
        column,
        always,
        sequence: Box::new(sequence),
    })
}

fn parse_alter_sequence(words: &Words) -> Result<Statement> {
    let t: Vec<&str> = words.tokens.iter().map(String::as_str).collect();
    let name = match t.get(2) {
        Some(n) => word_name(n),
        None => return Err(Error::syntax("syntax error at end of input")),
    };
    let action = match &t[3..] {
        ["owned", "by", "none"] => SequenceAction::OwnedBy(None),
        ["owned", "by", target] => {
            let target = target.strip_prefix("public.").unwrap_or(target);
            match target.split_once('.') {
                Some((table, column)) => {
                    SequenceAction::OwnedBy(Some((word_name(table), word_name(column))))
                }
                None => return Err(syntax_near(target)),
            }
        }
        ["restart"] => SequenceAction::Restart(None),
        ["restart", "with", n] | ["restart", n] => match n.parse::<i64>() {
            Ok(n) => SequenceAction::Restart(Some(n)),
            Err(_) => return Err(syntax_near(n)),
        },
        [] | [";"] => return Err(Error::syntax("syntax error at end of input")),
        rest => sequence_options(name.clone(), rest)?,
    };
    Ok(Statement::AlterSequence { name, action })
}

/// ALTER SEQUENCE's options (`t`, after the name): RESTART taken out, the others read as
/// CREATE SEQUENCE reads them.
fn sequence_options(name: String, t: &[&str]) -> Result<SequenceAction> {
    let mut restart = None;
    let mut rest: Vec<String> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i] != "restart" {
            rest.push(t[i].to_string());
            i += 1;
            continue;
        }
        i += 1;
        if t.get(i) == Some(&"with") {
            i += 1;
        }
        let negative = t.get(i) == Some(&"-");
        let at = if negative { i + 1 } else { i };
        restart = Some(match t.get(at).and_then(|n| n.parse::<i64>().ok()) {
            Some(n) => {
                i = at + 1;
                Some(if negative { -n } else { n })
            }
            None => None,
        });
    }
    let mut tokens = vec![
        "create".to_string(),
        "sequence".to_string(),
        format!("\"{name}"),
    ];
    tokens.extend(rest);
    let Statement::Ast(created) = parse_create_sequence(&Words {
        tokens,
        offsets: Vec::new(),
        text: String::new(),
    })?
    else {
        return Err(Error::internal("CREATE SEQUENCE parsed as something else"));
    };
    match *created {
        ast::Statement::CreateSequence {
            data_type,
            sequence_options,
            owned_by: None,
            ..
        } => Ok(SequenceAction::Options {
            data_type,
            options: sequence_options,
            restart,
        }),
        ast::Statement::CreateSequence { .. } => Err(Error::unsupported(
            "ALTER SEQUENCE with OWNED BY and other options together is not supported yet",
        )),
        _ => Err(Error::internal("CREATE SEQUENCE parsed as something else")),
    }
}

/// The table name a respelled `FOR NO KEY UPDATE` / `FOR KEY SHARE` clause carries in its
/// OF list (see [`respell_weak_row_locks`]).
pub const NO_KEY_LOCK_MARK: &str = "steadydb: no key";
pub const KEY_SHARE_LOCK_MARK: &str = "steadydb: key share";

/// sqlparser knows FOR UPDATE and FOR SHARE but not PostgreSQL's weaker FOR NO KEY UPDATE
/// and FOR KEY SHARE: spell those as the stronger clause with a mark in its OF list
/// (`FOR UPDATE OF "steadydb: no key"`), which the planner reads back. An OF list of the
/// statement's own is dropped: a query reads one table, so it names that table. None when
/// the statement has neither clause (outside quotes).
/// `x OPERATOR(pg_catalog.=) ANY (array)` (psql's and pg_dump's pattern queries) as
/// `x = ANY (array)`: sqlparser takes a schema-qualified operator only between two
/// operands. Quoted text is left alone.
fn respell_operator_any(sql: &str) -> Option<String> {
    const PREFIX: &str = "operator(pg_catalog.";
    let lower = sql.to_ascii_lowercase();
    if !lower.contains(PREFIX) {
        return None;
    }
    let bytes = lower.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let (mut i, mut copied) = (0, 0);
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == b'\'' || c == b'"' {
            quote = Some(c);
            i += 1;
            continue;
        }
        if lower[i..].starts_with(PREFIX) {
            let op_start = i + PREFIX.len();
            if let Some(len) = lower[op_start..].find(')') {
                let op = &lower[op_start..op_start + len];
                let after = &lower[op_start + len + 1..];
                let next = after.trim_start();
                let quantified = ["any", "all", "some"].iter().any(|w| {
                    next.starts_with(w)
                        && !next[w.len()..]
                            .starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_')
                });
                if quantified
                    && !op.is_empty()
                    && op.bytes().all(|b| b"=<>!~*+-/%|&#^@".contains(&b))
                {
                    out.push_str(&sql[copied..i]);
                    out.push(' ');
                    out.push_str(op);
                    out.push(' ');
                    i = op_start + len + 1;
                    copied = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

fn respell_weak_row_locks(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    if !lower.contains("key") {
        return None;
    }
    let bytes = lower.as_bytes();
    let mut out = String::with_capacity(sql.len() + 32);
    let mut changed = false;
    let (mut i, mut copied) = (0, 0);
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == b'\'' || c == b'"' {
            quote = Some(c);
            i += 1;
            continue;
        }
        let at_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if at_word && c == b'f' {
            let clause = match_words(bytes, i, &["for", "no", "key", "update"])
                .map(|end| (end, "FOR UPDATE", NO_KEY_LOCK_MARK))
                .or_else(|| {
                    match_words(bytes, i, &["for", "key", "share"])
                        .map(|end| (end, "FOR SHARE", KEY_SHARE_LOCK_MARK))
                });
            if let Some((mut end, spelled, mark)) = clause {
                // Drop the clause's own OF list.
                if let Some(of_end) = match_words(bytes, end, &["of"]) {
                    end = of_end;
                    while let Some(next) = word_at(bytes, end) {
                        let (word, word_end) = next;
                        if matches!(word, "nowait" | "skip" | "for" | "limit" | "offset") {
                            break;
                        }
                        end = word_end;
                        while end < bytes.len() && (bytes[end] == b',' || bytes[end] == b' ') {
                            end += 1;
                        }
                    }
                }
                out.push_str(&sql[copied..i]);
                out.push_str(&format!("{spelled} OF \"{mark}\" "));
                copied = end;
                i = end;
                changed = true;
                continue;
            }
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

/// If `words` follow at `at` (after whitespace), each a whole word separated by
/// whitespace: where the last one ends.
fn match_words(bytes: &[u8], at: usize, words: &[&str]) -> Option<usize> {
    let mut i = at;
    for w in words {
        let (found, end) = word_at(bytes, i)?;
        if found != *w {
            return None;
        }
        i = end;
    }
    Some(i)
}

/// The identifier-like word at `at` (after whitespace, lowercase input) and its end.
fn word_at(bytes: &[u8], at: usize) -> Option<(&str, usize)> {
    let mut i = at;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while i < bytes.len()
        && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
    {
        i += 1;
    }
    if i == start {
        return None;
    }
    std::str::from_utf8(&bytes[start..i]).ok().map(|w| (w, i))
}

/// Turn sqlparser's message into PostgreSQL's `syntax error at or near "x"`.
/// Refuse, with 54001 and before it is parsed, a statement whose expressions could nest
/// deeper than [`MAX_EXPRESSION_DEPTH`](crate::constants::MAX_EXPRESSION_DEPTH).
///
/// The parser nests brackets only to a fixed depth, but it builds a chain of infix and
/// postfix operators (`1+1+...`, `a||b||...`, `x AND y AND ...`, `v::int::int...`) in a
/// loop, as a tree as deep as the chain is long; binding, evaluating and even dropping
/// such a tree recurse once per level. A chain lies between commas at one bracket level,
/// and each of its levels costs at least one operator or keyword token, so the count of
/// those tokens along the brackets open at any point bounds the depth of any tree the
/// statement can parse to. Counting is linear in the statement's length and never
/// recurses.
fn check_nesting(sql: &str) -> Result<()> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let limit = crate::constants::MAX_EXPRESSION_DEPTH;
    let tokens = match Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() {
        Ok(tokens) => tokens,
        // The parser reports the same error.
        Err(_) => return Ok(()),
    };
    // Operator and keyword tokens in the current segment of each open bracket level.
    let mut levels: Vec<usize> = vec![0];
    let mut open: usize = 0;
    for token in &tokens {
        match token {
            Token::LParen | Token::LBracket | Token::LBrace => {
                levels.push(0);
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                if levels.len() > 1 {
                    let inner = levels.pop().unwrap_or(0);
                    open = open.saturating_sub(inner);
                }
            }
            Token::Comma | Token::SemiColon => {
                let last = levels.last_mut();
                if let Some(count) = last {
                    open = open.saturating_sub(*count);
                    *count = 0;
                }
            }
            Token::Whitespace(_)
            | Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::NationalStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::DollarQuotedString(_)
            | Token::Placeholder(_) => {}
            Token::Word(w) if w.keyword == sqlparser::keywords::Keyword::NoKeyword => {}
            _ => {
                if let Some(count) = levels.last_mut() {
                    *count += 1;
                    open += 1;
                }
                if open > limit {
                    return Err(Error::stack_depth());
                }
            }
        }
    }
    Ok(())
}

fn syntax_error(e: sqlparser::parser::ParserError) -> Error {
    if matches!(e, sqlparser::parser::ParserError::RecursionLimitExceeded) {
        // Brackets nested deeper than the parser goes.
        return Error::stack_depth();
    }
    let msg = e.to_string();
    if let Some(pos) = msg.find("found: ") {
        let found = &msg[pos + 7..];
        let token = found.split(" at Line:").next().unwrap_or(found).trim();
        if token == "EOF" {
            return Error::syntax("syntax error at end of input");
        }
        return Error::syntax(format!("syntax error at or near \"{token}\""));
    }
    Error::syntax(format!(
        "syntax error: {}",
        msg.trim_start_matches("sql parser error: ")
    ))
}

fn syntax_near(token: &str) -> Error {
    let t = token.split_whitespace().next().unwrap_or("");
    Error::syntax(format!("syntax error at or near \"{t}\""))
}

/// A tiny tokenizer for our own statements: identifiers, numbers, quoted strings, symbols.
struct Words {
    tokens: Vec<String>,
    /// Byte offset in the original text where each token starts.
    offsets: Vec<usize>,
    text: String,
}

impl Words {
    fn new(sql: &str) -> Words {
        let mut tokens = Vec::new();
        let mut offsets = Vec::new();
        let chars: Vec<(usize, char)> = sql.char_indices().collect();
        let mut i = 0;
        while i < chars.len() {
            let (off, c) = chars[i];
            if c.is_whitespace() {
                i += 1;
            } else if c.is_alphanumeric() || c == '_' {
                let mut s = String::new();
                while i < chars.len()
                    && (chars[i].1.is_alphanumeric() || chars[i].1 == '_' || chars[i].1 == '.')
                {
                    s.extend(chars[i].1.to_lowercase());
                    i += 1;
                }
                tokens.push(s);
                offsets.push(off);
            } else if c == '\'' || c == '"' {
                // Quoted string or identifier: keep the quote char as a marker prefix.
                let quote = c;
                let mut s = String::from(quote);
                i += 1;
                while i < chars.len() {
                    if chars[i].1 == quote {
                        if i + 1 < chars.len() && chars[i + 1].1 == quote {
                            s.push(quote);
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    s.push(chars[i].1);
                    i += 1;
                }
                tokens.push(s);
                offsets.push(off);
            } else {
                tokens.push(c.to_string());
                offsets.push(off);
                i += 1;
            }
        }
        Words {
            tokens,
            offsets,
            text: sql.to_string(),
        }
    }

    fn first(&self) -> Option<String> {
        self.tokens.first().cloned()
    }

    /// The original text from token `n` on.
    fn rest(&self, n: usize) -> String {
        match self.offsets.get(n) {
            Some(&off) => self.text[off..].trim().to_string(),
            None => String::new(),
        }
    }
}

/// An identifier token: unquoted (already lower-cased) or "quoted" (kept as is).
fn ident(token: &str) -> Option<String> {
    if let Some(q) = token.strip_prefix('"') {
        return Some(q.to_string());
    }
    if token.starts_with('\'')
        || !token
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    {
        return None;
    }
    // Drop a `public.` schema qualifier.
    Some(token.strip_prefix("public.").unwrap_or(token).to_string())
}

fn string_literal(token: &str) -> Option<String> {
    token.strip_prefix('\'').map(|s| s.to_string())
}

fn parse_maintenance(sql: &str) -> Result<Statement> {
    let w = Words::new(sql);
    let tag = if w.tokens[0] == "vacuum" {
        "VACUUM"
    } else {
        "ANALYZE"
    };
    let mut tables = Vec::new();
    let mut analyze = tag == "ANALYZE";
    let mut i = 1;
    // Options: VACUUM (opts) / VACUUM FULL FREEZE VERBOSE ANALYZE ...
    if w.tokens.get(i).map(String::as_str) == Some("(") {
        while i < w.tokens.len() && w.tokens[i] != ")" {
            analyze |= matches!(w.tokens[i].as_str(), "analyze" | "analyse");
            i += 1;
        }
        i += 1;
    }
    while let Some(t) = w.tokens.get(i) {
        match t.as_str() {
            "analyze" | "analyse" if tables.is_empty() => {
                analyze = true;
                i += 1
            }
            "full" | "freeze" | "verbose" if tables.is_empty() => i += 1,
            "," => i += 1,
            "(" => {
                // Column list after a table name: skip it.
                while i < w.tokens.len() && w.tokens[i] != ")" {
                    i += 1;
                }
                i += 1;
            }
            other => {
                tables.push(ident(other).ok_or_else(|| syntax_near(other))?);
                i += 1;
            }
        }
    }
    Ok(Statement::Maintenance {
        tag,
        tables,
        analyze,
    })
}

fn parse_copy(sql: &str) -> Result<Statement> {
    let w = Words::new(sql);
    let t = &w.tokens;
    let tok = |i: usize| t.get(i).map(String::as_str).unwrap_or("");
    let mut i = 1;
    let mut query = None;
    let mut table = String::new();
    if tok(i) == "(" {
        // The query runs to the matching parenthesis (strings are single tokens).
        let open = i;
        let mut depth = 0usize;
        while i < t.len() {
            match tok(i) {
                "(" => depth += 1,
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if i >= t.len() {
            return Err(Error::syntax("syntax error at end of input"));
        }
        let text = &w.text[w.offsets[open] + 1..w.offsets[i]];
        query = Some(text.trim().to_string());
    } else {
        table = ident(tok(i)).ok_or_else(|| syntax_near(tok(i)))?;
    }
    i += 1;
    let mut columns = Vec::new();
    if query.is_none() && tok(i) == "(" {
        i += 1;
        while tok(i) != ")" {
            if tok(i) != "," {
                columns.push(ident(tok(i)).ok_or_else(|| syntax_near(tok(i)))?);
            }
            i += 1;
            if i >= t.len() {
                return Err(Error::syntax("syntax error at end of input"));
            }
        }
        i += 1;
    }
    let to = match tok(i) {
        "from" if query.is_none() => false,
        "to" => true,
        other => return Err(syntax_near(other)),
    };
    i += 1;
    match (to, tok(i)) {
        (false, "stdin") | (true, "stdout") => {}
        (false, _) => {
            return Err(Error::unsupported(
                "COPY FROM a file or program is not supported; use COPY ... FROM STDIN",
            ))
        }
        (true, _) => {
            return Err(Error::unsupported(
                "COPY TO a file or program is not supported; use COPY ... TO STDOUT",
            ))
        }
    }
    i += 1;
    let mut copy = CopyStatement {
        table,
        columns,
        query,
        to,
        format: CopyFormat::Text,
        delimiter: None,
        null: None,
        header: false,
        quote: '"',
        escape: None,
    };
    if tok(i) == "with" {
        i += 1;
    }
    let one_char = |s: &str, what: &str| -> Result<char> {
        let v = string_literal(s).ok_or_else(|| syntax_near(s))?;
        let mut chars = v.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(Error::unsupported(format!(
                "COPY {what} must be a single one-byte character"
            ))),
        }
    };
    if tok(i) == "(" {
        // New-style options: (FORMAT csv, HEADER, DELIMITER ',', NULL '', FREEZE ON, ...)
        i += 1;
        while i < t.len() && tok(i) != ")" {
            let name = tok(i).to_string();
            i += 1;
            let mut value: Option<String> = None;
            if tok(i) != "," && tok(i) != ")" {
                value = Some(tok(i).to_string());
                i += 1;
            }
            let v = value.as_deref().unwrap_or("");
            match name.as_str() {
                "format" => {
                    copy.format = match v.trim_start_matches('\'') {
                        "csv" => CopyFormat::Csv,
                        "text" => CopyFormat::Text,
                        "binary" => CopyFormat::Binary,
                        other => {
                            return Err(Error::new(
                                crate::error::SqlState::INVALID_PARAMETER_VALUE,
                                format!("COPY format \"{other}\" not recognized"),
                            ))
                        }
                    }
                }
                "header" => copy.header = !matches!(v, "false" | "off" | "0"),
                "delimiter" => copy.delimiter = Some(one_char(v, "delimiter")?),
                "null" => copy.null = Some(string_literal(v).ok_or_else(|| syntax_near(v))?),
                "quote" => copy.quote = one_char(v, "quote")?,
                "escape" => copy.escape = Some(one_char(v, "escape")?),
                "freeze" | "encoding" => {}
                "force_quote" | "force_not_null" | "force_null" => {
                    return Err(Error::unsupported(format!(
                        "COPY option \"{name}\" is not supported yet"
                    )));
                }
                other => {
                    return Err(Error::syntax(format!("option \"{other}\" not recognized")));
                }
            }
            if tok(i) == "," {
                i += 1;
            }
        }
        i += 1;
    } else {
        // Old-style options: [BINARY] [DELIMITER 'x'] [NULL 'x'] [CSV [HEADER] [QUOTE 'x'] [ESCAPE 'x']]
        while i < t.len() {
            match tok(i) {
                "binary" => copy.format = CopyFormat::Binary,
                "csv" => copy.format = CopyFormat::Csv,
                "header" => copy.header = true,
                "freeze" => {}
                "delimiter" => {
                    i += 1;
                    if tok(i) == "as" {
                        i += 1;
                    }
                    copy.delimiter = Some(one_char(tok(i), "delimiter")?);
                }
                "null" => {
                    i += 1;
                    if tok(i) == "as" {
                        i += 1;
                    }
                    copy.null = Some(string_literal(tok(i)).ok_or_else(|| syntax_near(tok(i)))?);
                }
                "quote" => {
                    i += 1;
                    if tok(i) == "as" {
                        i += 1;
                    }
                    copy.quote = one_char(tok(i), "quote")?;
                }
                "escape" => {
                    i += 1;
                    if tok(i) == "as" {
                        i += 1;
                    }
                    copy.escape = Some(one_char(tok(i), "escape")?);
                }
                other => return Err(syntax_near(other)),
            }
            i += 1;
        }
    }
    if i < t.len() {
        return Err(syntax_near(tok(i)));
    }
    check_copy_options(&copy)?;
    Ok(Statement::Copy(copy))
}

/// PostgreSQL's checks of COPY options against the format.
fn check_copy_options(copy: &CopyStatement) -> Result<()> {
    let csv = copy.format == CopyFormat::Csv;
    if copy.format == CopyFormat::Binary {
        for (given, what) in [
            (copy.delimiter.is_some(), "DELIMITER"),
            (copy.null.is_some(), "NULL"),
        ] {
            if given {
                return Err(Error::syntax(format!(
                    "cannot specify {what} in BINARY mode"
                )));
            }
        }
        if copy.header {
            return Err(Error::unsupported("cannot specify HEADER in BINARY mode"));
        }
    }
    if !csv && copy.quote != '"' {
        return Err(Error::unsupported("COPY quote available only in CSV mode"));
    }
    if !csv && copy.escape.is_some() {
        return Err(Error::unsupported("COPY escape available only in CSV mode"));
    }
    if let Some(d) = copy.delimiter {
        if d == '\r' || d == '\n' {
            return Err(Error::new(
                crate::error::SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter cannot be newline or carriage return",
            ));
        }
        if !csv && (d == '\\' || d.is_ascii_lowercase() || d.is_ascii_digit() || d == '.') {
            return Err(Error::new(
                crate::error::SqlState::INVALID_PARAMETER_VALUE,
                format!("COPY delimiter cannot be \"{d}\""),
            ));
        }
        if csv && d == copy.quote {
            return Err(Error::new(
                crate::error::SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter and quote must be different",
            ));
        }
    }
    if let (Some(null), Some(d)) = (&copy.null, copy.delimiter) {
        if null.contains(d) {
            return Err(Error::new(
                crate::error::SqlState::INVALID_PARAMETER_VALUE,
                "COPY delimiter must not appear in the NULL specification",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_respecting_quotes_and_comments() {
        let s =
            split_statements("select 'a;b'; select \"x;\" from t; -- c;\n select $$;$$; /* ; */ ;");
        assert_eq!(
            s,
            vec![
                "select 'a;b'",
                "select \"x;\" from t",
                "-- c;\n select $$;$$"
            ]
        );
        assert!(split_statements("  ; ; -- nothing").is_empty());
    }

    #[test]
    fn parses_our_own_statements() {
        match parse_statement("copy pgbench_accounts from stdin with (freeze on)").unwrap() {
            Statement::Copy(c) => {
                assert_eq!(c.table, "pgbench_accounts");
                assert_eq!(c.format, CopyFormat::Text);
            }
            other => panic!("{other:?}"),
        }
        match parse_statement(
            "COPY t (a, \"B\") FROM STDIN WITH (FORMAT csv, HEADER true, NULL 'x')",
        )
        .unwrap()
        {
            Statement::Copy(c) => {
                assert_eq!(c.columns, vec!["a", "B"]);
                assert_eq!(c.format, CopyFormat::Csv);
                assert!(c.header);
                assert_eq!(c.null.as_deref(), Some("x"));
            }
            other => panic!("{other:?}"),
        }
        match parse_statement("vacuum analyze pgbench_branches").unwrap() {
            Statement::Maintenance {
                tag,
                tables,
                analyze,
            } => {
                assert_eq!(tag, "VACUUM");
                assert_eq!(tables, vec!["pgbench_branches"]);
                assert!(analyze);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_statement("CHECKPOINT").unwrap(),
            Statement::Checkpoint
        ));
        let e = parse_statement("frobnicate the table").unwrap_err();
        assert_eq!(e.code, crate::error::SqlState::SYNTAX_ERROR);
        assert_eq!(e.message, "syntax error at or near \"frobnicate\"");
    }
}

#[cfg(test)]
mod lift_tests {
    use super::*;

    #[test]
    fn lifts_values_but_not_positions_or_typed_strings() {
        let (shape, vals, _) =
            lift_literals("UPDATE pgbench_accounts SET abalance = abalance + -42 WHERE aid = 7;")
                .unwrap();
        assert_eq!(
            shape,
            "UPDATE pgbench_accounts SET abalance = abalance + -$1 WHERE aid = $2;"
        );
        assert_eq!(vals.len(), 2);
        let (shape, _, _) =
            lift_literals("insert into t values (1, 'it''s', date '2020-01-01')").unwrap();
        assert_eq!(shape, "insert into t values ($1, $2, date '2020-01-01')");
        assert!(lift_literals("select a from t order by 1").is_none());
        assert!(lift_literals("set x = 1").is_none());
        assert!(lift_literals("select * from t").is_none());
    }

    #[test]
    fn a_statement_with_more_literals_than_parameters_is_not_lifted() {
        let values = |n: usize| {
            (0..n)
                .map(|i| format!("({i})"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let most = crate::constants::MAX_BIND_PARAMETERS;
        let (_, vals, _) =
            lift_literals(&format!("insert into t values {}", values(most))).unwrap();
        assert_eq!(vals.len(), most);
        assert!(lift_literals(&format!("insert into t values {}", values(most + 1))).is_none());
    }
}

/// `text` with the string after each PASSWORD keyword (CREATE / ALTER ROLE) replaced by
/// `'********'`, for the log and pg_stat_activity: a password never appears in either.
pub fn mask_passwords(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .as_bytes()
        .windows(8)
        .any(|w| w.eq_ignore_ascii_case(b"password"))
    {
        return text.into();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut after_password = false;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            // E'...' is a string; any other word ends the keyword's reach.
            if after_password && word.eq_ignore_ascii_case("e") && bytes.get(i) == Some(&b'\'') {
                let end = quoted_end(bytes, i, true);
                out.push_str("'********'");
                i = end;
                after_password = false;
                continue;
            }
            after_password = word.eq_ignore_ascii_case("password");
            out.push_str(word);
        } else if c == b'\'' || c == b'$' && dollar_tag(bytes, i).is_some() {
            let end = if c == b'\'' {
                quoted_end(bytes, i, false)
            } else {
                let tag = dollar_tag(bytes, i).unwrap_or_default();
                text[i + tag.len()..]
                    .find(&tag)
                    .map_or(bytes.len(), |at| i + tag.len() + at + tag.len())
            };
            if after_password {
                out.push_str("'********'");
            } else {
                out.push_str(&text[i..end]);
            }
            after_password = false;
            i = end;
        } else if c == b'"' {
            let end = text[i + 1..]
                .find('"')
                .map_or(bytes.len(), |at| i + 1 + at + 1);
            out.push_str(&text[i..end]);
            after_password = false;
            i = end;
        } else {
            // Whitespace keeps the keyword's reach; anything else ends it.
            if !c.is_ascii_whitespace() {
                after_password = false;
            }
            let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[i..i + ch_len]);
            i += ch_len;
        }
    }
    out.into()
}

/// The end of the quoted string starting at `start` (its opening quote), past its closing
/// quote; `escapes`: backslash escapes the next byte (E'...').
fn quoted_end(bytes: &[u8], start: usize, escapes: bool) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if escapes => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b'\'' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The dollar-quote tag (`$$` or `$name$`) starting at `start`, if one does.
fn dollar_tag(bytes: &[u8], start: usize) -> Option<String> {
    let mut i = start + 1;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    (bytes.get(i) == Some(&b'$')).then(|| String::from_utf8_lossy(&bytes[start..=i]).into_owned())
}

#[cfg(test)]
mod mask_tests {
    use super::mask_passwords;

    #[test]
    fn passwords_are_masked_and_nothing_else() {
        for (given, masked) in [
            (
                "create role a login password 'sec''ret'",
                "create role a login password '********'",
            ),
            (
                "ALTER USER a WITH PASSWORD E'x\\'y' VALID UNTIL 'infinity'",
                "ALTER USER a WITH PASSWORD '********' VALID UNTIL 'infinity'",
            ),
            (
                "alter role a password $$p'w$$ login",
                "alter role a password '********' login",
            ),
            (
                "alter role a password $t$p$t$",
                "alter role a password '********'",
            ),
            (
                "select 'password', password from t where password = 'x'",
                "select 'password', password from t where password = 'x'",
            ),
            (
                "create role \"password\" password\n  'x'",
                "create role \"password\" password\n  '********'",
            ),
            ("alter role a password null", "alter role a password null"),
            ("select 1", "select 1"),
            (
                "alter role a password 'unterminated",
                "alter role a password '********'",
            ),
        ] {
            assert_eq!(mask_passwords(given), masked, "{given}");
        }
    }
}
