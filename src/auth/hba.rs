//! `pg_hba.conf`, PostgreSQL's host-based authentication file: its parser, and the lookup
//! of the line that decides how a connection authenticates.
//!
//! The format is PostgreSQL 15's (`src/backend/libpq/hba.c`), so that an existing file
//! can be used as it is. One record a line:
//!
//! ```text
//! local      DATABASE  USER                  METHOD  [OPTIONS]
//! host       DATABASE  USER  ADDRESS         METHOD  [OPTIONS]
//! hostssl    DATABASE  USER  ADDRESS         METHOD  [OPTIONS]
//! hostnossl  DATABASE  USER  IP-ADDRESS  IP-MASK  METHOD  [OPTIONS]
//! ```
//!
//! Tokenizing, as PostgreSQL's `tokenize_auth_file` and `next_token`:
//!
//! - Lines end at `\n`; trailing `\r`s are stripped, so CRLF files read the same. A line
//!   whose last character is `\` continues on the next one (the backslash is dropped and
//!   nothing put in its place); the record takes the number of its first physical line.
//! - `#` starts a comment to the end of the line, unless quoted. Blank and comment-only
//!   lines are skipped.
//! - Fields are separated by blanks (space, tab, carriage return). A field is a list of
//!   tokens separated by commas; blanks may follow a comma but not precede it
//!   (`a, b` is one field of two tokens, `a ,b` two fields).
//! - Double quotes protect blanks, commas and `#`; `""` inside quotes is one `"`. A token
//!   that starts with a quote is "quoted": it is never a keyword, so `"all"` names a
//!   database or role called `all`, `"+g"` a role called `+g`.
//! - An unquoted token of more than one character starting with `@` asks for file
//!   inclusion, which is not supported here (an error).
//!
//! Fields, in order: the connection type (`local`, `host`, `hostssl`, `hostnossl`;
//! `hostnogssenc` is read as `host` since no connection here uses GSSAPI encryption, and
//! `hostgssenc` lines are checked and then left out, since they can never match);
//! databases (`all`, `sameuser`, `samerole` or its old name `samegroup`, `replication`,
//! or names); users (`all`, `+group` for members of a role, or names); for non-local
//! lines the address (`all`, `samehost`, an address with a CIDR suffix, or an address
//! followed by a netmask field); the method; then `name=value` options, which are
//! checked as PostgreSQL checks them and kept.
//!
//! The first error in the file fails the whole file (PostgreSQL then keeps its old
//! rules, or refuses to start); so does a file with no records at all.
//!
//! Lookup ([`find`]) is PostgreSQL's `check_hba`: the first line whose connection type,
//! address, database and user all match wins; no line means the connection is rejected.
//! IPv4 clients that arrive on a dual-stack socket as IPv4-mapped IPv6 addresses
//! (`::ffff:a.b.c.d`) match IPv4 lines as the IPv4 address (PostgreSQL listens on
//! separate IPv4 and IPv6 sockets and never sees such addresses) and IPv6 lines as
//! themselves.
//!
//! Differences from PostgreSQL, all failing closed: host names (and PostgreSQL's
//! `.domain` suffix form) are an error rather than looked up; `samenet` is an error, as
//! it needs the machine's interfaces and their netmasks; `samehost` matches only the
//! loopback addresses `127.0.0.1` and `::1` rather than every address of every
//! interface; a netmask field must be contiguous ones then zeros; addresses are parsed
//! in the standard text forms only (no zone ids, no `inet_aton` shorthands such as
//! `127.1`); methods other than trust, reject, scram-sha-256, md5, password, cert and
//! peer (and `ident` on local lines, which PostgreSQL turns into `peer`) are errors.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectionType {
    /// Unix-domain socket connections.
    Local,
    /// Any TCP connection.
    Host,
    /// TCP connections using SSL.
    HostSsl,
    /// TCP connections not using SSL.
    HostNoSsl,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Method {
    Trust,
    Reject,
    ScramSha256,
    Md5,
    Password,
    Cert,
    Peer,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatabaseMatch {
    /// Any database, for connections that are not physical replication.
    All,
    /// The database named like the user.
    SameUser,
    /// The database named like a role the user is a member of (`samerole`,
    /// `samegroup`).
    SameRole,
    /// Physical replication connections (only these, and only this, match them).
    Replication,
    Name(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserMatch {
    All,
    Name(String),
    /// `+name`: members of role `name`, directly or not.
    Group(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddressMatch {
    /// `local` lines: no address.
    None,
    All,
    /// The machine's own addresses (here: the loopback addresses).
    SameHost,
    /// Never produced by [`parse`] (an error there); matches nothing.
    SameNet,
    /// `addr` with the first `prefix_len` bits significant.
    Net {
        addr: IpAddr,
        prefix_len: u8,
    },
}

/// One record of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HbaLine {
    /// The number of its (first) line in the file, from 1.
    pub line_number: usize,
    /// Its text, continuation lines joined, line ending stripped.
    pub raw: String,
    pub connection: ConnectionType,
    pub databases: Vec<DatabaseMatch>,
    pub users: Vec<UserMatch>,
    pub address: AddressMatch,
    pub method: Method,
    /// The `name=value` options after the method, in order. Checked as PostgreSQL
    /// checks them: `map` (peer and cert: a pg_ident.conf map name), `clientcert`
    /// (hostssl only: `verify-ca` or `verify-full`, only `verify-full` with cert) and
    /// `clientname` (hostssl only: `CN` or `DN`) are the ones a line here can carry.
    pub options: Vec<(String, String)>,
}

impl HbaLine {
    /// The value of option `name`, the last if given more than once (as PostgreSQL,
    /// where a later one overrides).
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HbaError {
    /// The line (the first of a continued record) the error is in; 0 when it concerns the
    /// whole file (no records).
    pub line_number: usize,
    pub message: String,
}

const NO_ENTRIES: &str = "configuration file contains no entries";

impl HbaError {
    pub(super) fn new(line_number: usize, message: impl Into<String>) -> HbaError {
        HbaError {
            line_number,
            message: message.into(),
        }
    }

    /// The error as PostgreSQL logs it, for the file at `path`:
    /// `<message> in line N of configuration file "<path>"`.
    pub fn describe(&self, path: &str) -> String {
        if self.line_number == 0 {
            if self.message == NO_ENTRIES {
                format!("configuration file \"{path}\" contains no entries")
            } else {
                format!("{} in configuration file \"{path}\"", self.message)
            }
        } else {
            format!(
                "{} in line {} of configuration file \"{path}\"",
                self.message, self.line_number
            )
        }
    }
}

impl fmt::Display for HbaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line_number == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "{} in line {}", self.message, self.line_number)
        }
    }
}

impl std::error::Error for HbaError {}

/// One token of a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) text: String,
    /// It began with a double quote: never a keyword.
    quoted: bool,
}

