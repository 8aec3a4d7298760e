//! Content negotiation for `/metrics`: the Prometheus text format
//! (version 0.0.4, the default) or OpenMetrics 1.0.0 when the scraper's
//! `Accept` header prefers it (Prometheus itself asks for OpenMetrics
//! first). [`convert`] turns a rendered 0.0.4 body into OpenMetrics: the
//! same samples, counter families named without their `_total` suffix in
//! `# HELP`/`# TYPE`, and the mandatory `# EOF` line. Pure: bytes in,
//! bytes out.

use irqlab_core::scan::find_byte;

/// Exposition format of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposition {
    /// `text/plain; version=0.0.4`.
    Prometheus,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
}

impl Exposition {
    /// The `Content-Type` of a body in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Exposition::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Exposition::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// The format a request head asks for: the supported media type with the
/// highest `q` in its `Accept` header (OpenMetrics on a tie, as the client
/// listed it as acceptable); Prometheus text without a usable header.
pub fn negotiate(head: &[u8]) -> Exposition {
    let Some(accept) = header(head, "accept") else {
        return Exposition::Prometheus;
    };
    let (mut om, mut text) = (None::<f32>, None::<f32>);
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let mut q = 1.0f32;
        let mut version = None;
        for p in parts {
            let Some((k, v)) = p.split_once('=') else {
                continue;
            };
            match k.trim().to_ascii_lowercase().as_str() {
                "q" => q = v.trim().parse().unwrap_or(0.0),
                "version" => version = Some(v.trim().to_string()),
                _ => {}
            }
        }
        let best = |slot: &mut Option<f32>| *slot = Some(slot.map_or(q, |o| o.max(q)));
        match media.as_str() {
            "application/openmetrics-text"
                if matches!(version.as_deref(), None | Some("1.0.0") | Some("0.0.1")) =>
            {
                best(&mut om)
            }
            "text/plain" | "text/*" | "*/*" => best(&mut text),
            _ => {}
        }
    }
    match (om, text) {
        (Some(o), t) if o > 0.0 && o >= t.unwrap_or(0.0) => Exposition::OpenMetrics,
        _ => Exposition::Prometheus,
    }
}

/// Value of header `name` (lower case) in a request head, if present.
pub(crate) fn header<'a>(head: &'a [u8], name: &str) -> Option<&'a str> {
    let text = std::str::from_utf8(head).ok()?;
    text.split('\n').skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Write the OpenMetrics form of Prometheus text `body` into `out`. Only
/// the comment lines change, so the samples between them are copied in
/// whole runs (a body of a million series is a few memory copies).
pub fn convert(body: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(body.len() + 8);
    let comments: Vec<&[u8]> = comment_lines(body).collect();
    let counter_families: Vec<&[u8]> = comments
        .iter()
        .filter(|l| l.starts_with(b"# TYPE ") && l.trim_ascii_end().ends_with(b" counter"))
        .filter_map(|l| l.get(7..).and_then(|r| r.split(|&b| b == b' ').next()))
        .collect();
    let mut copied = 0;
    for line in comments {
        let at = line.as_ptr() as usize - body.as_ptr() as usize;
        out.extend_from_slice(body.get(copied..at).unwrap_or_default());
        copied = at + line.len();
        match meta_name(line) {
            Some((prefix, name, rest)) if counter_families.contains(&name) => {
                out.extend_from_slice(prefix);
                out.extend_from_slice(name.strip_suffix(b"_total").unwrap_or(name));
                out.extend_from_slice(rest);
            }
            _ => out.extend_from_slice(line),
        }
    }
    out.extend_from_slice(body.get(copied..).unwrap_or_default());
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(b"# EOF\n");
}

/// The lines of `body` that begin with `#` (each with its line end):
/// found by their `#`, so that the samples between them are skipped whole.
fn comment_lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(i) = body.get(from..).and_then(|r| find_byte(b'#', r)) {
            let at = from + i;
            let rest = body.get(at..).unwrap_or_default();
            let end = find_byte(b'\n', rest).map_or(rest.len(), |e| e + 1);
            from = at + end;
            if at == 0 || body.get(at - 1) == Some(&b'\n') {
                return rest.get(..end);
            }
        }
        None
    })
}

