//! Opening a file and naming what it holds, for errors of one line: the columns, members
//! or tensors there are, shortened, and the one the user asked for.

use crate::input::InputFile;

/// Opens a file with a one-line error naming it.
pub(super) fn open(file: &InputFile) -> anyhow::Result<std::fs::File> {
    std::fs::File::open(&file.path).map_err(|e| anyhow::anyhow!("{}: cannot open: {e}", file.display()))
}

/// "a, b, c" for an error message, shortened when long.
pub(super) fn list_names<S: AsRef<str>>(names: &[S]) -> String {
    list_names_of(names, names.len())
}

/// "a, b, c, … (N in all)": the first of `total` names, of which `names` holds the first.
pub(super) fn list_names_of<S: AsRef<str>>(names: &[S], total: usize) -> String {
    const SHOWN: usize = 30;
    let mut out = names.iter().take(SHOWN).map(|s| shorten(s.as_ref())).collect::<Vec<_>>().join(", ");
    if total > SHOWN {
        out.push_str(&format!(", … ({total} in all)"));
    }
    out
}

/// A name as an error message shows it: on one line, and cut when very long (a column
/// named by a corrupt file, or a whole line taken for a header).
pub(super) fn shorten(name: &str) -> String {
    const MAX: usize = 60;
    let flat: String = name.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    match flat.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// Picks the one name the user asked for, or the only one there is.
pub(super) fn pick_name<'a>(
    file: &InputFile,
    what: &str,
    asked: Option<&str>,
    names: &'a [String],
) -> anyhow::Result<&'a str> {
    match asked {
        Some(name) => names.iter().find(|n| n.as_str() == name).map(|s| s.as_str()).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no {what} `{}`; the file has: {}",
                file.display(),
                shorten(name),
                list_names(names)
            )
        }),
        None if names.len() == 1 => Ok(&names[0]),
        None if names.is_empty() => anyhow::bail!("{}: the file holds no {what}", file.display()),
        None => anyhow::bail!(
            "{}: pick a {what} with --column; the file has: {}",
            file.display(),
            list_names(names)
        ),
    }
}
