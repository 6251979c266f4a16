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
    /// A varint (wire type 0).
    Varint(u32, u64),
    /// Eight bytes (wire type 1).
    Fixed64(u32, u64),
    /// Length-delimited bytes (wire type 2).
    Bytes(u32, &'a [u8]),
    /// Four bytes (wire type 5).
    Fixed32(u32, u32),
}

impl Field<'_> {
    /// The field number.
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
    /// Set when iteration stopped at malformed input.
    pub error: bool,
}

impl<'a> Fields<'a> {
    /// The fields of the message in `buf`.
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

    #[inline(always)]
    fn next(&mut self) -> Option<Field<'a>> {
        if self.buf.is_empty() || self.error {
            return None;
        }
        // The common cases first, inline: a one-byte tag of a length-delimited
        // field with a one-byte length, or a two-byte one (a record's body).
        if let [tag, len, rest @ ..] = self.buf {
            if *tag < 0x80 && tag & 7 == LEN && *tag >> 3 != 0 {
                if *len < 0x80 {
                    if let Some((b, r)) = rest.split_at_checked(usize::from(*len)) {
                        self.buf = r;
                        return Some(Field::Bytes(u32::from(*tag >> 3), b));
                    }
                } else if let [len2 @ 0..0x80, rest @ ..] = rest {
                    let n = usize::from(len & 0x7f) | usize::from(*len2) << 7;
                    if let Some((b, r)) = rest.split_at_checked(n) {
                        self.buf = r;
                        return Some(Field::Bytes(u32::from(*tag >> 3), b));
                    }
                }
            }
        }
        self.next_general()
    }
}

