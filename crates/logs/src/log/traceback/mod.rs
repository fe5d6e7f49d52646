//! Python tracebacks as they appear in logs: plain CPython (3.8 to 3.13, with `^^^`
//! markers), IPython 8 (`Cell In[7], line 12`, `File path:line, in f`), IPython 7 /
//! Colab (`<ipython-input-3-…> in f()`, `---> 10` arrows), faulthandler dumps, and the
//! `Original Traceback` that DataLoader workers and DataParallel replicas embed in the
//! message of the exception they re-raise.
//!
//! [`Builder`] (in `builder`) reads a traceback line by line into a [`Traceback`]
//! (`parsed`); `lines` knows what each kind of line looks like.

mod builder;
mod lines;
mod parsed;

pub use builder::{Builder, Fed};
pub use lines::{
    faulthandler_header, header_style, ipython7_frame, ipython_frame_start, is_exception_line,
    is_retyped_error_name, parse_exception, python_frame,
};
pub use parsed::{ExceptionText, Frame, Style, Traceback};
