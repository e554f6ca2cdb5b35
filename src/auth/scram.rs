//! SCRAM-SHA-256 password verifiers and both sides of the SCRAM exchange (the server's,
//! and the client's that a standby and `steadydb basebackup` use, [`ScramClient`]), as
//! PostgreSQL speaks them (RFC 5802 with SHA-256, RFC 7677; PostgreSQL's
//! `src/backend/libpq/auth-scram.c` and `src/common/scram-common.c`), and the hashes of the
//! older `md5` method.
//!
//! # Verifiers
//!
//! A role's password is never stored: what is stored is a [`Verifier`], written
//! `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (base64 throughout), the
//! same text `pg_authid.rolpassword` holds, so that a verifier taken from PostgreSQL
//! (`pg_dumpall --roles-only`) logs in here and the other way round. From the password,
//! first normalized with SASLprep (RFC 4013; where SASLprep refuses the password, its raw
//! bytes are used, as PostgreSQL does):
//!
//! - `SaltedPassword = Hi(password, salt, iterations)` (PBKDF2 with HMAC-SHA-256),
//! - `ClientKey = HMAC(SaltedPassword, "Client Key")`, `StoredKey = SHA-256(ClientKey)`,
//! - `ServerKey = HMAC(SaltedPassword, "Server Key")`.
//!
//! `StoredKey` lets the server check a client's proof without being able to make one;
//! `ServerKey` lets the server prove to the client that it knows the verifier. The `md5`
//! method's stored form, `"md5" || hex(md5(password || user))`, is kept apart in
//! [`md5_verifier`] and [`md5_response`].
//!
//! # The exchange
//!
//! [`ScramServer`] runs one exchange, driven by the connection code:
//!
//! 1. the client's SASLInitialResponse (mechanism and client-first-message) goes to
//!    [`ScramServer::client_first`], which answers the server-first-message
//!    (`r=<client nonce><server nonce>,s=<salt>,i=<iterations>`) for
//!    AuthenticationSASLContinue;
//! 2. the client's SASLResponse (client-final-message) goes to
//!    [`ScramServer::client_final`], which checks the proof and answers the
//!    server-final-message (`v=<ServerSignature>`) for AuthenticationSASLFinal.
//!
//! Invariants:
//!
//! - Channel binding: over TLS the server offers `SCRAM-SHA-256-PLUS` (first) beside
//!   `SCRAM-SHA-256`, with `tls-server-end-point` data (the hash of its certificate,
//!   `auth::tls`). With PLUS the client's gs2 flag must be `p=tls-server-end-point`, and the
//!   final message's `c=` the gs2 header followed by that data, so a proof made through a
//!   man in the middle (whose certificate differs) fails. Without PLUS the flag is `n`
//!   (the client does not bind), or `y` (it could, but thinks the server cannot), which
//!   over TLS means someone removed PLUS from the offer and is refused, as PostgreSQL
//!   does; `c=` is then the gs2 header alone (`biws` or `eSws`).
//! - The user name in the client-first-message is ignored: the startup packet's user is
//!   the one authenticated (PostgreSQL does the same). An authorization identity (`a=`)
//!   and mandatory extensions (`m=`) are refused; optional extensions are skipped.
//! - The client nonce must be printable ASCII other than `,` (it may be empty, as
//!   PostgreSQL lets it be); the server appends 18 random bytes in base64.
//! - A role that does not exist, has no password or has a non-SCRAM one still gets a
//!   whole exchange, with a mock verifier whose salt is derived from the user name and a
//!   per-server secret (PostgreSQL's `scram_mock_salt`), so the same user always sees the
//!   same salt and an unknown user cannot be told from a wrong password; such an exchange
//!   fails at the proof, after the proof has been computed like any other.
//! - Proofs and keys are compared in constant time.
//! - Client input is parsed strictly and never trusted: every malformed message is a
//!   returned [`ScramError::Protocol`] (08P01, with PostgreSQL's message and detail), never
//!   a panic. A failed exchange is over: any later call is refused.
//!
//! Base64 from clients and in stored verifiers is decoded like PostgreSQL's
//! `pg_b64_decode` (blanks skipped, padding required); what the server writes is canonical
//! base64 with padding.

use std::borrow::Cow;
use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{Error, SqlState};

/// PostgreSQL's default `scram_iterations`.
pub const SCRAM_ITERATIONS: u32 = 4096;
/// Length of a generated salt, PostgreSQL's `SCRAM_DEFAULT_SALT_LEN`.
pub const SCRAM_SALT_BYTES: usize = 16;
/// The one SASL mechanism offered (in AuthenticationSASL).
pub const MECHANISM: &str = "SCRAM-SHA-256";
/// The mechanism with channel binding, offered over TLS.
pub const MECHANISM_PLUS: &str = "SCRAM-SHA-256-PLUS";

/// Length of SHA-256 output, and so of every SCRAM key, proof and signature.
const SCRAM_KEY_LEN: usize = 32;
/// Random bytes in the server's part of the nonce (`SCRAM_RAW_NONCE_LEN`).
const SCRAM_RAW_NONCE_LEN: usize = 18;
/// Length of an md5 verifier: "md5" and 32 lowercase hex digits.
const MD5_PASSWD_LEN: usize = 35;
/// The errmsg of most malformed-message errors; the `Protocol` string is this, ": " and
/// PostgreSQL's errdetail.
const MALFORMED: &str = "malformed SCRAM message";
/// The errmsg of a final message whose nonce is not the exchange's, likewise.
const INVALID_RESPONSE: &str = "invalid SCRAM response";
const NEGOTIATION: &str = "SCRAM channel binding negotiation error";
/// Refused with 0A000, not 08P01, by PostgreSQL.
const AUTHZID_UNSUPPORTED: &str = "client uses authorization identity, but it is not supported";
const EXTENSION_UNSUPPORTED: &str = "client requires an unsupported SCRAM extension";

type HmacSha256 = Hmac<Sha256>;

/// HMAC-SHA-256 of the concatenation of `parts` under `key`.
fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; SCRAM_KEY_LEN] {
    let mut mac =
        <HmacSha256 as KeyInit>::new_from_slice(key).expect("HMAC takes keys of any length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

fn sha256(data: &[u8]) -> [u8; SCRAM_KEY_LEN] {
    Sha256::digest(data).into()
}

/// RFC 5802's `Hi()`: PBKDF2-HMAC-SHA-256 with one block of output. At least one round
/// is computed whatever `iterations` is, as PostgreSQL's `scram_SaltedPassword` does.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; SCRAM_KEY_LEN] {
    let keyed =
        <HmacSha256 as KeyInit>::new_from_slice(password).expect("HMAC takes keys of any length");
    let mut first = keyed.clone();
    first.update(salt);
    first.update(&1u32.to_be_bytes());
    let mut u: [u8; SCRAM_KEY_LEN] = first.finalize().into_bytes().into();
    let mut result = u;
    for _ in 1..iterations {
        let mut mac = keyed.clone();
        mac.update(&u);
        u = mac.finalize().into_bytes().into();
        for (r, x) in result.iter_mut().zip(u.iter()) {
            *r ^= x;
        }
    }
    result
}

/// The password as SCRAM hashes it: SASLprep'd where SASLprep accepts it (an ASCII
/// password is unchanged), else its raw bytes, as PostgreSQL's `pg_saslprep` callers do.
/// A non-empty password that SASLprep maps to nothing counts as refused, as there.
fn prepare_password(password: &str) -> Cow<'_, str> {
    match stringprep::saslprep(password) {
        Ok(prepared) if !prepared.is_empty() || password.is_empty() => prepared,
        _ => Cow::Borrowed(password),
    }
}

/// `SaltedPassword` for `password`.
fn salted_password(password: &str, salt: &[u8], iterations: u32) -> [u8; SCRAM_KEY_LEN] {
    hi(prepare_password(password).as_bytes(), salt, iterations)
}