impl Token {
    fn is_keyword(&self, keyword: &str) -> bool {
        !self.quoted && self.text == keyword
    }
}

/// A record as tokenized: its fields, each a non-empty list of tokens, or the error that
/// stopped its tokenizing (reported in line order with the parsing errors).
pub(super) struct TokenizedLine {
    pub(super) line_number: usize,
    raw: String,
    pub(super) fields: Vec<Vec<Token>>,
    pub(super) error: Option<String>,
}

/// PostgreSQL's `pg_isblank`.
fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r')
}

/// A cursor over a line with C-string semantics: past the end reads 0.
struct Cursor<'a> {
    line: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    /// The next byte (0 at or past the end), stepping over it.
    fn next(&mut self) -> u8 {
        let c = self.line.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        c
    }

    fn at_end(&self) -> bool {
        self.pos >= self.line.len()
    }

    /// PostgreSQL's `next_token`: the next token and whether a comma ended it; None
    /// when the line (or its comment) ends first.
    fn next_token(&mut self) -> Option<(Token, bool)> {
        let mut in_quote = false;
        let mut was_quote = false;
        let mut saw_quote = false;
        let mut initial_quote = false;
        let mut terminating_comma = false;
        let mut buf: Vec<u8> = Vec::new();

        // Blanks and commas before the token.
        let mut c = self.next();
        while c != 0 && (is_blank(c) || c == b',') {
            c = self.next();
        }
        while c != 0 && (!is_blank(c) || in_quote) {
            if c == b'#' && !in_quote {
                // A comment: the rest of the line.
                self.pos = self.line.len() + 1;
                break;
            }
            if c == b',' && !in_quote {
                terminating_comma = true;
                break;
            }
            if c != b'"' || was_quote {
                buf.push(c);
            }
            // Inside quotes, "" is a literal quote.
            if in_quote && c == b'"' {
                was_quote = !was_quote;
            } else {
                was_quote = false;
            }
            if c == b'"' {
                in_quote = !in_quote;
                saw_quote = true;
                if buf.is_empty() {
                    initial_quote = true;
                }
            }
            c = self.next();
        }
        // Un-read the character that ended the token.
        self.pos = self.pos.saturating_sub(1);

        if saw_quote || !buf.is_empty() {
            let token = Token {
                text: String::from_utf8_lossy(&buf).into_owned(),
                quoted: initial_quote,
            };
            Some((token, terminating_comma))
        } else {
            None
        }
    }

    /// PostgreSQL's `next_field_expand`: the tokens of the next field (empty at the end
    /// of the line).
    fn next_field(&mut self) -> Result<Vec<Token>, String> {
        let mut tokens = Vec::new();
        while let Some((token, comma)) = self.next_token() {
            if !token.quoted && token.text.len() > 1 && token.text.starts_with('@') {
                return Err(format!(
                    "@file inclusion is not supported: \"{}\"",
                    token.text
                ));
            }
            tokens.push(token);
            if !comma {
                break;
            }
        }
        Ok(tokens)
    }
}

/// The file as records (blank and comment lines dropped).
pub(super) fn tokenize(text: &str) -> Vec<TokenizedLine> {
    let physical: Vec<&str> = text.split('\n').collect();
    let mut records = Vec::new();
    let mut next = 0;
    let mut line_number = 1;
    while next < physical.len() {
        let mut buf = String::new();
        let mut continuations = 0;
        while let Some(part) = physical.get(next) {
            next += 1;
            buf.push_str(part);
            let kept = buf.trim_end_matches(['\r', '\n']).len();
            buf.truncate(kept);
            if buf.ends_with('\\') {
                buf.pop();
                continuations += 1;
                continue;
            }
            break;
        }
        // The line is a C string there: a NUL ends it.
        if let Some(nul) = buf.find('\0') {
            buf.truncate(nul);
        }

        let mut cursor = Cursor {
            line: buf.as_bytes(),
            pos: 0,
        };
        let mut fields = Vec::new();
        let mut error = None;
        while !cursor.at_end() {
            match cursor.next_field() {
                Ok(field) if !field.is_empty() => fields.push(field),
                Ok(_) => {}
                Err(message) => {
                    error = Some(message);
                    break;
                }
            }
        }
        if !fields.is_empty() || error.is_some() {
            records.push(TokenizedLine {
                line_number,
                raw: buf.clone(),
                fields,
                error,
            });
        }
        line_number += continuations + 1;
    }
    records
}

/// Authentication methods PostgreSQL has that are not offered here.
const UNSUPPORTED_METHODS: &[&str] = &["ident", "gss", "sspi", "pam", "bsd", "ldap", "radius"];

