//! A minimal zero-copy protobuf wire reader for the hot record types (history,
//! summary, config, stats, console output). These make up nearly every record of a
//! big run; reading them without allocating is what makes a full load fast. Every
//! other record type goes through prost (`pb`).

/// Protobuf wire types we meet.
const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const I32: u8 = 5;

/// One field of a message: its number and raw value.
#[derive(Debug, Clone, Copy)]
pub enum Field<'a> {
    Varint(u32, u64),
    Fixed64(u32, u64),
    Bytes(u32, &'a [u8]),
    Fixed32(u32, u32),
}

impl Field<'_> {
    pub fn number(&self) -> u32 {
        match *self {
            Field::Varint(n, _)
            | Field::Fixed64(n, _)
            | Field::Bytes(n, _)
            | Field::Fixed32(n, _) => n,
        }
    }
}

/// Iterates the fields of one message. Stops (and sets `error`) at malformed input.
pub struct Fields<'a> {
    buf: &'a [u8],
    pub error: bool,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, error: false }
    }
}

#[inline]
fn varint(buf: &mut &[u8]) -> Option<u64> {
    if let Some((&b, rest)) = buf.split_first() {
        if b < 0x80 {
            *buf = rest;
            return Some(u64::from(b));
        }
    }
    let mut v: u64 = 0;
    for i in 0..10 {
        let (&b, rest) = buf.split_first()?;
        *buf = rest;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

impl<'a> Iterator for Fields<'a> {
    type Item = Field<'a>;

    #[inline]
    fn next(&mut self) -> Option<Field<'a>> {
        if self.buf.is_empty() || self.error {
            return None;
        }
        let parsed = (|| {
            let key = varint(&mut self.buf)?;
            let num = u32::try_from(key >> 3).ok()?;
            if num == 0 {
                return None;
            }
            match (key & 7) as u8 {
                VARINT => Some(Field::Varint(num, varint(&mut self.buf)?)),
                I64 => {
                    let (b, rest) = self.buf.split_at_checked(8)?;
                    self.buf = rest;
                    Some(Field::Fixed64(num, u64::from_le_bytes(b.try_into().ok()?)))
                }
                LEN => {
                    let n = usize::try_from(varint(&mut self.buf)?).ok()?;
                    let (b, rest) = self.buf.split_at_checked(n)?;
                    self.buf = rest;
                    Some(Field::Bytes(num, b))
                }
                I32 => {
                    let (b, rest) = self.buf.split_at_checked(4)?;
                    self.buf = rest;
                    Some(Field::Fixed32(num, u32::from_le_bytes(b.try_into().ok()?)))
                }
                _ => None,
            }
        })();
        if parsed.is_none() {
            self.error = true;
        }
        parsed
    }
}

/// A string field; invalid UTF-8 is a decode error.
pub fn str_of(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

/// A decoded `google.protobuf.Timestamp` as (seconds, nanos).
pub fn timestamp(b: &[u8]) -> Option<(i64, i32)> {
    let mut secs = 0i64;
    let mut nanos = 0i32;
    let mut f = Fields::new(b);
    for field in f.by_ref() {
        match field {
            Field::Varint(1, v) => secs = v as i64,
            Field::Varint(2, v) => nanos = v as i32,
            _ => {}
        }
    }
    (!f.error).then_some((secs, nanos))
}

/// The value of an item: the 0.31 typed oneof when set, else `value_json`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ItemValue<'a> {
    Json(&'a str),
    Null,
    Bool(bool),
    Int(i64),
    Number(f64),
    Text(&'a str),
}

/// One history/summary/config/stats item, borrowed from the record payload.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    pub key: &'a str,
    /// `nested_key` elements (up to a handful are kept inline).
    pub nested: smallvec_lite::Path<'a>,
    pub value: ItemValue<'a>,
}

impl Item<'_> {
    /// Key path: `[key]` when `key` is set, else `nested_key`.
    pub fn path(&self) -> impl Iterator<Item = &str> + '_ {
        let single = (!self.key.is_empty()).then_some(self.key);
        let nested = if self.key.is_empty() {
            self.nested.as_slice()
        } else {
            &[]
        };
        single.into_iter().chain(nested.iter().copied())
    }

    /// Flattened key, path elements joined with `.` as W&B displays them.
    pub fn flat_key_into(&self, out: &mut String) {
        out.clear();
        for (i, p) in self.path().enumerate() {
            if i > 0 {
                out.push('.');
            }
            out.push_str(p);
        }
    }
}