fn base64_value(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Base64 decoding exactly as PostgreSQL's `pg_b64_decode`: spaces, tabs and line ends
/// are skipped, `=` may only end a group after two or three symbols, the input must end
/// on a whole group. None where PostgreSQL reports an error.
fn pg_b64_decode(src: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3 + 3);
    let mut buf: u32 = 0;
    let mut pos = 0;
    let mut end = 0;
    for &c in src {
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        let b = if c == b'=' {
            if end == 0 {
                end = match pos {
                    2 => 1,
                    3 => 2,
                    _ => return None,
                };
            }
            0
        } else {
            base64_value(c)?
        };
        buf = (buf << 6) + b;
        pos += 1;
        if pos == 4 {
            out.push((buf >> 16) as u8);
            if end == 0 || end > 1 {
                out.push((buf >> 8) as u8);
            }
            if end == 0 || end > 2 {
                out.push(buf as u8);
            }
            buf = 0;
            pos = 0;
        }
    }
    if pos != 0 {
        return None;
    }
    Some(out)
}

/// A SCRAM key from base64: exactly 32 bytes.
fn decode_key(text: &[u8]) -> Option<[u8; SCRAM_KEY_LEN]> {
    pg_b64_decode(text)?.try_into().ok()
}

/// A stored SCRAM-SHA-256 verifier:
/// `SCRAM-SHA-256$<iterations>:<salt base64>$<StoredKey base64>:<ServerKey base64>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    pub iterations: u32,
    pub salt: Vec<u8>,
    pub stored_key: [u8; 32],
    pub server_key: [u8; 32],
}

impl Verifier {
    /// The verifier of `password` (SASLprep'd where possible) for `salt` and `iterations`.
    pub fn new(password: &str, salt: &[u8], iterations: u32) -> Verifier {
        let salted = salted_password(password, salt, iterations);
        let client_key = hmac(&salted, &[b"Client Key"]);
        Verifier {
            iterations,
            salt: salt.to_vec(),
            stored_key: sha256(&client_key),
            server_key: hmac(&salted, &[b"Server Key"]),
        }
    }

    /// The verifier of `password` with a fresh random salt and [`SCRAM_ITERATIONS`].
    pub fn generate(password: &str) -> Verifier {
        let mut salt = [0u8; SCRAM_SALT_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut salt);
        Verifier::new(password, &salt, SCRAM_ITERATIONS)
    }

    /// The verifier `text` stands for, in the form [`Display`](fmt::Display) writes; None
    /// if it is not one. As PostgreSQL's `parse_scram_secret`: the salt may be any
    /// length (even empty), both keys must decode to exactly 32 bytes. The iteration
    /// count must be decimal digits and fit PostgreSQL's `int` (PostgreSQL's `strtol`
    /// would also take a sign or leading blanks, which no verifier it writes has).
    pub fn parse(text: &str) -> Option<Verifier> {
        let (scheme, rest) = text.split_once('$')?;
        let (iterations, rest) = rest.split_once(':')?;
        let (salt, rest) = rest.split_once('$')?;
        let (stored_key, server_key) = rest.split_once(':')?;
        if scheme != MECHANISM {
            return None;
        }
        if iterations.is_empty() || !iterations.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let iterations: u32 = iterations.parse().ok()?;
        if iterations > i32::MAX as u32 {
            return None;
        }
        Some(Verifier {
            iterations,
            salt: pg_b64_decode(salt.as_bytes())?,
            stored_key: decode_key(stored_key.as_bytes())?,
            server_key: decode_key(server_key.as_bytes())?,
        })
    }

    /// Whether `password` is the one this verifier was made from (the `password`
    /// method: the client sent it in clear). As PostgreSQL's
    /// `scram_verify_plain_password`, the ServerKey computed from it is compared with the
    /// stored one, in constant time.
    pub fn verify_password(&self, password: &str) -> bool {
        let salted = salted_password(password, &self.salt, self.iterations);
        let server_key = hmac(&salted, &[b"Server Key"]);
        bool::from(server_key.ct_eq(&self.server_key))
    }
}

impl fmt::Display for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}${}:{}${}:{}",
            MECHANISM,
            self.iterations,
            BASE64.encode(&self.salt),
            BASE64.encode(self.stored_key),
            BASE64.encode(self.server_key)
        )
    }
}

fn md5_hex(parts: &[&[u8]]) -> String {
    use md5::Digest as _;
    let mut hasher = md5::Md5::new();
    for part in parts {
        hasher.update(part);
    }
    hex::encode(hasher.finalize())
}

/// The md5 method's stored form: `"md5" + hex(md5(password || user))`, as PostgreSQL's
/// `pg_md5_encrypt(password, user)`. The password is not SASLprep'd.
pub fn md5_verifier(password: &str, user: &str) -> String {
    format!("md5{}", md5_hex(&[password.as_bytes(), user.as_bytes()]))
}

/// What an md5 client answers to AuthenticationMD5Password with `salt` when its
/// password's md5 verifier is `stored_md5`: `"md5" + hex(md5(hex part of stored ||
/// salt))`. The server compares this with the client's PasswordMessage (PostgreSQL's
/// `md5_crypt_verify`). `stored_md5` should be an md5 verifier (see [`is_verifier`]); if
/// it lacks the `md5` prefix, the whole of it is hashed.
pub fn md5_response(stored_md5: &str, salt: &[u8; 4]) -> String {
    let hex_part = stored_md5.strip_prefix("md5").unwrap_or(stored_md5);
    format!("md5{}", md5_hex(&[hex_part.as_bytes(), salt]))
}

/// Whether `text` is an md5 verifier: `md5` and 32 lowercase hex digits.
fn is_md5_verifier(text: &str) -> bool {
    text.len() == MD5_PASSWD_LEN
        && text.starts_with("md5")
        && text
            .bytes()
            .skip(3)
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether a password given in CREATE/ALTER ROLE ... PASSWORD is already a verifier, to
/// be stored as given: an md5 one or a SCRAM one that parses (PostgreSQL's
/// `get_password_type` saying anything but plaintext).
pub fn is_verifier(text: &str) -> bool {
    is_md5_verifier(text) || Verifier::parse(text).is_some()
}

/// Why an exchange ended without success.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScramError {
    /// A malformed or out-of-place message. The string is PostgreSQL's errmsg, followed,
    /// where PostgreSQL gives one, by ": " and its errdetail (for example
    /// `malformed SCRAM message: The message is empty.`); [`ScramError::into_error`]
    /// splits them again. 08P01, except that an authorization identity or a mandatory
    /// extension is 0A000 as in PostgreSQL.
    Protocol(String),
    /// A wrong proof, or no usable verifier (the mock exchange): 28P01.
    Failed,
}

impl ScramError {
    fn malformed(detail: impl fmt::Display) -> ScramError {
        ScramError::Protocol(format!("{MALFORMED}: {detail}"))
    }

    /// The error to send the client, as PostgreSQL words it; `user` is the startup
    /// packet's user name.
    pub fn into_error(self, user: &str) -> Error {
        match self {
            ScramError::Failed => Error::new(
                SqlState::INVALID_PASSWORD,
                format!("password authentication failed for user \"{user}\""),
            ),
            ScramError::Protocol(text) => {
                if text == AUTHZID_UNSUPPORTED || text == EXTENSION_UNSUPPORTED {
                    return Error::new(SqlState::FEATURE_NOT_SUPPORTED, text);
                }
                for message in [MALFORMED, INVALID_RESPONSE, NEGOTIATION] {
                    if let Some(detail) = text
                        .strip_prefix(message)
                        .and_then(|rest| rest.strip_prefix(": "))
                    {
                        return Error::new(SqlState::PROTOCOL_VIOLATION, message)
                            .with_detail(detail);
                    }
                }
                Error::new(SqlState::PROTOCOL_VIOLATION, text)
            }
        }
    }
}