impl<'a> Fields<'a> {
    /// [`Fields::next`] of any field.
    #[inline(never)]
    fn next_general(&mut self) -> Option<Field<'a>> {
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
    text(b)
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
    /// JSON text (`value_json`).
    Json(&'a str),
    /// JSON `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Number(f64),
    /// A string.
    Text(&'a str),
}

/// One history/summary/config/stats item, borrowed from the record payload.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// The item's key.
    pub key: &'a str,
    /// `nested_key` elements (up to a handful are kept inline).
    pub nested: smallvec_lite::Path<'a>,
    /// Its value.
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
                typed = Some(ItemValue::Int(((v >> 1) as i64) ^ -((v & 1) as i64)));
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

/// An item value as raw bytes: text not yet checked for UTF-8.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawValue<'a> {
    /// JSON text (`value_json`).
    Json(&'a [u8]),
    /// JSON `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Number(f64),
    /// A string.
    Text(&'a [u8]),
}

/// The common item shape, read without UTF-8 checks: one key element (the `key`
/// field with no `nested_key`, or no `key` and one `nested_key`) and its value. The
/// caller checks the text it uses. None for any other shape or malformed input:
/// then [`item`] reads it (or fails on it).
#[inline(always)]
pub fn simple_item(b: &[u8]) -> Option<(&[u8], RawValue<'_>)> {
    if let Some((k, v)) = sniff_item(b) {
        return Some((k, RawValue::Json(v)));
    }
    simple_item_general(b)
}

/// [`simple_item`] of an item not laid out as [`sniff_item`] matches.
#[inline(never)]
pub(crate) fn simple_item_general(b: &[u8]) -> Option<(&[u8], RawValue<'_>)> {
    let mut key: Option<&[u8]> = None;
    let mut nested: Option<&[u8]> = None;
    let mut json: Option<&[u8]> = None;
    let mut typed: Option<RawValue<'_>> = None;
    // A field given twice: [`item`] checks every copy, so it reads the item.
    let once = |slot: bool| if slot { None } else { Some(()) };
    let mut f = Fields::new(b);
    for field in f.by_ref() {
        match field {
            Field::Bytes(1, v) => {
                once(key.is_some())?;
                key = Some(v);
            }
            Field::Bytes(2, v) => {
                once(nested.is_some())?;
                nested = Some(v);
            }
            Field::Varint(3, _) => typed = Some(RawValue::Null),
            Field::Varint(4, v) => typed = Some(RawValue::Bool(v != 0)),
            Field::Varint(5, v) => {
                typed = Some(RawValue::Int(((v >> 1) as i64) ^ -((v & 1) as i64)));
            }
            Field::Fixed64(6, v) => typed = Some(RawValue::Number(f64::from_bits(v))),
            Field::Bytes(n @ (7 | 8), v) => {
                once(matches!(typed, Some(RawValue::Text(_) | RawValue::Json(_))))?;
                typed = Some(if n == 7 {
                    RawValue::Text(v)
                } else {
                    RawValue::Json(v)
                });
            }
            Field::Bytes(16, v) => {
                once(json.is_some())?;
                json = Some(v);
            }
            _ => {}
        }
    }
    if f.error {
        return None;
    }
    let key = match (key.filter(|k| !k.is_empty()), nested) {
        (Some(k), None) => k,
        (None, Some(n)) if key.is_none() => n,
        _ => return None,
    };
    // Text beside a typed value is still checked by [`item`]: only keep the
    // shapes where the value read is the only text.
    if json.is_some() && typed.is_some() {
        return None;
    }
    Some((
        key,
        typed.unwrap_or(RawValue::Json(json.unwrap_or_default())),
    ))
}

/// The layout wandb-core writes for nearly every item, matched byte by byte: a
/// short `key` (non-empty) or one `nested_key`, then a short `value_json`, and
/// nothing else.
#[inline(always)]
pub(crate) fn sniff_item(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let [tag @ (0x0A | 0x12), klen, rest @ ..] = b else {
        return None;
    };
    if *klen >= 0x80 || (*tag == 0x0A && *klen == 0) {
        return None;
    }
    let (key, rest) = rest.split_at_checked(usize::from(*klen))?;
    let [0x82, 0x01, vlen, value @ ..] = rest else {
        return None;
    };
    (*vlen < 0x80 && value.len() == usize::from(*vlen)).then_some((key, value))
}

/// An item laid out as key fields (`key` or `nested_key`, one-byte tags and
/// lengths, at least one) and then a short `value_json`, nothing else: the key
/// fields' bytes and the value. Items with equal key bytes have equal key paths.
#[inline]
pub(crate) fn sniff_path_item(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut rest = b;
    while let [0x0A | 0x12, len, tail @ ..] = rest {
        if *len >= 0x80 {
            return None;
        }
        rest = tail.get(usize::from(*len)..)?;
    }
    let [0x82, 0x01, vlen, value @ ..] = rest else {
        return None;
    };
    let keys = &b[..b.len() - rest.len()];
    (!keys.is_empty() && *vlen < 0x80 && value.len() == usize::from(*vlen)).then_some((keys, value))
}

/// Text bytes as a string (None: not UTF-8). Short ASCII text (nearly every key
/// and value) is checked inline, a word at a time, without the call into the
/// general check.
#[inline(always)]
pub fn text(b: &[u8]) -> Option<&str> {
    if short_ascii(b) {
        // SAFETY: every byte is below 0x80, so `b` is ASCII and ASCII is UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(b) });
    }
    std::str::from_utf8(b).ok()
}

/// Whether `b` is at most 32 bytes, all ASCII: its bytes read as overlapping
/// words that together hold every one of them.
#[inline(always)]
fn short_ascii(b: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let word = |i: usize| {
        b.get(i..i + 8).map_or(HIGH, |w| {
            u64::from_le_bytes(w.try_into().unwrap_or([0x80; 8]))
        })
    };
    let n = b.len();
    match n {
        0 => true,
        1..=3 => (b[0] | b[n / 2] | b[n - 1]) < 0x80,
        4..=7 => {
            let four = |i: usize| {
                b.get(i..i + 4).map_or(0x8080_8080, |w| {
                    u32::from_le_bytes(w.try_into().unwrap_or([0x80; 4]))
                })
            };
            (four(0) | four(n - 4)) & 0x8080_8080 == 0
        }
        8..=16 => (word(0) | word(n - 8)) & HIGH == 0,
        17..=32 => (word(0) | word(8) | word(n - 16) | word(n - 8)) & HIGH == 0,
        _ => false,
    }
}

/// A tiny inline vector for key paths, so items don't allocate.
pub mod smallvec_lite {
    const INLINE: usize = 4;

    /// Key path elements: a handful inline, more on the heap.
    #[derive(Debug, Clone, Default)]
    pub struct Path<'a> {
        inline: [&'a str; INLINE],
        len: usize,
        spill: Vec<&'a str>,
    }

    impl<'a> Path<'a> {
        /// Append an element.
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

        /// The elements, in order.
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

    /// The inline cases of [`Fields::next`] read every input as the general
    /// reader alone does: random bytes, and messages of short and long fields.
    #[test]
    fn the_inline_field_cases_equal_the_general_reading() {
        let mut rng = crate::test_rng::Rng(0x0DDB_1A5E_5BAD_5EED);
        let mut rnd = || rng.next();
        for round in 0..20_000 {
            let mut b = Vec::new();
            if round % 2 == 0 {
                for _ in 0..(rnd() % 64) {
                    b.push(rnd() as u8);
                }
            } else {
                // Fields of one- and two-byte lengths, cut or changed at times.
                for _ in 0..(rnd() % 4) {
                    let n = (rnd() % 300) as usize;
                    b.push(((1 + rnd() % 15) as u8) << 3 | 2);
                    if n < 0x80 {
                        b.push(n as u8);
                    } else {
                        b.push((n as u8) | 0x80);
                        b.push((n >> 7) as u8);
                    }
                    b.extend((0..n).map(|i| i as u8));
                }
                if rnd() % 3 == 0 && !b.is_empty() {
                    let len = b.len();
                    b.truncate((rnd() as usize) % len);
                }
            }
            let mut f = Fields::new(&b);
            let fast: Vec<String> = f.by_ref().map(|x| format!("{x:?}")).collect();
            let mut g = Fields::new(&b);
            let mut general = Vec::new();
            while !g.buf.is_empty() && !g.error {
                match g.next_general() {
                    Some(x) => general.push(format!("{x:?}")),
                    None => break,
                }
            }
            assert_eq!(fast, general, "{b:?}");
            assert_eq!(f.error, g.error, "{b:?}");
        }
    }

    /// The word-wise ASCII check against the bytewise one, for every length to 40
    /// and a high bit at every place.
    #[test]
    fn short_ascii_checks_every_byte() {
        for n in 0..=40usize {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(short_ascii(&a), n <= 32, "{n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] |= 0x80;
                assert!(!short_ascii(&b), "{n} at {i}");
                assert_eq!(text(&b).is_some(), std::str::from_utf8(&b).is_ok());
            }
        }
    }

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

    /// The fast readers agree with [`item`] on every item they take: wandb-core's
    /// shapes, typed values, repeated fields, and random damage to all of them.
    #[test]
    fn the_fast_item_readers_agree_with_the_full_one() {
        use crate::pb;
        use prost::Message as _;
        let mut shapes: Vec<Vec<u8>> = Vec::new();
        for key in ["", "loss", "a.b"] {
            for nested in [vec![], vec!["x"], vec!["x", "y"], vec![""]] {
                for value in ["", "0.25", "\"text\"", "NaN", "null"] {
                    shapes.push(
                        pb::HistoryItem {
                            key: key.into(),
                            nested_key: nested.iter().map(|s| (*s).to_owned()).collect(),
                            value_json: value.into(),
                            ..Default::default()
                        }
                        .encode_to_vec(),
                    );
                }
            }
        }
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let base = shapes.clone();
        for b in &base {
            for _ in 0..200 {
                let mut m = b.clone();
                match rnd() % 4 {
                    0 if !m.is_empty() => {
                        let i = (rnd() as usize) % m.len();
                        m[i] = (rnd() & 0xFF) as u8;
                    }
                    1 => m.extend_from_slice(&b[..(rnd() as usize) % (b.len() + 1)]),
                    2 if !m.is_empty() => m.truncate((rnd() as usize) % m.len()),
                    _ => m.extend_from_slice(&[0x82, 0x01, 1, 0xFF]),
                }
                shapes.push(m);
            }
        }
        for b in &shapes {
            let Some((k, v)) = simple_item(b) else {
                continue;
            };
            let full = item(b);
            let text_ok = |r: &RawValue<'_>| match r {
                RawValue::Json(t) | RawValue::Text(t) => text(t).is_some(),
                _ => true,
            };
            if text(k).is_none() || !text_ok(&v) {
                assert!(full.is_none(), "{b:?}: the full reader takes bad text");
                continue;
            }
            let it = full.unwrap_or_else(|| panic!("{b:?}: only the fast reader takes it"));
            let path: Vec<&str> = it.path().collect();
            assert_eq!(path, [text(k).unwrap_or_default()], "{b:?}");
            let same = match (v, it.value) {
                (RawValue::Json(a), ItemValue::Json(b))
                | (RawValue::Text(a), ItemValue::Text(b)) => a == b.as_bytes(),
                (RawValue::Null, ItemValue::Null) => true,
                (RawValue::Bool(a), ItemValue::Bool(b)) => a == b,
                (RawValue::Int(a), ItemValue::Int(b)) => a == b,
                (RawValue::Number(a), ItemValue::Number(b)) => a.to_bits() == b.to_bits(),
                _ => false,
            };
            assert!(same, "{b:?}: {v:?} vs {:?}", it.value);
        }
    }
}
