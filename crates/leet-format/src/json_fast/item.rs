//! One item message read straight from the wire, its strings left as checked
//! UTF-8 bytes: the input of the direct JSON writer.

use crate::wire::{Field, ItemValue};

/// The fields of one message, read as [`crate::wire::Fields`] reads them (the same
/// fields, the same errors), inlined into the loops here: `Err` at malformed input.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        if let Some((&b, rest)) = self.buf.split_first() {
            if b < 0x80 {
                self.buf = rest;
                return Some(u64::from(b));
            }
        }
        let mut v: u64 = 0;
        for i in 0..10 {
            let (&b, rest) = self.buf.split_first()?;
            self.buf = rest;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// The next field; `Ok(None)` at the end, `Err(())` at malformed input.
    #[inline(always)]
    pub(super) fn field(&mut self) -> Result<Option<Field<'a>>, ()> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        self.parse().map(Some).ok_or(())
    }

    #[inline(always)]
    fn parse(&mut self) -> Option<Field<'a>> {
        let key = self.varint()?;
        let num = u32::try_from(key >> 3).ok()?;
        if num == 0 {
            return None;
        }
        match key & 7 {
            0 => Some(Field::Varint(num, self.varint()?)),
            1 => {
                let (b, rest) = self.buf.split_at_checked(8)?;
                self.buf = rest;
                Some(Field::Fixed64(num, u64::from_le_bytes(b.try_into().ok()?)))
            }
            2 => {
                let n = usize::try_from(self.varint()?).ok()?;
                let (b, rest) = self.buf.split_at_checked(n)?;
                self.buf = rest;
                Some(Field::Bytes(num, b))
            }
            5 => {
                let (b, rest) = self.buf.split_at_checked(4)?;
                self.buf = rest;
                Some(Field::Fixed32(num, u32::from_le_bytes(b.try_into().ok()?)))
            }
            _ => None,
        }
    }
}

/// An item as [`crate::wire::item`] reads it (the same fields, the same failures: bad
/// framing, a string field that is not UTF-8), with its strings left as bytes.
pub(super) struct RawItem<'a> {
    pub(super) key: &'a [u8],
    nested: [&'a [u8]; NESTED],
    nested_len: usize,
    pub(super) value: RawValue<'a>,
}

/// Nested key elements read here; an item with more goes to the general path.
const NESTED: usize = 4;

#[derive(Clone, Copy)]
pub(super) enum RawValue<'a> {
    Json(&'a [u8]),
    Null,
    Bool(bool),
    Int(i64),
    Number(f64),
    Text(&'a [u8]),
}

fn utf8(b: &[u8]) -> Option<&[u8]> {
    (b.is_ascii() || std::str::from_utf8(b).is_ok()).then_some(b)
}

/// Parse an item message (field numbers shared by every item type); None where
/// [`crate::wire::item`] fails, and for more than [`NESTED`] nested key elements.
pub(super) fn raw_item(b: &[u8]) -> Option<RawItem<'_>> {
    let mut it = RawItem {
        key: b"",
        nested: [b""; NESTED],
        nested_len: 0,
        value: RawValue::Json(b""),
    };
    // The usual item: a key, then `value_json`, each shorter than 128 bytes.
    if let [0x0a, klen, rest @ ..] = b {
        let k = usize::from(*klen);
        if let Some((key, [0x82, 0x01, vlen, value @ ..])) = rest.split_at_checked(k) {
            if k < 0x80 && *vlen < 0x80 && value.len() == usize::from(*vlen) {
                it.key = utf8(key)?;
                it.value = RawValue::Json(utf8(value)?);
                return Some(it);
            }
        }
    }
    let mut typed: Option<RawValue<'_>> = None;
    let mut f = Reader::new(b);
    while let Some(field) = f.field().ok()? {
        match field {
            Field::Bytes(1, v) => it.key = utf8(v)?,
            Field::Bytes(2, v) => {
                *it.nested.get_mut(it.nested_len)? = utf8(v)?;
                it.nested_len += 1;
            }
            Field::Varint(3, _) => typed = Some(RawValue::Null),
            Field::Varint(4, v) => typed = Some(RawValue::Bool(v != 0)),
            Field::Varint(5, v) => {
                typed = Some(RawValue::Int(((v >> 1) as i64) ^ -((v & 1) as i64)));
            }
            Field::Fixed64(6, v) => typed = Some(RawValue::Number(f64::from_bits(v))),
            Field::Bytes(7, v) => typed = Some(RawValue::Text(utf8(v)?)),
            Field::Bytes(8, v) => typed = Some(RawValue::Json(utf8(v)?)),
            Field::Bytes(16, v) => it.value = RawValue::Json(utf8(v)?),
            _ => {}
        }
    }
    if let Some(t) = typed {
        it.value = t;
    }
    Some(it)
}

impl<'a> RawItem<'a> {
    pub(super) fn nested(&self) -> &[&'a [u8]] {
        &self.nested[..self.nested_len]
    }

    /// Whether the key path is the one element `name`.
    pub(super) fn path_is(&self, name: &[u8]) -> bool {
        if self.key.is_empty() {
            self.nested() == [name]
        } else {
            self.key == name
        }
    }
}

impl<'a> RawValue<'a> {
    pub(super) fn as_item_value(self) -> Option<ItemValue<'a>> {
        let s = |b: &'a [u8]| std::str::from_utf8(b).ok();
        Some(match self {
            RawValue::Json(b) => ItemValue::Json(s(b)?),
            RawValue::Null => ItemValue::Null,
            RawValue::Bool(v) => ItemValue::Bool(v),
            RawValue::Int(v) => ItemValue::Int(v),
            RawValue::Number(v) => ItemValue::Number(v),
            RawValue::Text(b) => ItemValue::Text(s(b)?),
        })
    }
}
