//! The error of one line of a JSON-lines file (a `record` journal, the
//! guard's journal) in the project's own terms: the caller names the file
//! and line (`file:line: what it expected:`), this adds the column and
//! what is wrong, without serde's own "at line 1 column N" (every line is
//! parsed alone, so its line is always 1).

/// `column N: what` of `e`, a parse error of one line on its own
/// (`what` alone for an error of no position, such as a failed read).
pub fn error(e: &serde_json::Error) -> String {
    let what = e.to_string();
    if e.line() == 0 {
        return what;
    }
    let at = format!(" at line {} column {}", e.line(), e.column());
    let what = what.strip_suffix(&at).unwrap_or(&what);
    format!("column {}: {what}", e.column())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_is_said_once_without_serdes_line() {
        let e = serde_json::from_str::<serde_json::Value>(r#"{"a": 1,"#).unwrap_err();
        assert_eq!(error(&e), "column 8: EOF while parsing a value");
        let e = serde_json::from_str::<u32>(r#""2""#).unwrap_err();
        assert_eq!(
            error(&e),
            "column 3: invalid type: string \"2\", expected u32"
        );
        let e = serde_json::from_str::<serde_json::Value>("nope").unwrap_err();
        assert_eq!(error(&e), "column 2: expected ident");
    }
}