impl fmt::Display for ScramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScramError::Protocol(text) => f.write_str(text),
            ScramError::Failed => f.write_str("SCRAM authentication failed"),
        }
    }
}

impl std::error::Error for ScramError {}

/// A byte of a message as PostgreSQL's `sanitize_char` shows it in an error: `'c'` if
/// printable ASCII, else `0xNN` (`0x00` for the end of the message).
fn sanitize_char(c: u8) -> String {
    if (0x21..=0x7e).contains(&c) {
        format!("'{}'", c as char)
    } else {
        format!("0x{c:02x}")
    }
}

/// A cursor over one client message, with C-string semantics: reading past the end gives
/// 0, as PostgreSQL's parser sees its terminating NUL (messages containing NUL are
/// refused before parsing).
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> u8 {
        self.bytes.get(self.pos).copied().unwrap_or(0)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Steps over the current byte; only called after `peek` saw a non-zero one.
    fn advance(&mut self) {
        if self.pos < self.bytes.len() {
            self.pos += 1;
        }
    }

    fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or(&[])
    }

    /// The value up to the next `,` (stepped over) or the end.
    fn value(&mut self) -> &'a [u8] {
        let rest = self.rest();
        let len = rest.iter().position(|&b| b == b',').unwrap_or(rest.len());
        let value = &rest[..len];
        self.pos += len;
        if !self.at_end() {
            self.pos += 1;
        }
        value
    }

    /// `attr=value` for the given attribute (PostgreSQL's `read_attr_value`).
    fn attr_value(&mut self, attr: u8) -> Result<&'a [u8], ScramError> {
        let c = self.peek();
        if c != attr {
            return Err(ScramError::malformed(format!(
                "Expected attribute \"{}\" but found \"{}\".",
                attr as char,
                sanitize_char(c)
            )));
        }
        self.advance();
        self.expect_equals(attr)?;
        Ok(self.value())
    }

    /// The `=` after attribute `attr`, consumed.
    fn expect_equals(&mut self, attr: u8) -> Result<(), ScramError> {
        if self.peek() != b'=' {
            return Err(ScramError::malformed(format!(
                "Expected character \"=\" for attribute \"{}\".",
                attr as char
            )));
        }
        self.advance();
        Ok(())
    }

    /// Any `attr=value` (PostgreSQL's `read_any_attr`): the attribute and the value.
    fn any_attr(&mut self) -> Result<(u8, &'a [u8]), ScramError> {
        let attr = self.peek();
        if attr == 0 {
            return Err(ScramError::malformed(
                "Attribute expected, but found end of string.",
            ));
        }
        if !attr.is_ascii_alphabetic() {
            return Err(ScramError::malformed(format!(
                "Attribute expected, but found invalid character \"{}\".",
                sanitize_char(attr)
            )));
        }
        self.advance();
        self.expect_equals(attr)?;
        Ok((attr, self.value()))
    }
}

/// RFC 5802's `printable`: ASCII 0x21-0x7E except `,`.
fn is_scram_printable(text: &[u8]) -> bool {
    text.iter()
        .all(|&c| (0x21..=0x7e).contains(&c) && c != b',')
}

/// PostgreSQL's checks on any SASL message before it is parsed.
fn check_message(message: &[u8]) -> Result<(), ScramError> {
    if message.is_empty() {
        return Err(ScramError::malformed("The message is empty."));
    }
    if message.contains(&0) {
        return Err(ScramError::malformed(
            "Message length does not match input length.",
        ));
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for the client-first-message.
    Init,
    /// Server-first-message sent; waiting for the client-final-message.
    SaltSent,
    /// Over, one way or the other.
    Finished,
}

/// The server's side of one SCRAM-SHA-256 exchange.
pub struct ScramServer {
    /// Over TLS: the `tls-server-end-point` data a PLUS exchange binds to.
    channel_binding: Option<Vec<u8>>,
    /// The client chose SCRAM-SHA-256-PLUS.
    binding_in_use: bool,
    /// The client-first-message's gs2 header (`n,,`, `y,,`, `p=tls-server-end-point,,`),
    /// which the final message's `c=` repeats.
    state: State,
    iterations: u32,
    salt: Vec<u8>,
    stored_key: [u8; SCRAM_KEY_LEN],
    server_key: [u8; SCRAM_KEY_LEN],
    /// No usable verifier: the exchange runs on a mock one and must fail at the proof.
    doomed: bool,
    gs2_header: Vec<u8>,
    client_nonce: Vec<u8>,
    /// The server's part of the nonce: base64 of random bytes.
    server_nonce: String,
    client_first_bare: Vec<u8>,
    server_first: Vec<u8>,
}

impl fmt::Debug for ScramServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keys stay out of logs.
        f.debug_struct("ScramServer")
            .field("state", &self.state)
            .field("iterations", &self.iterations)
            .field("doomed", &self.doomed)
            .finish_non_exhaustive()
    }
}

/// PostgreSQL's `scram_mock_salt`: the first bytes of SHA-256(user || secret), the same
/// for the same user as long as the secret lasts.
fn mock_salt(user: &str, mock_secret: &[u8]) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update(user.as_bytes());
    hasher.update(mock_secret);
    let digest = hasher.finalize();
    digest[..SCRAM_SALT_BYTES].to_vec()
}

impl ScramServer {
    /// An exchange for `user` against `verifier`, the role's. None when the role does
    /// not exist, has no password or has a non-SCRAM one: the exchange then runs on a
    /// mock verifier (salt from `user` and the per-server random `mock_secret`,
    /// [`SCRAM_ITERATIONS`]) and fails at the proof, so it looks like a wrong password.
    pub fn new(verifier: Option<Verifier>, user: &str, mock_secret: &[u8]) -> ScramServer {
        let (iterations, salt, stored_key, server_key, doomed) = match verifier {
            Some(v) => (v.iterations, v.salt, v.stored_key, v.server_key, false),
            None => (
                SCRAM_ITERATIONS,
                mock_salt(user, mock_secret),
                [0; SCRAM_KEY_LEN],
                [0; SCRAM_KEY_LEN],
                true,
            ),
        };
        let mut raw_nonce = [0u8; SCRAM_RAW_NONCE_LEN];
        rand::rngs::OsRng.fill_bytes(&mut raw_nonce);
        ScramServer {
            channel_binding: None,
            binding_in_use: false,
            gs2_header: Vec::new(),
            state: State::Init,
            iterations,
            salt,
            stored_key,
            server_key,
            doomed,
            client_nonce: Vec::new(),
            server_nonce: BASE64.encode(raw_nonce),
            client_first_bare: Vec::new(),
            server_first: Vec::new(),
        }
    }

    /// Offer channel binding to `data` (a TLS connection's `tls-server-end-point`).
    pub fn with_channel_binding(mut self, data: Option<Vec<u8>>) -> ScramServer {
        self.channel_binding = data;
        self
    }

    /// The mechanisms to offer, in PostgreSQL's order.
    pub fn mechanisms(&self) -> Vec<String> {
        let mut offered = Vec::new();
        if self.channel_binding.is_some() {
            offered.push(MECHANISM_PLUS.to_string());
        }
        offered.push(MECHANISM.to_string());
        offered
    }

    /// Fixes the server's part of the nonce, for test vectors.
    #[cfg(test)]
    fn with_server_nonce(mut self, nonce: &str) -> ScramServer {
        self.server_nonce = nonce.to_string();
        self
    }

