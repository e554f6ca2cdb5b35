//! Row types made while binding: `ROW(...)` (fields `f1`, `f2`, ...) and a table's
//! whole row (its columns' names). A [`super::DataType::Record`] names its fields by a
//! `'static` slice, so each distinct shape is made once and kept for the life of the
//! process, at most [`MAX_RECORD_SHAPES`] of them (54000 past that): shapes come from
//! statements' text and the tables' columns, so a working application makes few.

use std::sync::OnceLock;

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use super::DataType;
use crate::err;
use crate::error::Result;

/// The most distinct row types kept.
pub const MAX_RECORD_SHAPES: usize = 10_000;

type Shape = &'static [(&'static str, DataType)];
/// The shapes made so far, by their fields.
type Shapes = Mutex<FxHashMap<Vec<(String, DataType)>, Shape>>;

/// The row type with these fields, made once. Typmods are dropped (a record's fields
/// are shown by their values), so that only names and types make shapes differ.
pub fn record_shape(fields: Vec<(String, DataType)>) -> Result<Shape> {
    let fields: Vec<(String, DataType)> = fields
        .into_iter()
        .map(|(name, ty)| {
            let ty = match ty {
                DataType::Char(_) => DataType::Char(1),
                ty => ty.without_typmod(),
            };
            (name, ty)
        })
        .collect();
    static SHAPES: OnceLock<Shapes> = OnceLock::new();
    let mut shapes = SHAPES.get_or_init(Default::default).lock();
    if let Some(shape) = shapes.get(&fields) {
        return Ok(shape);
    }
    if shapes.len() >= MAX_RECORD_SHAPES {
        return Err(err!(
            PROGRAM_LIMIT_EXCEEDED,
            "more than {MAX_RECORD_SHAPES} distinct row types were made"
        ));
    }
    let leaked: Vec<(&'static str, DataType)> = fields
        .iter()
        .map(|(name, ty)| (&*Box::leak(name.clone().into_boxed_str()), *ty))
        .collect();
    let shape: Shape = Box::leak(leaked.into_boxed_slice());
    shapes.insert(fields, shape);
    Ok(shape)
}