/// Options of methods not offered here, with the methods PostgreSQL names in its error.
const FOREIGN_OPTIONS: &[(&str, &str)] = &[
    ("pamservice", "pam"),
    ("pam_use_hostname", "pam"),
    ("ldapurl", "ldap"),
    ("ldaptls", "ldap"),
    ("ldapscheme", "ldap"),
    ("ldapserver", "ldap"),
    ("ldapport", "ldap"),
    ("ldapbinddn", "ldap"),
    ("ldapbindpasswd", "ldap"),
    ("ldapsearchattribute", "ldap"),
    ("ldapsearchfilter", "ldap"),
    ("ldapbasedn", "ldap"),
    ("ldapprefix", "ldap"),
    ("ldapsuffix", "ldap"),
    ("krb_realm", "gssapi and sspi"),
    ("include_realm", "gssapi and sspi"),
    ("compat_realm", "sspi"),
    ("upn_username", "sspi"),
    ("radiusservers", "radius"),
    ("radiussecrets", "radius"),
    ("radiusidentifiers", "radius"),
    ("radiusports", "radius"),
];

fn invalid_auth_option(name: &str, methods: &str) -> String {
    format!("authentication option \"{name}\" is only valid for authentication methods {methods}")
}

/// The single token of a field that allows one, or PostgreSQL's error.
fn single<'t>(field: &'t [Token], what: &str) -> Result<&'t Token, String> {
    match field {
        [token] => Ok(token),
        _ => Err(format!("multiple values specified for {what}")),
    }
}

/// A netmask's prefix length, if its ones are contiguous.
fn mask_prefix(mask: IpAddr) -> Option<u8> {
    let (ones, zeros, bits) = match mask {
        IpAddr::V4(m) => {
            let m = u32::from(m);
            (m.leading_ones(), m.trailing_zeros(), 32)
        }
        IpAddr::V6(m) => {
            let m = u128::from(m);
            (m.leading_ones(), m.trailing_zeros(), 128)
        }
    };
    if ones + zeros == bits {
        u8::try_from(ones).ok()
    } else {
        None
    }
}

/// A CIDR suffix as PostgreSQL's `pg_sockaddr_cidr_mask` reads it (`strtol`: an
/// optional sign, then decimal digits), in range for the family.
fn cidr_prefix(bits: &str, addr: IpAddr) -> Option<u8> {
    let n: i64 = bits.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if (0..=max).contains(&n) {
        u8::try_from(n).ok()
    } else {
        None
    }
}

/// The address field (and, where it is a bare address, the netmask field after it).
fn parse_address<'f>(
    fields: &mut impl Iterator<Item = &'f Vec<Token>>,
) -> Result<AddressMatch, String> {
    let field = fields
        .next()
        .ok_or("end-of-line before IP address specification")?;
    let token = single(field, "host address")?;
    if token.is_keyword("all") {
        return Ok(AddressMatch::All);
    }
    if token.is_keyword("samehost") {
        return Ok(AddressMatch::SameHost);
    }
    if token.is_keyword("samenet") {
        return Err("samenet is not supported".to_string());
    }
    let text = token.text.as_str();
    let (addr_text, cidr) = match text.split_once('/') {
        Some((a, bits)) => (a, Some(bits)),
        None => (text, None),
    };
    let addr: IpAddr = match addr_text.parse() {
        Ok(addr) => addr,
        Err(_) => {
            let numeric = addr_text.contains(':')
                || addr_text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
            return Err(if numeric {
                format!("invalid IP address \"{addr_text}\"")
            } else {
                format!("host names in pg_hba.conf are not supported: \"{addr_text}\"")
            });
        }
    };
    if let Some(bits) = cidr {
        let prefix_len = cidr_prefix(bits, addr)
            .ok_or_else(|| format!("invalid CIDR mask in address \"{text}\""))?;
        return Ok(AddressMatch::Net { addr, prefix_len });
    }

    let field = fields
        .next()
        .ok_or("end-of-line before netmask specification")?;
    let token = single(field, "netmask")?;
    let mask: IpAddr = token
        .text
        .parse()
        .map_err(|_| format!("invalid IP mask \"{}\"", token.text))?;
    if mask.is_ipv4() != addr.is_ipv4() {
        return Err("IP address and mask do not match".to_string());
    }
    let prefix_len = mask_prefix(mask).ok_or_else(|| {
        format!(
            "invalid IP mask \"{}\": non-contiguous netmasks are not supported",
            token.text
        )
    })?;
    Ok(AddressMatch::Net { addr, prefix_len })
}

/// PostgreSQL's `parse_hba_auth_opt`, for the methods offered here.
fn check_option(name: &str, value: &str, hostssl: bool, method: &Method) -> Result<(), String> {
    match name {
        "map" => {
            if !matches!(method, Method::Peer | Method::Cert) {
                return Err(invalid_auth_option(
                    "map",
                    "ident, peer, gssapi, sspi, and cert",
                ));
            }
        }
        "clientcert" => {
            if !hostssl {
                return Err("clientcert can only be configured for \"hostssl\" rows".to_string());
            }
            match value {
                "verify-full" => {}
                "verify-ca" if *method == Method::Cert => {
                    return Err(
                        "clientcert only accepts \"verify-full\" when using \"cert\" authentication"
                            .to_string(),
                    );
                }
                "verify-ca" => {}
                _ => return Err(format!("invalid value for clientcert: \"{value}\"")),
            }
        }
        "clientname" => {
            if !hostssl {
                return Err("clientname can only be configured for \"hostssl\" rows".to_string());
            }
            if value != "CN" && value != "DN" {
                return Err(format!("invalid value for clientname: \"{value}\""));
            }
        }
        _ => {
            return Err(match FOREIGN_OPTIONS.iter().find(|(n, _)| *n == name) {
                Some((n, methods)) => invalid_auth_option(n, methods),
                None => format!("unrecognized authentication option name: \"{name}\""),
            });
        }
    }
    Ok(())
}