    /// The SASLInitialResponse: the chosen `mechanism` and its data, the
    /// client-first-message. Returns the server-first-message, for
    /// AuthenticationSASLContinue. (A SASLInitialResponse without data, length -1, is
    /// answered by the caller with an empty AuthenticationSASLContinue; the client's
    /// next SASLResponse then comes here.)
    pub fn client_first(&mut self, mechanism: &str, message: &[u8]) -> Result<Vec<u8>, ScramError> {
        if self.state != State::Init {
            return Err(self.fail(ScramError::Protocol(
                "invalid SCRAM exchange state".to_string(),
            )));
        }
        match self.read_client_first(mechanism, message) {
            Ok(()) => {
                let mut first = b"r=".to_vec();
                first.extend_from_slice(&self.client_nonce);
                first.extend_from_slice(self.server_nonce.as_bytes());
                first.extend_from_slice(
                    format!(",s={},i={}", BASE64.encode(&self.salt), self.iterations).as_bytes(),
                );
                self.server_first = first.clone();
                self.state = State::SaltSent;
                Ok(first)
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// The SASLResponse: the client-final-message. Returns the server-final-message
    /// (`v=<ServerSignature>`), for AuthenticationSASLFinal, if the proof is right;
    /// [`ScramError::Failed`] if it is not (or the verifier is the mock one).
    pub fn client_final(&mut self, message: &[u8]) -> Result<Vec<u8>, ScramError> {
        if self.state != State::SaltSent {
            return Err(self.fail(ScramError::Protocol(
                "invalid SCRAM exchange state".to_string(),
            )));
        }
        let result = self.read_client_final(message);
        self.state = State::Finished;
        result
    }

    fn fail(&mut self, e: ScramError) -> ScramError {
        self.state = State::Finished;
        e
    }

    /// PostgreSQL's `scram_init` (the mechanism) and `read_client_first_message`.
    fn read_client_first(&mut self, mechanism: &str, message: &[u8]) -> Result<(), ScramError> {
        self.binding_in_use = match mechanism {
            MECHANISM => false,
            MECHANISM_PLUS if self.channel_binding.is_some() => true,
            _ => {
                return Err(ScramError::Protocol(
                    "client selected an invalid SASL authentication mechanism".to_string(),
                ))
            }
        };
        check_message(message)?;
        let mut r = Reader {
            bytes: message,
            pos: 0,
        };

        // gs2-cbind-flag.
        let flag = r.peek();
        let without_binding_data = || {
            ScramError::malformed(
                "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data.",
            )
        };
        match flag {
            b'n' | b'y' => {
                if self.binding_in_use {
                    return Err(without_binding_data());
                }
                if flag == b'y' && self.channel_binding.is_some() {
                    return Err(ScramError::Protocol(format!(
                        "{NEGOTIATION}: The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding."
                    )));
                }
                r.advance();
                if r.peek() != b',' {
                    return Err(ScramError::malformed(format!(
                        "Comma expected, but found character \"{}\".",
                        sanitize_char(r.peek())
                    )));
                }
                r.advance();
            }
            b'p' => {
                if !self.binding_in_use {
                    return Err(ScramError::malformed(
                        "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.",
                    ));
                }
                let kind = r.attr_value(b'p')?;
                if kind != b"tls-server-end-point" {
                    return Err(ScramError::Protocol(format!(
                        "unsupported SCRAM channel-binding type \"{}\"",
                        String::from_utf8_lossy(kind)
                    )));
                }
            }
            _ => {
                return Err(ScramError::malformed(format!(
                    "Unexpected channel-binding flag \"{}\".",
                    sanitize_char(flag)
                )));
            }
        }
        // No authzid.
        if r.peek() == b'a' {
            return Err(ScramError::Protocol(AUTHZID_UNSUPPORTED.to_string()));
        }
        if r.peek() != b',' {
            return Err(ScramError::malformed(format!(
                "Unexpected attribute \"{}\" in client-first-message.",
                sanitize_char(r.peek())
            )));
        }
        r.advance();
        self.gs2_header = message[..r.pos].to_vec();
        self.client_first_bare = r.rest().to_vec();

        // No mandatory extensions.
        if r.peek() == b'm' {
            return Err(ScramError::Protocol(EXTENSION_UNSUPPORTED.to_string()));
        }
        // The user name: ignored, the startup packet's is used.
        r.attr_value(b'n')?;
        let nonce = r.attr_value(b'r')?;
        if !is_scram_printable(nonce) {
            return Err(ScramError::Protocol(
                "non-printable characters in SCRAM nonce".to_string(),
            ));
        }
        self.client_nonce = nonce.to_vec();
        // Optional extensions: skipped.
        while !r.at_end() {
            r.any_attr()?;
        }
        Ok(())
    }

    /// PostgreSQL's `read_client_final_message`, `verify_final_nonce`,
    /// `verify_client_proof` and `build_server_final_message`.
    fn read_client_final(&mut self, message: &[u8]) -> Result<Vec<u8>, ScramError> {
        check_message(message)?;
        let mut r = Reader {
            bytes: message,
            pos: 0,
        };

        let binding = r.attr_value(b'c')?;
        let mut expected = self.gs2_header.clone();
        if self.binding_in_use {
            expected.extend_from_slice(self.channel_binding.as_deref().unwrap_or_default());
            if pg_b64_decode(binding).as_deref() != Some(expected.as_slice()) {
                return Err(ScramError::Protocol(
                    "SCRAM channel binding check failed".to_string(),
                ));
            }
        } else if binding != BASE64.encode(&expected).as_bytes() {
            return Err(ScramError::Protocol(
                "unexpected SCRAM channel-binding attribute in client-final-message".to_string(),
            ));
        }
        let final_nonce = r.attr_value(b'r')?;

        // Extensions are skipped up to the proof; the message without the proof ends
        // before the comma that precedes it.
        let (proof_start, proof) = loop {
            let start = r.pos;
            let (attr, value) = r.any_attr()?;
            if attr == b'p' {
                break (start, value);
            }
        };
        let client_proof = match pg_b64_decode(proof) {
            Some(p) => <[u8; SCRAM_KEY_LEN]>::try_from(p).ok(),
            None => None,
        };
        let Some(client_proof) = client_proof else {
            return Err(ScramError::malformed(
                "Malformed proof in client-final-message.",
            ));
        };
        if !r.at_end() {
            return Err(ScramError::malformed(
                "Garbage found at the end of client-final-message.",
            ));
        }
        let without_proof = message.get(..proof_start.saturating_sub(1)).unwrap_or(&[]);

        // The nonce must be the one sent: client's part then server's.
        let nonce_ok = final_nonce.len() == self.client_nonce.len() + self.server_nonce.len()
            && final_nonce.starts_with(&self.client_nonce)
            && final_nonce.ends_with(self.server_nonce.as_bytes());
        if !nonce_ok {
            return Err(ScramError::Protocol(format!(
                "{INVALID_RESPONSE}: Nonce does not match."
            )));
        }

        // AuthMessage = client-first-bare "," server-first "," client-final-without-proof.
        let auth_message: [&[u8]; 5] = [
            &self.client_first_bare,
            b",",
            &self.server_first,
            b",",
            without_proof,
        ];
        // ClientKey = ClientProof XOR ClientSignature; it must hash to StoredKey. Done
        // even for a mock exchange, so that it takes as long.
        let client_signature = hmac(&self.stored_key, &auth_message);
        let mut client_key = client_proof;
        for (k, s) in client_key.iter_mut().zip(client_signature.iter()) {
            *k ^= s;
        }
        let proof_ok = bool::from(sha256(&client_key).ct_eq(&self.stored_key));
        if !proof_ok || self.doomed {
            return Err(ScramError::Failed);
        }

        let server_signature = hmac(&self.server_key, &auth_message);
        Ok(format!("v={}", BASE64.encode(server_signature)).into_bytes())
    }
}

/// What a SCRAM client binds its exchange to: its gs2 header's flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientBinding {
    /// `n`: the client cannot bind (no TLS, or binding is disabled).
    None,
    /// `y`: the client could bind but the server offered no PLUS mechanism; a server
    /// that did offer it refuses this (someone removed it from the offer).
    Unused,
    /// `p=tls-server-end-point`: SCRAM-SHA-256-PLUS, bound to this hash of the server's
    /// certificate.
    EndPoint(Vec<u8>),
}

/// The client's side of one SCRAM-SHA-256 exchange, as libpq runs it: what the
/// walreceiver and `steadydb basebackup` use to prove a replication role's password to a
/// primary, with or without channel binding. Failures are 28P01 (the server's answer was
/// wrong or unverifiable) or 08P01 (a malformed message).
pub struct ScramClient {
    password: String,
    nonce: String,
    client_first_bare: String,
    binding: ClientBinding,
    /// The signature the server must send back, once the proof is computed.
    server_signature: Option<[u8; SCRAM_KEY_LEN]>,
}

fn client_error(message: &str) -> Error {
    Error::new(
        SqlState::PROTOCOL_VIOLATION,
        format!("{MALFORMED}: {message}"),
    )
}

impl ScramClient {
    pub fn new(password: &str, binding: ClientBinding) -> ScramClient {
        let raw: [u8; SCRAM_RAW_NONCE_LEN] = rand::random();
        let nonce = BASE64.encode(raw);
        ScramClient {
            password: password.to_string(),
            client_first_bare: format!("n=,r={nonce}"),
            nonce,
            binding,
            server_signature: None,
        }
    }

    /// The mechanism this exchange runs: PLUS when it binds to the channel.
    pub fn mechanism(&self) -> &'static str {
        match self.binding {
            ClientBinding::EndPoint(_) => MECHANISM_PLUS,
            _ => MECHANISM,
        }
    }

    fn gs2_header(&self) -> &'static str {
        match self.binding {
            ClientBinding::None => "n,,",
            ClientBinding::Unused => "y,,",
            ClientBinding::EndPoint(_) => "p=tls-server-end-point,,",
        }
    }

