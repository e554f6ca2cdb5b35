//! `steadydb.conf`: PostgreSQL-style `name = value` lines, `#` comments, optional quotes.

use std::path::Path;

use crate::error::{Error, Result, SqlState};

/// The configuration file written into a new data directory.
pub const DEFAULT_CONFIG: &str = "\
# SteadyDB configuration: one `name = value` per line, as in postgresql.conf.
# Settings given here apply at server start; `-c name=value` on the command line wins.

#listen_addresses = '127.0.0.1'
#port = 5433
#unix_socket_directories = '/tmp'
#max_connections = 1000
#shared_buffers = 128MB
#fsync = on
#synchronous_commit = on
#commit_delay = 0
#commit_siblings = 0
#wal_writer_delay = 200ms
#checkpoint_timeout = 5min
#max_wal_size = 1GB
#checkpoint_completion_target = 0.9
#checkpoint_flush_after = 256kB
#log_checkpoints = on
";

/// Parse configuration text into (line number, name, value).
pub fn parse_config(text: &str) -> Result<Vec<(usize, String, String)>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = strip_comment(raw).trim().to_string();
        if line.is_empty() {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => match line.split_once(char::is_whitespace) {
                Some((n, v)) => (n.trim(), v.trim()),
                None => {
                    return Err(Error::new(
                        SqlState::SYNTAX_ERROR,
                        format!("syntax error in configuration file, line {line_no}: \"{raw}\""),
                    ))
                }
            },
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(Error::new(
                SqlState::SYNTAX_ERROR,
                format!("syntax error in configuration file, line {line_no}: \"{raw}\""),
            ));
        }
        let value = match value.strip_prefix('\'') {
            Some(rest) => rest
                .strip_suffix('\'')
                .ok_or_else(|| {
                    Error::new(
                        SqlState::SYNTAX_ERROR,
                        format!("unterminated quoted string in configuration file, line {line_no}"),
                    )
                })?
                .replace("''", "'"),
            None => value.to_string(),
        };
        out.push((line_no, name.to_string(), value));
    }
    Ok(out)
}

/// `#` starts a comment unless it is inside a quoted value.
fn strip_comment(line: &str) -> &str {
    let mut in_quote = false;
    for (i, c) in line.char_indices() {
        match c {
            '\'' => in_quote = !in_quote,
            '#' if !in_quote => return &line[..i],
            _ => {}
        }
    }
    line
}

pub fn load_config_file(path: &Path) -> Result<Vec<(usize, String, String)>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            SqlState::IO_ERROR,
            format!(
                "could not read configuration file \"{}\": {e}",
                path.display()
            ),
        )
    })?;
    parse_config(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_postgres_style_lines() {
        let got = parse_config("# c\nshared_buffers = 64MB   # trailing\nsynchronous_commit off\napplication_name = 'a # b'\n").unwrap();
        assert_eq!(
            got,
            vec![
                (2, "shared_buffers".into(), "64MB".into()),
                (3, "synchronous_commit".into(), "off".into()),
                (4, "application_name".into(), "a # b".into()),
            ]
        );
        assert!(parse_config("=x").is_err());
        assert!(parse_config("a = 'unterminated").is_err());
        assert!(parse_config(DEFAULT_CONFIG).unwrap().is_empty());
    }
}
