//! The element types the readers decode, seen as integers or as floats.

/// Integer element types the readers decode.
pub trait IntValue: Copy {
    fn to_i64(self) -> i64;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl IntValue for $t {
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
        }
    )*};
}
int_value!(i8, i16, i32, i64, u8, u16, u32);

impl IntValue for u64 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        i64::try_from(self).unwrap_or(i64::MAX)
    }
}

impl IntValue for bool {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
}

/// Every numeric element type, seen as a float (for one-hot row classification).
pub trait AsF64: Copy {
    fn as_f64(self) -> f64;
}

macro_rules! as_f64 {
    ($($t:ty),*) => {$(
        impl AsF64 for $t {
            #[inline(always)]
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
as_f64!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl AsF64 for bool {
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self as u8 as f64
    }
}