    /// The client-first-message (the SASLInitialResponse's data).
    pub fn client_first(&self) -> Vec<u8> {
        format!("{}{}", self.gs2_header(), self.client_first_bare).into_bytes()
    }

    /// The client-final-message for the server-first-message `server_first`.
    pub fn client_final(&mut self, server_first: &[u8]) -> Result<Vec<u8>, Error> {
        let text = std::str::from_utf8(server_first).map_err(|_| client_error("not UTF-8"))?;
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for part in text.split(',') {
            match part.split_once('=') {
                Some(("r", v)) => nonce = Some(v),
                Some(("s", v)) => salt = pg_b64_decode(v.as_bytes()),
                Some(("i", v)) => iterations = v.parse::<u32>().ok(),
                _ => {}
            }
        }
        let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return Err(client_error("incomplete server-first-message"));
        };
        if !nonce.starts_with(&self.nonce) || nonce.len() <= self.nonce.len() || iterations == 0 {
            return Err(client_error("invalid server nonce or iteration count"));
        }
        let salted = salted_password(&self.password, &salt, iterations);
        let client_key = hmac(&salted, &[b"Client Key"]);
        let stored_key = sha256(&client_key);
        // c= is the gs2 header, and with PLUS the channel's binding data after it.
        let mut binding = self.gs2_header().as_bytes().to_vec();
        if let ClientBinding::EndPoint(data) = &self.binding {
            binding.extend_from_slice(data);
        }
        let without_proof = format!("c={},r={nonce}", BASE64.encode(binding));
        let auth_message = format!("{},{text},{without_proof}", self.client_first_bare);
        let signature = hmac(&stored_key, &[auth_message.as_bytes()]);
        let mut proof = client_key;
        for (p, s) in proof.iter_mut().zip(signature.iter()) {
            *p ^= s;
        }
        let server_key = hmac(&salted, &[b"Server Key"]);
        self.server_signature = Some(hmac(&server_key, &[auth_message.as_bytes()]));
        Ok(format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes())
    }

    /// Check the server-final-message: the server proved it holds the verifier.
    pub fn verify_server_final(&self, server_final: &[u8]) -> Result<(), Error> {
        use subtle::ConstantTimeEq;
        let expected = self
            .server_signature
            .ok_or_else(|| client_error("server-final-message before server-first"))?;
        let given = server_final
            .strip_prefix(b"v=")
            .and_then(decode_key)
            .ok_or_else(|| client_error("invalid server-final-message"))?;
        if bool::from(given.ct_eq(&expected)) {
            Ok(())
        } else {
            Err(Error::new(
                SqlState::INVALID_PASSWORD,
                "invalid server signature in SCRAM exchange",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"per-server mock secret";

    fn b64(s: &str) -> Vec<u8> {
        pg_b64_decode(s.as_bytes()).expect("test base64")
    }

    /// A SCRAM client as libpq runs it: returns the client-final-message and the
    /// ServerSignature it expects.
    fn client_final_for(
        password: &str,
        client_first_bare: &[u8],
        server_first: &[u8],
        gs2: impl AsRef<[u8]>,
    ) -> (Vec<u8>, Vec<u8>) {
        let text = std::str::from_utf8(server_first).expect("server-first is ASCII");
        let mut nonce = "";
        let mut salt = Vec::new();
        let mut iterations = 0;
        for attr in text.split(',') {
            if let Some(v) = attr.strip_prefix("r=") {
                nonce = v;
            } else if let Some(v) = attr.strip_prefix("s=") {
                salt = b64(v);
            } else if let Some(v) = attr.strip_prefix("i=") {
                iterations = v.parse().expect("iterations");
            }
        }
        let salted = salted_password(password, &salt, iterations);
        let client_key = hmac(&salted, &[b"Client Key"]);
        let stored_key = sha256(&client_key);
        let server_key = hmac(&salted, &[b"Server Key"]);
        let without_proof = format!("c={},r={}", BASE64.encode(gs2.as_ref()), nonce);
        let auth: [&[u8]; 5] = [
            client_first_bare,
            b",",
            server_first,
            b",",
            without_proof.as_bytes(),
        ];
        let signature = hmac(&stored_key, &auth);
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature.iter())
            .map(|(a, b)| a ^ b)
            .collect();
        let server_signature = hmac(&server_key, &auth);
        (
            format!("{},p={}", without_proof, BASE64.encode(proof)).into_bytes(),
            format!("v={}", BASE64.encode(server_signature)).into_bytes(),
        )
    }

    /// A whole exchange with `password` against the server; the server-final-message
    /// checked against the client's expectation.
    fn exchange(server: &mut ScramServer, password: &str) -> Result<(), ScramError> {
        let bare = b"n=,r=fyko+d2lbbFgONRv9qkxdawL";
        let mut first = b"n,,".to_vec();
        first.extend_from_slice(bare);
        let server_first = server.client_first(MECHANISM, &first)?;
        assert!(server_first.starts_with(b"r=fyko+d2lbbFgONRv9qkxdawL"));
        let (final_message, expected) = client_final_for(password, bare, &server_first, "n,,");
        let server_final = server.client_final(&final_message)?;
        assert_eq!(server_final, expected);
        Ok(())
    }

    fn protocol(result: Result<Vec<u8>, ScramError>) -> String {
        match result {
            Err(ScramError::Protocol(text)) => text,
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[test]
    fn rfc7677_test_vector() {
        let salt = b64("W22ZaJ0SNY7soEsUEjb6gQ==");
        let verifier = Verifier::new("pencil", &salt, 4096);
        let mut server = ScramServer::new(Some(verifier), "user", SECRET)
            .with_server_nonce("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
        let server_first = server
            .client_first(MECHANISM, b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
            .expect("client-first");
        assert_eq!(
            server_first,
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
                .to_vec()
        );
        let server_final = server
            .client_final(
                b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
            )
            .expect("client-final");
        assert_eq!(
            server_final,
            b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=".to_vec()
        );
        // And the test client agrees with the RFC's.
        let (final_message, expected) = client_final_for(
            "pencil",
            b"n=user,r=rOprNGfwEbeRWgbNEkqO",
            &server_first,
            "n,,",
        );
        assert_eq!(
            final_message,
            b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=".to_vec()
        );
        assert_eq!(expected, server_final);
    }

    #[test]
    fn verifier_text_form() {
        let salt = b64("W22ZaJ0SNY7soEsUEjb6gQ==");
        let v = Verifier::new("pencil", &salt, 4096);
        let text = v.to_string();
        assert!(text.starts_with("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$"));
        assert_eq!(Verifier::parse(&text), Some(v.clone()));
        assert!(is_verifier(&text));
        // The keys as RFC 7677's exchange implies them: StoredKey checks the proof above.
        assert_eq!(
            v.stored_key,
            sha256(&hmac(&hi(b"pencil", &salt, 4096), &[b"Client Key"]))
        );

        let g = Verifier::generate("secret");
        assert_eq!(g.iterations, SCRAM_ITERATIONS);
        assert_eq!(g.salt.len(), SCRAM_SALT_BYTES);
        assert_eq!(Verifier::parse(&g.to_string()), Some(g.clone()));
        assert_ne!(Verifier::generate("secret").salt, g.salt);
        assert!(g.verify_password("secret"));
        assert!(!g.verify_password("Secret"));
        assert!(!g.verify_password(""));

        let empty_salt = Verifier::new("x", &[], 1);
        assert_eq!(Verifier::parse(&empty_salt.to_string()), Some(empty_salt));
    }

    #[test]
    fn verifier_parse_rejects() {
        let good = Verifier::new("pencil", b"0123456789abcdef", 4096).to_string();
        assert!(Verifier::parse(&good).is_some());
        let (head, keys) = good.rsplit_once('$').expect("form");
        let (stored, server) = keys.split_once(':').expect("keys");
        let bad = [
            String::new(),
            "SCRAM-SHA-256".to_string(),
            good.replacen("SCRAM-SHA-256", "SCRAM-SHA-1", 1),
            good.replacen("$4096:", "$:", 1),
            good.replacen("$4096:", "$-1:", 1),
            good.replacen("$4096:", "$40x6:", 1),
            good.replacen("$4096:", "$99999999999:", 1),
            format!("{head}${stored}"),
            format!("{head}${stored}:"),
            format!("{head}${stored}:{}", &server[4..]),
            format!("{head}${}:{server}", &stored[..stored.len() - 4]),
            format!("{head}${stored}:{server}:"),
            format!("{head}${stored}:{server}$"),
            good.replacen("$4096:MDEy", "$4096:M!Ey", 1),
            "md5".to_string(),
            "SCRAM-SHA-256$4096:$:".to_string(),
        ];
        for text in &bad {
            assert_eq!(Verifier::parse(text), None, "{text:?}");
            assert!(!is_verifier(text), "{text:?}");
        }
    }

    #[test]
    fn pg_base64_decoding() {
        assert_eq!(pg_b64_decode(b""), Some(vec![]));
        assert_eq!(pg_b64_decode(b"QQ=="), Some(b"A".to_vec()));
        assert_eq!(pg_b64_decode(b"QUI="), Some(b"AB".to_vec()));
        assert_eq!(pg_b64_decode(b"QUJD"), Some(b"ABC".to_vec()));
        assert_eq!(pg_b64_decode(b" QU\tJD\r\n"), Some(b"ABC".to_vec()));
        assert_eq!(pg_b64_decode(b"QQ"), None);
        assert_eq!(pg_b64_decode(b"Q==="), None);
        assert_eq!(pg_b64_decode(b"===="), None);
        assert_eq!(pg_b64_decode(b"QU!D"), None);
        assert_eq!(pg_b64_decode("QUé=".as_bytes()), None);
    }

    #[test]
    fn saslprep_normalizes_or_falls_back() {
        let salt = b"saltsaltsaltsalt";
        // U+00AD SOFT HYPHEN maps to nothing; U+2168 ROMAN NUMERAL NINE is NFKC "IX".
        assert_eq!(
            Verifier::new("I\u{00AD}X", salt, 2),
            Verifier::new("IX", salt, 2)
        );
        assert_eq!(
            Verifier::new("\u{2168}", salt, 2),
            Verifier::new("IX", salt, 2)
        );
        // Prohibited (private use, control) or mapped to nothing: the raw bytes.
        for raw in ["\u{E000}x", "a\u{0007}b", "\u{00AD}"] {
            let v = Verifier::new(raw, salt, 2);
            let salted = hi(raw.as_bytes(), salt, 2);
            assert_eq!(v.server_key, hmac(&salted, &[b"Server Key"]), "{raw:?}");
            assert!(v.verify_password(raw));
        }
        // Hi with one iteration is U1 alone; zero iterations still computes one round.
        assert_eq!(hi(b"p", b"s", 0), hi(b"p", b"s", 1));
    }

    #[test]
    fn md5_forms() {
        let v = md5_verifier("secret", "alice");
        assert_eq!(v, format!("md5{}", md5_hex(&[b"secretalice"])));
        assert_eq!(v.len(), MD5_PASSWD_LEN);
        assert!(is_verifier(&v));
        assert!(!is_verifier(&v.to_uppercase()));
        assert!(!is_verifier(&v[..34]));
        assert!(!is_verifier("secret"));
        let salt = [1u8, 2, 3, 4];
        let mut input = v.as_bytes()[3..].to_vec();
        input.extend_from_slice(&salt);
        assert_eq!(
            md5_response(&v, &salt),
            format!("md5{}", md5_hex(&[&input]))
        );
        // A known value: md5("md5" stored for postgres/postgres), hand-checkable with
        // `SELECT 'md5' || md5('postgrespostgres')`.
        assert_eq!(
            md5_verifier("postgres", "postgres"),
            "md53175bce1d3201d16594cebf9d7eb3f9d"
        );
    }

    #[test]
    fn full_exchange() {
        let verifier = Verifier::generate("correct horse");
        let mut server = ScramServer::new(Some(verifier.clone()), "alice", SECRET);
        assert_eq!(exchange(&mut server, "correct horse"), Ok(()));
        // Over: another message is refused.
        assert!(matches!(
            server.client_final(b"c=biws,r=x,p=x"),
            Err(ScramError::Protocol(_))
        ));

        let mut server = ScramServer::new(Some(verifier.clone()), "alice", SECRET);
        assert_eq!(
            exchange(&mut server, "wrong horse"),
            Err(ScramError::Failed)
        );

        // Channel-binding flag 'y' must be repeated as "eSws".
        let mut server = ScramServer::new(Some(verifier), "alice", SECRET);
        let bare = b"n=alice,r=abc";
        let first = server
            .client_first(MECHANISM, b"y,,n=alice,r=abc")
            .expect("client-first");
        let (final_message, expected) = client_final_for("correct horse", bare, &first, "y,,");
        assert_eq!(server.client_final(&final_message), Ok(expected));
    }

    #[test]
    fn channel_binding() {
        let verifier = Verifier::new("correct horse", b"0123456789abcdef", 4096);
        let data = vec![7u8; 32];
        let tls = || {
            ScramServer::new(Some(verifier.clone()), "alice", SECRET)
                .with_channel_binding(Some(data.clone()))
        };
        assert_eq!(tls().mechanisms(), [MECHANISM_PLUS, MECHANISM]);
        let plain = ScramServer::new(Some(verifier.clone()), "alice", SECRET);
        assert_eq!(plain.mechanisms(), [MECHANISM]);

        // PLUS, bound to the right data: accepted.
        let gs2 = b"p=tls-server-end-point,,";
        let bare = b"n=alice,r=abc";
        let first_message = [&gs2[..], bare].concat();
        let mut server = tls();
        let first = server
            .client_first(MECHANISM_PLUS, &first_message)
            .expect("client-first");
        let (final_message, expected) =
            client_final_for("correct horse", bare, &first, [&gs2[..], &data].concat());
        assert_eq!(server.client_final(&final_message), Ok(expected));

        // Bound to other data (a man in the middle's certificate): refused.
        let mut server = tls();
        let first = server
            .client_first(MECHANISM_PLUS, &first_message)
            .expect("client-first");
        let (final_message, _) = client_final_for(
            "correct horse",
            bare,
            &first,
            [&gs2[..], &[8u8; 32]].concat(),
        );
        assert_eq!(
            server.client_final(&final_message),
            Err(ScramError::Protocol(
                "SCRAM channel binding check failed".to_string()
            ))
        );

        // Without binding over TLS: `n` is fine, `y` means PLUS was removed from the offer.
        let mut server = tls();
        let first = server
            .client_first(MECHANISM, b"n,,n=alice,r=abc")
            .expect("client-first");
        let (final_message, expected) = client_final_for("correct horse", bare, &first, "n,,");
        assert_eq!(server.client_final(&final_message), Ok(expected));
        for (mechanism, message, error) in [
            (MECHANISM, &b"y,,n=alice,r=abc"[..], "SCRAM channel binding negotiation error: The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding."),
            (MECHANISM_PLUS, b"n,,n=alice,r=abc", "malformed SCRAM message: The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data."),
            (MECHANISM, b"p=tls-server-end-point,,n=alice,r=abc", "malformed SCRAM message: The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data."),
            (MECHANISM_PLUS, b"p=tls-unique,,n=alice,r=abc", "unsupported SCRAM channel-binding type \"tls-unique\""),
        ] {
            assert_eq!(
                tls().client_first(mechanism, message),
                Err(ScramError::Protocol(error.to_string())),
                "{}",
                String::from_utf8_lossy(message)
            );
        }
        // PLUS is not offered without TLS.
        let mut plain = ScramServer::new(Some(verifier), "alice", SECRET);
        assert!(plain.client_first(MECHANISM_PLUS, &first_message).is_err());
    }

    #[test]
    fn mock_exchange() {
        // No verifier: the exchange runs and fails at the proof, whatever the password.
        let mut server = ScramServer::new(None, "nobody", SECRET);
        assert_eq!(exchange(&mut server, ""), Err(ScramError::Failed));
        let mut server = ScramServer::new(None, "nobody", SECRET);
        assert_eq!(exchange(&mut server, "anything"), Err(ScramError::Failed));

        // The mock salt is stable per user and secret, and looks like a real one.
        let salt_of = |user: &str, secret: &[u8]| {
            let mut server = ScramServer::new(None, user, secret);
            let first = server
                .client_first(MECHANISM, b"n,,n=,r=abc")
                .expect("client-first");
            let text = String::from_utf8(first).expect("ascii");
            let (_, rest) = text.split_once(",s=").expect("salt");
            let (salt, iterations) = rest.split_once(",i=").expect("iterations");
            assert_eq!(iterations, "4096");
            assert_eq!(b64(salt).len(), SCRAM_SALT_BYTES);
            salt.to_string()
        };
        assert_eq!(salt_of("nobody", SECRET), salt_of("nobody", SECRET));
        assert_ne!(salt_of("nobody", SECRET), salt_of("somebody", SECRET));
        assert_ne!(salt_of("nobody", SECRET), salt_of("nobody", b"other"));

        // The server nonce: client's then 18 random bytes in base64.
        let mut server = ScramServer::new(None, "nobody", SECRET);
        let first = server
            .client_first(MECHANISM, b"n,,n=,r=abc")
            .expect("first");
        let text = String::from_utf8(first).expect("ascii");
        let nonce = text
            .strip_prefix("r=abc")
            .and_then(|t| t.split(',').next())
            .expect("nonce");
        assert_eq!(b64(nonce).len(), SCRAM_RAW_NONCE_LEN);
    }

    #[test]
    fn malformed_client_first() {
        let first = |mechanism: &str, message: &[u8]| {
            let mut server = ScramServer::new(None, "u", SECRET);
            let result = server.client_first(mechanism, message);
            // Whatever happened, the exchange is over after an error.
            if result.is_err() {
                assert!(server.client_final(b"c=biws,r=abc,p=x").is_err());
            }
            result
        };
        let cases: &[(&str, &[u8], &str)] = &[
            (
                "SCRAM-SHA-256-PLUS",
                b"p=tls-server-end-point,,n=,r=abc",
                "client selected an invalid SASL authentication mechanism",
            ),
            ("SCRAM-SHA-1", b"n,,n=,r=abc", "client selected an invalid SASL authentication mechanism"),
            (MECHANISM, b"", "malformed SCRAM message: The message is empty."),
            (
                MECHANISM,
                b"n,,n=,r=a\0bc",
                "malformed SCRAM message: Message length does not match input length.",
            ),
            (
                MECHANISM,
                b"p=tls-server-end-point,,n=,r=abc",
                "malformed SCRAM message: The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.",
            ),
            (
                MECHANISM,
                b"x,,n=,r=abc",
                "malformed SCRAM message: Unexpected channel-binding flag \"'x'\".",
            ),
            (
                MECHANISM,
                b"n",
                "malformed SCRAM message: Comma expected, but found character \"0x00\".",
            ),
            (
                MECHANISM,
                b"n;,n=,r=abc",
                "malformed SCRAM message: Comma expected, but found character \"';'\".",
            ),
            (MECHANISM, b"n,a=bob,n=,r=abc", AUTHZID_UNSUPPORTED),
            (
                MECHANISM,
                b"n,x,n=,r=abc",
                "malformed SCRAM message: Unexpected attribute \"'x'\" in client-first-message.",
            ),
            (MECHANISM, b"n,,m=ext,n=,r=abc", EXTENSION_UNSUPPORTED),
            (
                MECHANISM,
                b"n,,r=abc",
                "malformed SCRAM message: Expected attribute \"n\" but found \"'r'\".",
            ),
            (
                MECHANISM,
                b"n,,n",
                "malformed SCRAM message: Expected character \"=\" for attribute \"n\".",
            ),
            (
                MECHANISM,
                b"n,,n=",
                "malformed SCRAM message: Expected attribute \"r\" but found \"0x00\".",
            ),
            (
                MECHANISM,
                b"n,,n=,r=ab c",
                "non-printable characters in SCRAM nonce",
            ),
            (
                MECHANISM,
                "n,,n=,r=abé".as_bytes(),
                "non-printable characters in SCRAM nonce",
            ),
            (
                MECHANISM,
                b"n,,n=,r=abc,1=x",
                "malformed SCRAM message: Attribute expected, but found invalid character \"'1'\".",
            ),
            (
                MECHANISM,
                b"n,,n=,r=abc,x",
                "malformed SCRAM message: Expected character \"=\" for attribute \"x\".",
            ),
            (
                MECHANISM,
                b"n,,n=,r=abc,,",
                "malformed SCRAM message: Attribute expected, but found invalid character \"','\".",
            ),
        ];
        for (mechanism, message, expected) in cases {
            assert_eq!(
                protocol(first(mechanism, message)),
                *expected,
                "{:?}",
                String::from_utf8_lossy(message)
            );
        }
        // Accepted: optional extensions, a trailing comma, an empty nonce, a user name.
        for ok in [
            &b"n,,n=,r=abc,x=1,y=2"[..],
            b"n,,n=,r=abc,",
            b"n,,n=,r=",
            b"y,,n=someone,r=abc",
        ] {
            assert!(
                first(MECHANISM, ok).is_ok(),
                "{:?}",
                String::from_utf8_lossy(ok)
            );
        }
    }

    #[test]
    fn error_mapping() {
        let e = ScramError::malformed("The message is empty.").into_error("u");
        assert_eq!(e.code, SqlState::PROTOCOL_VIOLATION);
        assert_eq!(e.message, "malformed SCRAM message");
        assert_eq!(e.detail.as_deref(), Some("The message is empty."));
        let e = ScramError::Protocol(AUTHZID_UNSUPPORTED.to_string()).into_error("u");
        assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED);
        let e =
            ScramError::Protocol("non-printable characters in SCRAM nonce".into()).into_error("u");
        assert_eq!(e.code, SqlState::PROTOCOL_VIOLATION);
        assert_eq!(e.detail, None);
        let e = ScramError::Failed.into_error("alice");
        assert_eq!(e.code.0, "28P01");
        assert_eq!(
            e.message,
            "password authentication failed for user \"alice\""
        );
    }

    /// A server that has sent its first message for client nonce "abc" (its own part
    /// fixed, so that every such server takes the same final message), and its correct
    /// client-final-message for `password`.
    fn after_first(password: &str) -> (ScramServer, Vec<u8>) {
        let verifier = Verifier::new(password, b"0123456789abcdef", 16);
        let mut server =
            ScramServer::new(Some(verifier), "u", SECRET).with_server_nonce("SeRvErNoNcE+/");
        let first = server
            .client_first(MECHANISM, b"n,,n=,r=abc")
            .expect("first");
        let (final_message, _) = client_final_for(password, b"n=,r=abc", &first, "n,,");
        (server, final_message)
    }

    #[test]
    fn malformed_client_final() {
        let (_, good) = after_first("pw");
        let good = String::from_utf8(good).expect("ascii");
        let (head, proof) = good.split_once(",p=").expect("proof");
        let nonce = head.strip_prefix("c=biws,r=").expect("nonce");
        let cases: Vec<(String, &str)> = vec![
            (
                String::new(),
                "malformed SCRAM message: The message is empty.",
            ),
            (
                format!("c=eSws,r={nonce},p={proof}"),
                "unexpected SCRAM channel-binding attribute in client-final-message",
            ),
            (
                format!("c=,r={nonce},p={proof}"),
                "unexpected SCRAM channel-binding attribute in client-final-message",
            ),
            (
                format!("r={nonce},p={proof}"),
                "malformed SCRAM message: Expected attribute \"c\" but found \"'r'\".",
            ),
            (
                format!("c=biws,p={proof}"),
                "malformed SCRAM message: Expected attribute \"r\" but found \"'p'\".",
            ),
            (
                format!("c=biws,r={nonce}"),
                "malformed SCRAM message: Attribute expected, but found end of string.",
            ),
            (
                format!("c=biws,r={nonce},p=AAAA"),
                "malformed SCRAM message: Malformed proof in client-final-message.",
            ),
            (
                format!("c=biws,r={nonce},p=!!!!"),
                "malformed SCRAM message: Malformed proof in client-final-message.",
            ),
            (
                format!("c=biws,r={nonce},p={proof},x=1"),
                "malformed SCRAM message: Garbage found at the end of client-final-message.",
            ),
            (
                format!("c=biws,r={nonce}x,p={proof}"),
                "invalid SCRAM response: Nonce does not match.",
            ),
            (
                format!("c=biws,r=abd{},p={proof}", &nonce[3..]),
                "invalid SCRAM response: Nonce does not match.",
            ),
            (
                format!("c=biws,r=abc,p={proof}"),
                "invalid SCRAM response: Nonce does not match.",
            ),
        ];
        for (message, expected) in &cases {
            let (mut server, _) = after_first("pw");
            assert_eq!(
                protocol(server.client_final(message.as_bytes())),
                *expected,
                "{message:?}"
            );
        }
        // Extensions before the proof are skipped (and belong to the signed part, so
        // the test client's proof no longer fits), and a trailing comma is accepted.
        let (mut server, _) = after_first("pw");
        assert_eq!(
            server.client_final(format!("c=biws,r={nonce},x=1,p={proof}").as_bytes()),
            Err(ScramError::Failed)
        );
        let (mut server, _) = after_first("pw");
        assert!(server.client_final(format!("{good},").as_bytes()).is_ok());
        // A flipped bit in the proof fails.
        let mut bad_proof = b64(proof);
        bad_proof[0] ^= 1;
        let (mut server, _) = after_first("pw");
        assert_eq!(
            server.client_final(
                format!("c=biws,r={nonce},p={}", BASE64.encode(bad_proof)).as_bytes()
            ),
            Err(ScramError::Failed)
        );
        // Out of order: client-final first.
        let mut server = ScramServer::new(None, "u", SECRET);
        assert!(matches!(
            server.client_final(good.as_bytes()),
            Err(ScramError::Protocol(_))
        ));
    }

    /// A tiny deterministic generator for garbage.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u8 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 56) as u8
        }
    }

    #[test]
    fn the_client_and_the_server_agree() {
        let verifier = Verifier::generate("s3cret");
        for (password, ok) in [("s3cret", true), ("wrong", false)] {
            let mut server = ScramServer::new(Some(verifier.clone()), "u", b"secret");
            let mut client = ScramClient::new(password, ClientBinding::None);
            let first = server
                .client_first(MECHANISM, &client.client_first())
                .unwrap();
            let last = client.client_final(&first).unwrap();
            match server.client_final(&last) {
                Ok(server_final) => {
                    assert!(ok);
                    client.verify_server_final(&server_final).unwrap();
                    assert!(client.verify_server_final(b"v=AAAA").is_err());
                }
                Err(ScramError::Failed) => assert!(!ok),
                Err(e) => panic!("{e}"),
            }
        }
        assert!(ScramClient::new("x", ClientBinding::None)
            .client_final(b"r=abc,s=QQ==,i=1")
            .is_err());
    }

    /// The client's channel binding against the server's: bound to the same certificate
    /// hash it passes, to another it fails; `y` is refused by a server that offered PLUS
    /// and accepted by one that did not.
    #[test]
    fn the_client_binds_to_the_channel_as_the_server_expects() {
        let verifier = Verifier::generate("pw");
        let hash = vec![7u8; 32];
        let run = |offered: Option<Vec<u8>>, binding: ClientBinding| {
            let mut server =
                ScramServer::new(Some(verifier.clone()), "u", SECRET).with_channel_binding(offered);
            let mut client = ScramClient::new("pw", binding);
            let first = server
                .client_first(client.mechanism(), &client.client_first())
                .map_err(|e| e.to_string())?;
            let last = client.client_final(&first).map_err(|e| e.message)?;
            let server_final = server.client_final(&last).map_err(|e| e.to_string())?;
            client
                .verify_server_final(&server_final)
                .map_err(|e| e.message)
        };
        run(Some(hash.clone()), ClientBinding::EndPoint(hash.clone())).unwrap();
        let e = run(Some(hash.clone()), ClientBinding::EndPoint(vec![8u8; 32])).unwrap_err();
        assert!(e.contains("channel binding check failed"), "{e}");
        assert!(run(Some(hash.clone()), ClientBinding::Unused).is_err());
        run(None, ClientBinding::Unused).unwrap();
        run(Some(hash), ClientBinding::None).unwrap();
        run(None, ClientBinding::None).unwrap();
    }

    #[test]
    fn truncated_and_garbage_input_never_panics() {
        let first = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO,e=xyz";
        for len in 0..=first.len() {
            let mut server = ScramServer::new(None, "u", SECRET);
            let _ = server.client_first(MECHANISM, &first[..len]);
        }
        let (_, good) = after_first("pw");
        for len in 0..=good.len() {
            let (mut server, _) = after_first("pw");
            let result = server.client_final(&good[..len]);
            if len == good.len() {
                assert!(result.is_ok());
            } else {
                assert!(result.is_err(), "{len}");
            }
        }
        let mut rng = Lcg(7);
        let alphabet = b"nyp,=acrm01+/ \0\xff";
        for round in 0..2000 {
            let len = usize::from(rng.next() % 40);
            let garbage: Vec<u8> = (0..len)
                .map(|_| {
                    let x = rng.next();
                    if round % 2 == 0 {
                        alphabet[usize::from(x) % alphabet.len()]
                    } else {
                        x
                    }
                })
                .collect();
            let mut server = ScramServer::new(None, "u", SECRET);
            let _ = server.client_first(MECHANISM, &garbage);
            let (mut server, _) = after_first("pw");
            let _ = server.client_final(&garbage);
            let _ = Verifier::parse(&String::from_utf8_lossy(&garbage));
            let _ = pg_b64_decode(&garbage);
        }
    }
}