/// PostgreSQL's `parse_hba_line`. None for a line that is valid but can never match
/// (`hostgssenc`).
fn parse_line(line: &TokenizedLine) -> Result<Option<HbaLine>, String> {
    if let Some(error) = &line.error {
        return Err(error.clone());
    }
    let mut fields = line.fields.iter();

    let Some(field) = fields.next() else {
        return Err("invalid connection type \"\"".to_string());
    };
    let token = single(field, "connection type")?;
    let mut never_matches = false;
    let connection = match token.text.as_str() {
        "local" => ConnectionType::Local,
        "host" | "hostnogssenc" => ConnectionType::Host,
        "hostssl" => ConnectionType::HostSsl,
        "hostnossl" => ConnectionType::HostNoSsl,
        "hostgssenc" => {
            never_matches = true;
            ConnectionType::Host
        }
        other => return Err(format!("invalid connection type \"{other}\"")),
    };

    let field = fields
        .next()
        .ok_or("end-of-line before database specification")?;
    let databases = field
        .iter()
        .map(|t| {
            if t.quoted {
                return DatabaseMatch::Name(t.text.clone());
            }
            match t.text.as_str() {
                "all" => DatabaseMatch::All,
                "sameuser" => DatabaseMatch::SameUser,
                "samerole" | "samegroup" => DatabaseMatch::SameRole,
                "replication" => DatabaseMatch::Replication,
                _ => DatabaseMatch::Name(t.text.clone()),
            }
        })
        .collect();

    let field = fields
        .next()
        .ok_or("end-of-line before role specification")?;
    let users = field
        .iter()
        .map(|t| {
            if t.quoted {
                UserMatch::Name(t.text.clone())
            } else if let Some(group) = t.text.strip_prefix('+') {
                UserMatch::Group(group.to_string())
            } else if t.text == "all" {
                UserMatch::All
            } else {
                UserMatch::Name(t.text.clone())
            }
        })
        .collect();

    let address = if connection == ConnectionType::Local {
        AddressMatch::None
    } else {
        parse_address(&mut fields)?
    };

    let field = fields
        .next()
        .ok_or("end-of-line before authentication method")?;
    let token = single(field, "authentication type")?;
    let local = connection == ConnectionType::Local;
    let method = match token.text.as_str() {
        "trust" => Method::Trust,
        "reject" => Method::Reject,
        "scram-sha-256" => Method::ScramSha256,
        "md5" => Method::Md5,
        "password" => Method::Password,
        "cert" => Method::Cert,
        "peer" => Method::Peer,
        // PostgreSQL turns ident on local lines into peer.
        "ident" if local => Method::Peer,
        other if UNSUPPORTED_METHODS.contains(&other) => {
            return Err(format!(
                "authentication method \"{other}\" is not supported"
            ));
        }
        other => return Err(format!("invalid authentication method \"{other}\"")),
    };
    if !local && method == Method::Peer {
        return Err("peer authentication is only supported on local sockets".to_string());
    }
    let hostssl = connection == ConnectionType::HostSsl && !never_matches;
    if !hostssl && method == Method::Cert {
        return Err("cert authentication is only supported on hostssl connections".to_string());
    }

    let mut options = Vec::new();
    for token in fields.flatten() {
        let Some((name, value)) = token.text.split_once('=') else {
            return Err(format!(
                "authentication option not in name=value format: {}",
                token.text
            ));
        };
        check_option(name, value, hostssl, &method)?;
        options.push((name.to_string(), value.to_string()));
    }

    if never_matches {
        return Ok(None);
    }
    Ok(Some(HbaLine {
        line_number: line.line_number,
        raw: line.raw.clone(),
        connection,
        databases,
        users,
        address,
        method,
        options,
    }))
}

/// The records of a whole `pg_hba.conf`, in order; the first error (by line) fails it,
/// as does a file without records.
pub fn parse(text: &str) -> Result<Vec<HbaLine>, HbaError> {
    let records = tokenize(text);
    if records.is_empty() {
        return Err(HbaError::new(0, NO_ENTRIES));
    }
    let mut lines = Vec::with_capacity(records.len());
    for record in &records {
        match parse_line(record) {
            Ok(Some(line)) => lines.push(line),
            Ok(None) => {}
            Err(message) => return Err(HbaError::new(record.line_number, message)),
        }
    }
    Ok(lines)
}

/// What [`find`] needs to know of a connection.
#[derive(Clone, Copy, Debug)]
pub struct Connection<'a> {
    /// Over a Unix-domain socket (else TCP).
    pub local: bool,
    /// The client's address (TCP).
    pub address: Option<IpAddr>,
    pub ssl: bool,
    pub database: &'a str,
    pub user: &'a str,
    /// A physical replication connection (`replication=true`); a logical one
    /// (`replication=database`) is matched like an ordinary one, as in PostgreSQL.
    pub replication: bool,
}

/// Whether `client` is in `net`/`prefix_len` (same family only).
fn in_net(client: IpAddr, net: IpAddr, prefix_len: u8) -> bool {
    match (client, net) {
        (IpAddr::V4(c), IpAddr::V4(n)) => {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(prefix_len.min(32)))
                .unwrap_or(0);
            u32::from(c) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(c), IpAddr::V6(n)) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(prefix_len.min(128)))
                .unwrap_or(0);
            u128::from(c) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// The address itself, and for an IPv4-mapped IPv6 address also its IPv4 form.
fn address_forms(address: IpAddr) -> impl Iterator<Item = IpAddr> {
    let mapped = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4),
        IpAddr::V4(_) => None,
    };
    std::iter::once(address).chain(mapped)
}