/// Parse one item message (History/Summary/Config/Stats item share field numbers).
pub fn item(b: &[u8]) -> Option<Item<'_>> {
    let mut it = Item {
        key: "",
        nested: smallvec_lite::Path::default(),
        value: ItemValue::Json(""),
    };
    let mut typed: Option<ItemValue<'_>> = None;
    let mut f = Fields::new(b);
    for field in f.by_ref() {
        match field {
            Field::Bytes(1, v) => it.key = str_of(v)?,
            Field::Bytes(2, v) => it.nested.push(str_of(v)?),
            Field::Varint(3, _) => typed = Some(ItemValue::Null),
            Field::Varint(4, v) => typed = Some(ItemValue::Bool(v != 0)),
            Field::Varint(5, v) => {
                typed = Some(ItemValue::Int(((v >> 1) as i64) ^ -((v & 1) as i64)))
            }
            Field::Fixed64(6, v) => typed = Some(ItemValue::Number(f64::from_bits(v))),
            Field::Bytes(7, v) => typed = Some(ItemValue::Text(str_of(v)?)),
            Field::Bytes(8, v) => typed = Some(ItemValue::Json(str_of(v)?)),
            Field::Bytes(16, v) => it.value = ItemValue::Json(str_of(v)?),
            _ => {}
        }
    }
    if f.error {
        return None;
    }
    if let Some(t) = typed {
        it.value = t;
    }
    Some(it)
}

/// A tiny inline vector for key paths, so items don't allocate.
pub mod smallvec_lite {
    const INLINE: usize = 4;

    #[derive(Debug, Clone, Default)]
    pub struct Path<'a> {
        inline: [&'a str; INLINE],
        len: usize,
        spill: Vec<&'a str>,
    }

    impl<'a> Path<'a> {
        pub fn push(&mut self, s: &'a str) {
            if self.len < INLINE && self.spill.is_empty() {
                self.inline[self.len] = s;
                self.len += 1;
            } else {
                if self.spill.is_empty() {
                    self.spill.extend_from_slice(&self.inline[..self.len]);
                }
                self.spill.push(s);
            }
        }

        pub fn as_slice(&self) -> &[&'a str] {
            if self.spill.is_empty() {
                &self.inline[..self.len]
            } else {
                &self.spill
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_bad_input() {
        let mut b: &[u8] = &[0xAC, 0x02];
        assert_eq!(varint(&mut b), Some(300));
        let mut f = Fields::new(&[0x0A, 0x05, 0x61]); // LEN 5 but 1 byte
        assert!(f.next().is_none());
        assert!(f.error);
        let mut f = Fields::new(&[0x0F]); // wire type 7
        assert!(f.next().is_none());
        assert!(f.error);
    }

    #[test]
    fn item_key_forms() {
        // nested_key ["a","b"], value_json "1.5"
        let b = [
            0x12, 1, b'a', 0x12, 1, b'b', 0x82, 0x01, 3, b'1', b'.', b'5',
        ];
        let it = item(&b).expect("item");
        let mut s = String::new();
        it.flat_key_into(&mut s);
        assert_eq!(s, "a.b");
        assert_eq!(it.value, ItemValue::Json("1.5"));
        // typed sint64 -3 wins over value_json
        let b = [0x0A, 1, b'k', 0x28, 5, 0x82, 0x01, 1, b'9'];
        let it = item(&b).expect("item");
        assert_eq!(it.value, ItemValue::Int(-3));
    }
}
