//! jsonb: its order against its key bytes and PostgreSQL's quirks, text round trips,
//! containment and the changes' rules.

use std::cmp::Ordering;

use super::*;
use crate::types::jsonb::{self, compare, contains, parse, set_path, Jsonb, SetMode};

fn j(text: &str) -> Jsonb {
    parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn key(v: &Jsonb) -> Vec<u8> {
    let mut out = Vec::new();
    crate::types::encode_key(&[Value::Jsonb(std::sync::Arc::new(v.clone()))], &mut out);
    out
}

#[test]
fn order_is_postgresqls_and_key_bytes_agree() {
    // PostgreSQL 15's ORDER BY of these documents.
    let ascending = [
        "[]",
        "null",
        r#""""#,
        r#""a""#,
        r#""b""#,
        "-1",
        "1",
        "1.5",
        "false",
        "true",
        "[null]",
        r#"["a"]"#,
        "[1]",
        "[[]]",
        "[{}]",
        "[1, 2]",
        "{}",
        r#"{"a": null}"#,
        r#"{"a": []}"#,
        r#"{"aa": 0}"#,
        r#"{"b": 1}"#,
        r#"{"a": 1, "b": 2}"#,
    ];
    for (i, a) in ascending.iter().enumerate() {
        for (k, b) in ascending.iter().enumerate() {
            let want = i.cmp(&k);
            assert_eq!(compare(&j(a), &j(b)), want, "{a} vs {b}");
            assert_eq!(key(&j(a)).cmp(&key(&j(b))), want, "keys of {a} vs {b}");
        }
    }
    // Equal numbers of different scales are one value and one key.
    assert_eq!(compare(&j("[1.50]"), &j("[1.5]")), Ordering::Equal);
    assert_eq!(key(&j("1.50")), key(&j("1.5")));
}

#[test]
fn random_documents_round_trip_through_text() {
    let mut r = rng(31);
    for _ in 0..2000 {
        let v = random_jsonb(&mut r, 0);
        let text = v.to_string();
        let back = j(&text);
        assert_eq!(compare(&v, &back), Ordering::Equal, "{text}");
        assert_eq!(back.to_string(), text);
        // Every document contains itself.
        assert!(contains(&v, &v), "{text}");
    }
}

#[test]
fn objects_keep_the_last_of_repeated_keys_in_storage_order() {
    let v = j(r#"{"bb": 1, "a": 2, "c": 3, "a": 4}"#);
    assert_eq!(v.to_string(), r#"{"a": 4, "c": 3, "bb": 1}"#);
    assert!(v.has_key("bb") && !v.has_key("b"));
}

#[test]
fn nesting_is_bounded() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(parse(&deep(jsonb::MAX_DEPTH)).is_ok());
    assert_eq!(code(parse(&deep(jsonb::MAX_DEPTH + 1))), "54001");
    // A change that would nest deeper fails the same way.
    let inner = j(&deep(jsonb::MAX_DEPTH));
    let doc = j(r#"{"a": 1}"#);
    let mode = SetMode::Replace {
        create_missing: true,
    };
    assert_eq!(code(set_path(&doc, &[Some("a")], &inner, mode)), "54001");
    assert!(set_path(&doc, &[Some("a")], &j("[]"), mode).is_ok());
    // A NULL step is an error only where the walk reaches it.
    assert_eq!(
        code(set_path(&doc, &[Some("a"), None], &j("1"), mode)),
        "22004"
    );
    assert_eq!(
        code(set_path(&doc, &[None::<&str>], &j("1"), mode)),
        "22004"
    );
    assert!(jsonb::delete_path(&doc, &[Some("b"), None]).is_ok());
}

#[test]
fn scalars_cannot_be_changed_or_entered() {
    let s = j(r#""x""#);
    assert_eq!(code(jsonb::delete_key(&s, "x")), "22023");
    assert_eq!(code(jsonb::delete_path(&s, &[Some("0")])), "22023");
    // A top-level scalar is an array of one for `->` but not for `#>`.
    assert!(s.element(0).is_some());
    assert!(s.at_path(&["0"]).is_none());
    assert!(s.at_path::<&str>(&[]).is_some());
}