fn address_matches(line: &AddressMatch, address: Option<IpAddr>) -> bool {
    match line {
        AddressMatch::All => true,
        AddressMatch::None | AddressMatch::SameNet => false,
        AddressMatch::SameHost => address.is_some_and(|a| {
            address_forms(a).any(|a| {
                a == IpAddr::V4(Ipv4Addr::LOCALHOST) || a == IpAddr::V6(Ipv6Addr::LOCALHOST)
            })
        }),
        AddressMatch::Net { addr, prefix_len } => {
            address.is_some_and(|a| address_forms(a).any(|a| in_net(a, *addr, *prefix_len)))
        }
    }
}

fn database_matches(
    databases: &[DatabaseMatch],
    conn: &Connection,
    is_member: &dyn Fn(&str, &str) -> bool,
) -> bool {
    databases.iter().any(|d| {
        if conn.replication {
            // Physical replication matches the replication keyword and nothing else.
            return *d == DatabaseMatch::Replication;
        }
        match d {
            DatabaseMatch::All => true,
            DatabaseMatch::SameUser => conn.database == conn.user,
            DatabaseMatch::SameRole => is_member(conn.user, conn.database),
            DatabaseMatch::Replication => false,
            DatabaseMatch::Name(name) => name == conn.database,
        }
    })
}

fn user_matches(
    users: &[UserMatch],
    conn: &Connection,
    is_member: &dyn Fn(&str, &str) -> bool,
) -> bool {
    users.iter().any(|u| match u {
        UserMatch::All => true,
        UserMatch::Name(name) => name == conn.user,
        UserMatch::Group(group) => is_member(conn.user, group),
    })
}

fn line_matches(line: &HbaLine, conn: &Connection, is_member: &dyn Fn(&str, &str) -> bool) -> bool {
    let connection_ok = match line.connection {
        ConnectionType::Local => conn.local,
        ConnectionType::Host => !conn.local,
        ConnectionType::HostSsl => !conn.local && conn.ssl,
        ConnectionType::HostNoSsl => !conn.local && !conn.ssl,
    };
    connection_ok
        && (line.connection == ConnectionType::Local
            || address_matches(&line.address, conn.address))
        && database_matches(&line.databases, conn, is_member)
        && user_matches(&line.users, conn, is_member)
}

