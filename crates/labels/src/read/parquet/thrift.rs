//! Just enough of Thrift's compact protocol to read the few numbers of a Parquet footer
//! and page header that must be checked before parquet acts on them (the nesting of the
//! schema, the sizes a page claims), and to skip everything else.
//!
//! <https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md>

/// Field and element types of the compact protocol.
pub mod kind {
    pub const STOP: u8 = 0;
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const BYTE: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
    pub const UUID: u8 = 13;
}

/// Structures nested deeper than this are not Parquet metadata (its deepest is four).
const MAX_SKIP_DEPTH: u32 = 32;

/// Why the bytes are not the Thrift structure expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    /// The bytes end inside a value: more are needed (a page header read in part).
    Truncated,
    Invalid(&'static str),
}

pub type Result<T> = std::result::Result<T, Malformed>;

/// A reader over one buffer.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// One field header of a struct: its id and type.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub id: i16,
    pub kind: u8,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.at
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self.bytes.get(self.at).ok_or(Malformed::Truncated)?;
        self.at += 1;
        Ok(b)
    }

    fn skip_bytes(&mut self, n: u64) -> Result<()> {
        let end = (self.at as u64).checked_add(n).ok_or(Malformed::Invalid("a length past any file"))?;
        if end > self.bytes.len() as u64 {
            return Err(Malformed::Truncated);
        }
        self.at = end as usize;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err(Malformed::Invalid("a varint longer than 64 bits"));
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Malformed::Invalid("a varint longer than 64 bits"))
    }

    fn zigzag(&mut self) -> Result<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// An `i32` field's value.
    pub fn i32(&mut self) -> Result<i32> {
        i32::try_from(self.zigzag()?).map_err(|_| Malformed::Invalid("an i32 out of range"))
    }

    /// The next field header of a struct; `None` at its end. `last` is the previous
    /// field's id (0 at the start of the struct).
    pub fn field(&mut self, last: i16) -> Result<Option<Field>> {
        let header = self.byte()?;
        let kind = header & 0x0f;
        if kind == kind::STOP {
            return Ok(None);
        }
        let delta = header >> 4;
        let id = if delta == 0 {
            i16::try_from(self.zigzag()?).map_err(|_| Malformed::Invalid("a field id out of range"))?
        } else {
            last.checked_add(i16::from(delta)).ok_or(Malformed::Invalid("a field id out of range"))?
        };
        Ok(Some(Field { id, kind }))
    }

    /// A list or set header: its element type and length.
    pub fn list(&mut self) -> Result<(u8, u64)> {
        let header = self.byte()?;
        let len = match header >> 4 {
            15 => self.varint()?,
            short => u64::from(short),
        };
        Ok((header & 0x0f, len))
    }

    /// Skips a value of type `kind` (a field's value, whose booleans are in its header).
    pub fn skip(&mut self, kind: u8) -> Result<()> {
        self.skip_value(kind, false, 0)
    }

    fn skip_value(&mut self, kind: u8, in_collection: bool, depth: u32) -> Result<()> {
        if depth > MAX_SKIP_DEPTH {
            return Err(Malformed::Invalid("values nested too deeply"));
        }
        match kind {
            kind::TRUE | kind::FALSE if !in_collection => Ok(()),
            kind::TRUE | kind::FALSE | kind::BYTE => self.skip_bytes(1),
            kind::I16 | kind::I32 | kind::I64 => self.varint().map(drop),
            kind::DOUBLE => self.skip_bytes(8),
            kind::UUID => self.skip_bytes(16),
            kind::BINARY => {
                let len = self.varint()?;
                self.skip_bytes(len)
            }
            kind::LIST | kind::SET => {
                let (element, len) = self.list()?;
                self.skip_elements(element, len, depth)
            }
            kind::MAP => {
                let len = self.varint()?;
                if len == 0 {
                    return Ok(());
                }
                let types = self.byte()?;
                for _ in 0..len {
                    self.skip_value(types >> 4, true, depth + 1)?;
                    self.skip_value(types & 0x0f, true, depth + 1)?;
                }
                Ok(())
            }
            kind::STRUCT => {
                let mut last = 0;
                while let Some(field) = self.field(last)? {
                    self.skip_value(field.kind, false, depth + 1)?;
                    last = field.id;
                }
                Ok(())
            }
            _ => Err(Malformed::Invalid("an unknown Thrift type")),
        }
    }

    fn skip_elements(&mut self, element: u8, len: u64, depth: u32) -> Result<()> {
        // Every element takes at least one byte: a count past the bytes left is corrupt,
        // and not looped over.
        if len > (self.bytes.len() - self.at) as u64 {
            return Err(Malformed::Truncated);
        }
        for _ in 0..len {
            self.skip_value(element, true, depth + 1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_skips_what_it_does_not_need() {
        // struct { 1: i32 -3, 2: binary "ab", 4: list<i32> [1, 2], 5: struct { 1: true } }
        let bytes = [0x15, 0x05, 0x18, 0x02, b'a', b'b', 0x29, 0x25, 0x02, 0x04, 0x1c, 0x11, 0x00, 0x00];
        let mut r = Reader::new(&bytes);
        let f = r.field(0).unwrap().unwrap();
        assert_eq!((f.id, f.kind), (1, kind::I32));
        assert_eq!(r.i32().unwrap(), -3);
        let mut last = f.id;
        let mut ids = Vec::new();
        while let Some(f) = r.field(last).unwrap() {
            ids.push(f.id);
            r.skip(f.kind).unwrap();
            last = f.id;
        }
        assert_eq!(ids, [2, 4, 5]);
        assert_eq!(r.position(), bytes.len());
    }

    #[test]
    fn a_cut_value_is_truncated_and_a_runaway_count_is_not_looped_over() {
        let mut r = Reader::new(&[0x18, 0x09, b'a']);
        let f = r.field(0).unwrap().unwrap();
        assert_eq!(r.skip(f.kind), Err(Malformed::Truncated));
        // A list header claiming 2^32 elements in a 7-byte buffer.
        let mut r = Reader::new(&[0xf5, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00]);
        assert_eq!(r.skip(kind::LIST), Err(Malformed::Truncated));
    }
}
