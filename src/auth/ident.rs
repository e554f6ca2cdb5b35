//! `pg_ident.conf`: user name maps, as PostgreSQL has them.
//!
//! A `pg_hba.conf` line with `map=name` (methods peer and cert) lets an identity the
//! method proved (the OS user of a Unix-socket client, a client certificate's name) log
//! in as a role other than one of the same name, if a line of the map says so:
//!
//! ```text
//! # MAPNAME   SYSTEM-USERNAME   PG-USERNAME
//! office      alice             bob
//! office      /^(.*)@example\.com$   \1
//! ```
//!
//! A system user name that starts with `/` is a regular expression; `\1` in the role name
//! is then what its first group matched. Names compare exactly (case matters); the lines
//! of other maps are ignored. Comments, quoting and line continuations are as in
//! `pg_hba.conf` (its tokenizer is shared). A bad file keeps the maps in force, as a bad
//! `pg_hba.conf` does.

use super::hba;

/// The name of the file, in the data directory.
pub const IDENT_FILE: &str = "pg_ident.conf";

/// What a line's system user name is matched with.
#[derive(Debug, Clone)]
enum SystemUser {
    Exact(String),
    Pattern(regex::Regex),
}

/// One line: map `map` lets system user `system` be role `role`.
#[derive(Debug, Clone)]
pub struct IdentLine {
    pub line_number: usize,
    map: String,
    system: SystemUser,
    role: String,
}

/// The lines of a `pg_ident.conf`, or the first error (its line and PostgreSQL's words).
pub fn parse(text: &str) -> Result<Vec<IdentLine>, hba::HbaError> {
    let mut lines = Vec::new();
    for record in hba::tokenize(text) {
        let line_number = record.line_number;
        let error = |message: &str| hba::HbaError::new(line_number, message);
        if let Some(message) = &record.error {
            return Err(error(message));
        }
        if record.fields.iter().any(|f| f.len() != 1) {
            return Err(error("multiple values in ident field"));
        }
        let words: Vec<&hba::Token> = record.fields.iter().flatten().collect();
        let [map, system, role] = words.as_slice() else {
            return Err(error(if words.len() < 3 {
                "missing entry at end of line"
            } else {
                "extra entry in ident file"
            }));
        };
        let system = match system.text.strip_prefix('/') {
            Some(pattern) => SystemUser::Pattern(regex::Regex::new(pattern).map_err(|e| {
                error(&format!(
                    "invalid regular expression \"{pattern}\": {}",
                    e.to_string().lines().last().unwrap_or_default()
                ))
            })?),
            None => SystemUser::Exact(system.text.clone()),
        };
        lines.push(IdentLine {
            line_number,
            map: map.text.clone(),
            system,
            role: role.text.clone(),
        });
    }
    Ok(lines)
}

/// Whether map `map` lets `system_user` log in as `role` (PostgreSQL's `check_usermap`,
/// for a line that names a map).
pub fn maps(lines: &[IdentLine], map: &str, system_user: &str, role: &str) -> bool {
    lines
        .iter()
        .filter(|l| l.map == map)
        .any(|line| match &line.system {
            SystemUser::Exact(name) => name == system_user && line.role == role,
            SystemUser::Pattern(pattern) => {
                let Some(captures) = pattern.captures(system_user) else {
                    return false;
                };
                let mapped = match (line.role.contains("\\1"), captures.get(1)) {
                    (true, Some(group)) => line.role.replacen("\\1", group.as_str(), 1),
                    // `\1` with no group to fill it: the line cannot match.
                    (true, None) => return false,
                    (false, _) => line.role.clone(),
                };
                mapped == role
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_and_patterns_map_system_users_to_roles() {
        let lines = parse(
            "# MAPNAME SYSTEM-USERNAME PG-USERNAME\n\
             office  alice  bob\n\
             office  \"/^(.*)@example\\.com$\"  \\1\n\
             other   carol  bob\n\
             office  /^admin-  postgres\n",
        )
        .expect("a valid file");
        assert_eq!(lines.len(), 4);
        assert!(maps(&lines, "office", "alice", "bob"));
        assert!(!maps(&lines, "office", "alice", "alice"));
        assert!(!maps(&lines, "office", "Alice", "bob"), "names are exact");
        assert!(maps(&lines, "office", "dave@example.com", "dave"));
        assert!(!maps(&lines, "office", "dave@example.org", "dave"));
        assert!(
            !maps(&lines, "office", "carol", "bob"),
            "another map's line"
        );
        assert!(maps(&lines, "other", "carol", "bob"));
        assert!(maps(&lines, "office", "admin-x", "postgres"));
        assert!(!maps(&lines, "nosuch", "alice", "bob"));
    }

    #[test]
    fn bad_lines_are_errors_with_their_line_number() {
        for (text, line, message) in [
            ("m a\n", 1, "missing entry at end of line"),
            ("# c\nm a b c\n", 2, "extra entry in ident file"),
            ("m a,b c\n", 1, "multiple values in ident field"),
        ] {
            let e = parse(text).expect_err(text);
            assert_eq!(
                (e.line_number, e.message.as_str()),
                (line, message),
                "{text}"
            );
        }
        let e = parse("m /( c\n").expect_err("a bad pattern");
        assert!(
            e.message.starts_with("invalid regular expression \"(\""),
            "{}",
            e.message
        );
    }
}