/// The first line that matches `conn` (None: no line; the caller rejects the
/// connection). `is_member(role, group)`: whether `role` is a member of `group`,
/// directly or not, for `+group` and `samerole`. PostgreSQL counts a role as a member
/// of itself and answers no when either role does not exist; the callback should too.
pub fn find<'l>(
    lines: &'l [HbaLine],
    conn: &Connection,
    is_member: &dyn Fn(&str, &str) -> bool,
) -> Option<&'l HbaLine> {
    lines
        .iter()
        .find(|line| line_matches(line, conn, is_member))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_groups(_: &str, _: &str) -> bool {
        false
    }

    fn tcp<'a>(address: &str, ssl: bool, database: &'a str, user: &'a str) -> Connection<'a> {
        Connection {
            local: false,
            address: Some(address.parse().expect("test address")),
            ssl,
            database,
            user,
            replication: false,
        }
    }

    fn unix<'a>(database: &'a str, user: &'a str) -> Connection<'a> {
        Connection {
            local: true,
            address: None,
            ssl: false,
            database,
            user,
            replication: false,
        }
    }

    /// The line number `conn` finds in `text`, or None.
    fn found(text: &str, conn: &Connection) -> Option<usize> {
        let lines = parse(text).expect("valid file");
        find(&lines, conn, &no_groups).map(|l| l.line_number)
    }

    fn error(text: &str) -> (usize, String) {
        let e = parse(text).expect_err("invalid file");
        (e.line_number, e.message)
    }

    #[test]
    fn parses_each_kind_of_line() {
        let text = "\
# TYPE  DATABASE        USER            ADDRESS                 METHOD

local   all             all                                     peer
host    all             all             127.0.0.1/32            scram-sha-256
hostssl sales,\"my db\"   +staff,bob      10.0.0.0 255.0.0.0       cert map=certmap clientcert=verify-full
hostnossl replication   all             ::1/128                 md5   # trailing comment
host    sameuser        all             all                     password
host    samerole,samegroup all          samehost                reject
local   \"all\"           \"+x\",\"all\"                            trust
";
        let lines = parse(text).expect("valid");
        assert_eq!(lines.len(), 7);

        assert_eq!(lines[0].line_number, 3);
        assert_eq!(lines[0].connection, ConnectionType::Local);
        assert_eq!(lines[0].databases, vec![DatabaseMatch::All]);
        assert_eq!(lines[0].users, vec![UserMatch::All]);
        assert_eq!(lines[0].address, AddressMatch::None);
        assert_eq!(lines[0].method, Method::Peer);
        assert!(lines[0].options.is_empty());

        assert_eq!(lines[1].connection, ConnectionType::Host);
        assert_eq!(
            lines[1].address,
            AddressMatch::Net {
                addr: "127.0.0.1".parse().expect("ip"),
                prefix_len: 32
            }
        );
        assert_eq!(lines[1].method, Method::ScramSha256);

        assert_eq!(lines[2].connection, ConnectionType::HostSsl);
        assert_eq!(
            lines[2].databases,
            vec![
                DatabaseMatch::Name("sales".into()),
                DatabaseMatch::Name("my db".into())
            ]
        );
        assert_eq!(
            lines[2].users,
            vec![
                UserMatch::Group("staff".into()),
                UserMatch::Name("bob".into())
            ]
        );
        assert_eq!(
            lines[2].address,
            AddressMatch::Net {
                addr: "10.0.0.0".parse().expect("ip"),
                prefix_len: 8
            }
        );
        assert_eq!(lines[2].method, Method::Cert);
        assert_eq!(
            lines[2].options,
            vec![
                ("map".to_string(), "certmap".to_string()),
                ("clientcert".to_string(), "verify-full".to_string())
            ]
        );
        assert_eq!(lines[2].option("clientcert"), Some("verify-full"));
        assert_eq!(lines[2].option("clientname"), None);

        assert_eq!(lines[3].connection, ConnectionType::HostNoSsl);
        assert_eq!(lines[3].databases, vec![DatabaseMatch::Replication]);
        assert_eq!(
            lines[3].address,
            AddressMatch::Net {
                addr: "::1".parse().expect("ip"),
                prefix_len: 128
            }
        );
        assert_eq!(lines[3].method, Method::Md5);
        assert_eq!(
            lines[3].raw,
            "hostnossl replication   all             ::1/128                 md5   # trailing comment"
        );

        assert_eq!(lines[4].databases, vec![DatabaseMatch::SameUser]);
        assert_eq!(lines[4].address, AddressMatch::All);
        assert_eq!(lines[4].method, Method::Password);

        assert_eq!(
            lines[5].databases,
            vec![DatabaseMatch::SameRole, DatabaseMatch::SameRole]
        );
        assert_eq!(lines[5].address, AddressMatch::SameHost);
        assert_eq!(lines[5].method, Method::Reject);

        // Quoted keywords are names.
        assert_eq!(lines[6].databases, vec![DatabaseMatch::Name("all".into())]);
        assert_eq!(
            lines[6].users,
            vec![UserMatch::Name("+x".into()), UserMatch::Name("all".into())]
        );
        assert_eq!(lines[6].method, Method::Trust);
    }

    #[test]
    fn tokenizing() {
        let text = concat!(
            "local \"a \"\"quoted\"\" #db\",b, c  x,\"y,z\" trust\n",
            "local a\"b\"c \"\" trust\n",
            "local d ,e trust\n",
            "  \t  # only a comment\n",
            "local all all ident\n",
        );
        let lines = parse(text);
        // Line 3: "d" then ",e" — a blank before the comma ends the field, so "e" is
        // the user and "trust" is the method: still valid.
        let lines = lines.expect("valid");
        assert_eq!(
            lines[0].databases,
            vec![
                DatabaseMatch::Name("a \"quoted\" #db".into()),
                DatabaseMatch::Name("b".into()),
                DatabaseMatch::Name("c".into())
            ]
        );
        assert_eq!(
            lines[0].users,
            vec![UserMatch::Name("x".into()), UserMatch::Name("y,z".into())]
        );
        assert_eq!(lines[1].databases, vec![DatabaseMatch::Name("abc".into())]);
        assert_eq!(lines[1].users, vec![UserMatch::Name(String::new())]);
        assert_eq!(lines[2].databases, vec![DatabaseMatch::Name("d".into())]);
        assert_eq!(lines[2].users, vec![UserMatch::Name("e".into())]);
        // ident on a local line is peer, as in PostgreSQL.
        assert_eq!(lines[3].line_number, 5);
        assert_eq!(lines[3].method, Method::Peer);

        // Unquoted text after a quote is no keyword escape: al"l" is the keyword.
        let lines = parse("local al\"l\" all trust").expect("valid");
        assert_eq!(lines[0].databases, vec![DatabaseMatch::All]);
        // A quoted @ is a name; a lone @ too.
        let lines = parse("local \"@x\",@ all trust").expect("valid");
        assert_eq!(
            lines[0].databases,
            vec![
                DatabaseMatch::Name("@x".into()),
                DatabaseMatch::Name("@".into())
            ]
        );
    }

    #[test]
    fn continuation_and_crlf() {
        let text = "# comment\r\nlocal all \\\r\n   all trust\r\nhost all all \\\n127.0.0.1/32 \\\nmd5\r\n\r\nhost all all ::1/128 md5";
        let lines = parse(text).expect("valid");
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].line_number, 2);
        assert_eq!(lines[0].raw, "local all    all trust");
        assert_eq!(lines[1].line_number, 4);
        assert_eq!(lines[1].method, Method::Md5);
        assert_eq!(lines[2].line_number, 8);
        // A continued line's error is reported at its first line; later lines count on.
        let (line, _) = error("local all all trust\nhost all \\\nall \\\nbogus md5\nnope");
        assert_eq!(line, 2);
        let (line, message) =
            error("local all all trust\r\nhost all \\\r\nall all md5\r\nnope\r\n");
        assert_eq!(
            (line, message.as_str()),
            (4, "invalid connection type \"nope\"")
        );
        // A backslash at the very end is dropped.
        assert_eq!(parse("local all all trust\\").expect("valid").len(), 1);
    }

    #[test]
    fn addresses() {
        let text = "\
host all all 192.168.1.5/24 trust
host all all 10.1.2.3 255.255.0.0 md5
host all all fe80::/10 password
host all all 2001:db8::1 ffff:ffff:ffff:ffff:: scram-sha-256
host all all 0.0.0.0/0 reject
";
        let c = |a: &str| found(text, &tcp(a, false, "db", "u"));
        assert_eq!(c("192.168.1.200"), Some(1));
        assert_eq!(c("192.168.2.1"), Some(5));
        assert_eq!(c("10.1.99.99"), Some(2));
        assert_eq!(c("10.2.0.1"), Some(5));
        assert_eq!(c("fe80::1234"), Some(3));
        assert_eq!(c("2001:db8::ffff"), Some(4));
        assert_eq!(c("2001:db9::1"), None);
        // IPv4-mapped IPv6 clients match IPv4 lines.
        assert_eq!(c("::ffff:192.168.1.7"), Some(1));
        assert_eq!(c("::ffff:10.1.0.1"), Some(2));
        assert_eq!(c("::ffff:8.8.8.8"), Some(5));
        // No address known: only "all" lines can match.
        let mut conn = tcp("1.2.3.4", false, "db", "u");
        conn.address = None;
        assert_eq!(found(text, &conn), None);
        assert_eq!(found("host all all all trust", &conn), Some(1));

        // /0 and an all-zero netmask match everything of their family.
        assert_eq!(
            found("host all all ::/0 trust", &tcp("::2", false, "d", "u")),
            Some(1)
        );
        assert_eq!(
            found(
                "host all all 0.0.0.0 0.0.0.0 trust",
                &tcp("9.9.9.9", false, "d", "u")
            ),
            Some(1)
        );
        assert_eq!(
            found("host all all ::/0 trust", &tcp("9.9.9.9", false, "d", "u")),
            None
        );

        // samehost: the loopback addresses.
        let same = "host all all samehost trust";
        assert_eq!(found(same, &tcp("127.0.0.1", false, "d", "u")), Some(1));
        assert_eq!(found(same, &tcp("::1", false, "d", "u")), Some(1));
        assert_eq!(
            found(same, &tcp("::ffff:127.0.0.1", false, "d", "u")),
            Some(1)
        );
        assert_eq!(found(same, &tcp("10.0.0.1", false, "d", "u")), None);
    }

    #[test]
    fn connection_types() {
        let text = "\
local all all trust
hostssl all all all cert
hostnossl all all all md5
host all all all reject
";
        assert_eq!(found(text, &unix("d", "u")), Some(1));
        assert_eq!(found(text, &tcp("1.2.3.4", true, "d", "u")), Some(2));
        assert_eq!(found(text, &tcp("1.2.3.4", false, "d", "u")), Some(3));
        assert_eq!(found("host all all all trust", &unix("d", "u")), None);
        assert_eq!(
            found("host all all all trust", &tcp("::1", true, "d", "u")),
            Some(1)
        );
        assert_eq!(
            found("local all all trust", &tcp("::1", false, "d", "u")),
            None
        );
        assert_eq!(
            found("hostssl all all all trust", &tcp("::1", false, "d", "u")),
            None
        );
        assert_eq!(
            found("hostnossl all all all trust", &tcp("::1", true, "d", "u")),
            None
        );
        // hostnogssenc is host; hostgssenc lines never match and are left out.
        let lines =
            parse("hostgssenc all all all trust\nhostnogssenc all all all md5").expect("valid");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].line_number, 2);
        assert_eq!(lines[0].connection, ConnectionType::Host);
    }

    #[test]
    fn first_match_wins_and_no_match() {
        let text = "\
host sales alice 10.0.0.0/8 reject
host sales all 10.0.0.0/8 md5
host all bob 10.0.0.0/8 trust
";
        assert_eq!(
            found(text, &tcp("10.1.1.1", false, "sales", "alice")),
            Some(1)
        );
        assert_eq!(
            found(text, &tcp("10.1.1.1", false, "sales", "carol")),
            Some(2)
        );
        assert_eq!(
            found(text, &tcp("10.1.1.1", false, "sales", "bob")),
            Some(2)
        );
        assert_eq!(
            found(text, &tcp("10.1.1.1", false, "other", "bob")),
            Some(3)
        );
        assert_eq!(found(text, &tcp("10.1.1.1", false, "other", "carol")), None);
        assert_eq!(found(text, &tcp("11.1.1.1", false, "sales", "alice")), None);
        // Names are case-sensitive.
        assert_eq!(found(text, &tcp("10.1.1.1", false, "Sales", "alice")), None);
    }

    #[test]
    fn replication_and_all() {
        let text = "\
local all all md5
local replication all trust
";
        let mut conn = unix("whatever", "rep");
        assert_eq!(found(text, &conn), Some(1));
        conn.replication = true;
        assert_eq!(found(text, &conn), Some(2));
        // A physical replication connection matches nothing but the keyword, not even a
        // database called "replication" by name.
        assert_eq!(found("local \"replication\" all trust", &conn), None);
        assert_eq!(
            found("local replication all trust", &unix("replication", "u")),
            None
        );
        assert_eq!(
            found("local \"replication\" all trust", &unix("replication", "u")),
            Some(1)
        );
    }

    #[test]
    fn groups_sameuser_samerole() {
        let is_member = |role: &str, group: &str| {
            role == group || (role == "alice" && (group == "staff" || group == "sales"))
        };
        let lines = parse(
            "\
local all +staff md5
local sameuser all trust
local samerole all password
local all all reject
",
        )
        .expect("valid");
        let f =
            |db: &str, user: &str| find(&lines, &unix(db, user), &is_member).map(|l| l.line_number);
        assert_eq!(f("x", "alice"), Some(1));
        assert_eq!(f("staff", "staff"), Some(1));
        assert_eq!(f("bob", "bob"), Some(2));
        assert_eq!(f("sales", "carol"), Some(4));
        let lines = parse("local samerole all password\nlocal all all reject").expect("valid");
        assert_eq!(
            find(&lines, &unix("sales", "alice"), &is_member).map(|l| l.line_number),
            Some(1)
        );
        assert_eq!(
            find(&lines, &unix("sales", "bob"), &is_member).map(|l| l.line_number),
            Some(2)
        );
    }

    #[test]
    fn errors() {
        let cases: &[(&str, usize, &str)] = &[
            ("local all all trust\nnope all all trust", 2, "invalid connection type \"nope\""),
            ("local,host all all trust", 1, "multiple values specified for connection type"),
            ("\n\nlocal", 3, "end-of-line before database specification"),
            ("local all # comment", 1, "end-of-line before role specification"),
            ("host all all", 1, "end-of-line before IP address specification"),
            ("local all all", 1, "end-of-line before authentication method"),
            ("host all all 127.0.0.1/32", 1, "end-of-line before authentication method"),
            ("host all all 127.0.0.1", 1, "end-of-line before netmask specification"),
            ("host all all 1.2.3.4,5.6.7.8 trust", 1, "multiple values specified for host address"),
            ("host all all 1.2.3.4 255.0.0.0,255.255.0.0 trust", 1, "multiple values specified for netmask"),
            ("host all all 1.2.3.4/32 trust,md5", 1, "multiple values specified for authentication type"),
            ("host all all 1.2.3.256/32 trust", 1, "invalid IP address \"1.2.3.256\""),
            ("host all all ::g/128 trust", 1, "invalid IP address \"::g\""),
            ("host all all 1.2.3.4/33 trust", 1, "invalid CIDR mask in address \"1.2.3.4/33\""),
            ("host all all ::1/129 trust", 1, "invalid CIDR mask in address \"::1/129\""),
            ("host all all 1.2.3.4/ trust", 1, "invalid CIDR mask in address \"1.2.3.4/\""),
            ("host all all 1.2.3.4/x trust", 1, "invalid CIDR mask in address \"1.2.3.4/x\""),
            ("host all all 1.2.3.4/-1 trust", 1, "invalid CIDR mask in address \"1.2.3.4/-1\""),
            ("host all all 1.2.3.4 255.0.0 trust", 1, "invalid IP mask \"255.0.0\""),
            ("host all all 1.2.3.4 255.0.255.0 trust", 1, "invalid IP mask \"255.0.255.0\": non-contiguous netmasks are not supported"),
            ("host all all 1.2.3.4 ffff:: trust", 1, "IP address and mask do not match"),
            ("host all all db.example.com trust", 1, "host names in pg_hba.conf are not supported: \"db.example.com\""),
            ("host all all .example.com trust", 1, "host names in pg_hba.conf are not supported: \".example.com\""),
            ("host all all \"all\" trust", 1, "host names in pg_hba.conf are not supported: \"all\""),
            ("host all all samenet trust", 1, "samenet is not supported"),
            ("host all all all ldap", 1, "authentication method \"ldap\" is not supported"),
            ("host all all all ident", 1, "authentication method \"ident\" is not supported"),
            ("local all all radius", 1, "authentication method \"radius\" is not supported"),
            ("local all all gss", 1, "authentication method \"gss\" is not supported"),
            ("local all all md6", 1, "invalid authentication method \"md6\""),
            ("local all all \"\"", 1, "invalid authentication method \"\""),
            ("local all all 127.0.0.1/32 trust", 1, "invalid authentication method \"127.0.0.1/32\""),
            ("host all all all peer", 1, "peer authentication is only supported on local sockets"),
            ("host all all all cert", 1, "cert authentication is only supported on hostssl connections"),
            ("local all all cert", 1, "cert authentication is only supported on hostssl connections"),
            ("hostgssenc all all all cert", 1, "cert authentication is only supported on hostssl connections"),
            ("local @dbs all trust", 1, "@file inclusion is not supported: \"@dbs\""),
            ("local all all trust\nlocal all a,@users trust", 2, "@file inclusion is not supported: \"@users\""),
            ("local all all trust foo", 1, "authentication option not in name=value format: foo"),
            ("local all all trust foo=bar", 1, "unrecognized authentication option name: \"foo\""),
            ("local all all md5 map=x", 1, "authentication option \"map\" is only valid for authentication methods ident, peer, gssapi, sspi, and cert"),
            ("local all all md5 ldapserver=x", 1, "authentication option \"ldapserver\" is only valid for authentication methods ldap"),
            ("local all all md5 include_realm=0", 1, "authentication option \"include_realm\" is only valid for authentication methods gssapi and sspi"),
            ("host all all all md5 clientcert=verify-ca", 1, "clientcert can only be configured for \"hostssl\" rows"),
            ("hostssl all all all md5 clientcert=1", 1, "invalid value for clientcert: \"1\""),
            ("hostssl all all all cert clientcert=verify-ca", 1, "clientcert only accepts \"verify-full\" when using \"cert\" authentication"),
            ("local all all peer clientname=CN", 1, "clientname can only be configured for \"hostssl\" rows"),
            ("hostssl all all all md5 clientname=cn", 1, "invalid value for clientname: \"cn\""),
            ("", 0, "configuration file contains no entries"),
            ("# nothing\n\n   \n", 0, "configuration file contains no entries"),
        ];
        for (text, line, message) in cases {
            assert_eq!(error(text), (*line, message.to_string()), "{text:?}");
        }
        // The first error by line wins.
        assert_eq!(error("bad\nlocal @x all trust").0, 1);
        // Valid options.
        let lines = parse(
            "hostssl all all all md5 clientcert=verify-ca clientname=DN\nlocal all all peer map=m",
        )
        .expect("valid");
        assert_eq!(lines[0].option("clientname"), Some("DN"));
        assert_eq!(lines[1].option("map"), Some("m"));
    }

    #[test]
    fn error_display() {
        let e = parse("\nnope").expect_err("invalid");
        assert_eq!(e.to_string(), "invalid connection type \"nope\" in line 2");
        assert_eq!(
            e.describe("/etc/steadydb/pg_hba.conf"),
            "invalid connection type \"nope\" in line 2 of configuration file \"/etc/steadydb/pg_hba.conf\""
        );
        let e = parse("").expect_err("empty");
        assert_eq!(
            e.describe("pg_hba.conf"),
            "configuration file \"pg_hba.conf\" contains no entries"
        );
    }

    #[test]
    fn odd_input_never_panics() {
        for text in [
            "\"",
            "local \"all",
            "local all all trust \"",
            "\\",
            "\\\n\\\n\\",
            "host all all /",
            "host all all /32 trust",
            "host all all 1.2.3.4/99999999999999999999999 trust",
            "local all all trust\0 garbage",
            ",,,,",
            "local ,,, all trust",
            "#\n#\r\n",
            "\r\r\r\n",
            "host all all ::ffff:1.2.3.4/200 trust",
            "local é,ü +ö trust",
        ] {
            let _ = parse(text);
        }
        // NUL ends the line, as the C string it is in PostgreSQL.
        let lines = parse("local all all trust\0 garbage").expect("valid");
        assert_eq!(lines[0].raw, "local all all trust");
    }
}