/// `(prefix, family name, rest)` of a `# HELP`/`# TYPE` line.
fn meta_name(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let prefix_len = if line.starts_with(b"# HELP ") || line.starts_with(b"# TYPE ") {
        7
    } else {
        return None;
    };
    let rest = line.get(prefix_len..)?;
    let end = rest
        .iter()
        .position(|&b| b == b' ' || b == b'\n')
        .unwrap_or(rest.len());
    Some((line.get(..prefix_len)?, rest.get(..end)?, rest.get(end..)?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

    fn head(accept: Option<&str>) -> Vec<u8> {
        let mut h = b"GET /metrics HTTP/1.1\r\nHost: x\r\n".to_vec();
        if let Some(a) = accept {
            h.extend_from_slice(format!("Accept: {a}\r\n").as_bytes());
        }
        h.extend_from_slice(b"\r\n");
        h
    }

    #[test]
    fn negotiation_follows_the_accept_header() {
        assert_eq!(negotiate(&head(None)), Exposition::Prometheus);
        assert_eq!(
            negotiate(&head(Some(PROMETHEUS_ACCEPT))),
            Exposition::OpenMetrics
        );
        assert_eq!(negotiate(&head(Some("*/*"))), Exposition::Prometheus);
        assert_eq!(negotiate(&head(Some("text/plain"))), Exposition::Prometheus);
        assert_eq!(
            negotiate(&head(Some(
                "text/plain;q=0.9, application/openmetrics-text;q=0.5"
            ))),
            Exposition::Prometheus
        );
        assert_eq!(
            negotiate(&head(Some("application/openmetrics-text; version=2.0.0"))),
            Exposition::Prometheus,
            "an unknown version is not offered"
        );
        assert_eq!(
            negotiate(&head(Some("application/openmetrics-text;q=0"))),
            Exposition::Prometheus
        );
        assert_eq!(
            negotiate(b"GET /metrics HTTP/1.1\r\naccept:application/openmetrics-text\r\n\r\n"),
            Exposition::OpenMetrics
        );
        assert_eq!(negotiate(b"\xff\xfe"), Exposition::Prometheus);
    }

    #[test]
    fn counters_lose_total_in_metadata_and_the_body_ends_with_eof() {
        let body = b"# HELP irqlab_interrupts_total Interrupts.\n# TYPE irqlab_interrupts_total counter\nirqlab_interrupts_total{irq=\"LOC\",cpu=\"0\"} 5\n# HELP irqlab_exposed_series Series.\n# TYPE irqlab_exposed_series gauge\nirqlab_exposed_series 1\n";
        let mut out = Vec::new();
        convert(body, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "# HELP irqlab_interrupts Interrupts.\n# TYPE irqlab_interrupts counter\nirqlab_interrupts_total{irq=\"LOC\",cpu=\"0\"} 5\n# HELP irqlab_exposed_series Series.\n# TYPE irqlab_exposed_series gauge\nirqlab_exposed_series 1\n# EOF\n"
        );
        let mut empty = Vec::new();
        convert(b"", &mut empty);
        assert_eq!(empty, b"# EOF\n");
    }

    /// The conversion line by line, as the format defines it.
    fn convert_by_lines(body: &[u8]) -> Vec<u8> {
        let lines: Vec<&[u8]> = body.split_inclusive(|&b| b == b'\n').collect();
        let counters: Vec<&[u8]> = lines
            .iter()
            .filter(|l| l.starts_with(b"# TYPE ") && l.trim_ascii_end().ends_with(b" counter"))
            .filter_map(|l| l.get(7..).and_then(|r| r.split(|&b| b == b' ').next()))
            .collect();
        let mut out = Vec::new();
        for l in lines {
            match meta_name(l) {
                Some((p, n, r)) if counters.contains(&n) => {
                    out.extend_from_slice(p);
                    out.extend_from_slice(n.strip_suffix(b"_total").unwrap_or(n));
                    out.extend_from_slice(r);
                }
                _ => out.extend_from_slice(l),
            }
        }
        if !out.is_empty() && !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(b"# EOF\n");
        out
    }

    proptest::proptest! {
        #[test]
        fn run_copies_equal_the_line_by_line_conversion(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("# (HELP|TYPE) [a-z_]{1,12}( counter| gauge| [a-z #]{0,8})?").unwrap(),
                    proptest::string::string_regex("[a-z_]{1,8}(_total)?\\{l=\"[a-z#]{0,4}\"\\} [0-9]{1,4}").unwrap(),
                    proptest::string::string_regex("#[ a-z#]{0,6}").unwrap(),
                ],
                0..40,
            ),
            trailing_newline in proptest::bool::ANY,
        ) {
            let mut body = lines.join("\n").into_bytes();
            if trailing_newline && !body.is_empty() {
                body.push(b'\n');
            }
            let mut out = Vec::new();
            convert(&body, &mut out);
            proptest::prop_assert_eq!(out, convert_by_lines(&body));
        }
    }
}
