//! JSON inputs read with every key once per object: serde_json keeps the
//! last value of a repeated key and drops the others unseen, where a CSV
//! header with a column twice is refused (`input_table`). One pass, into
//! the `serde_json::Value` that `serde_json::from_slice` would give.
//! Specified in `docs/compare-input.md` ("Errors").

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::fmt;
use std::path::Path;

/// Why a text gave no value.
#[derive(Debug)]
pub enum Bad {
    /// A key twice in one object, at this 1-based line of the text.
    Repeated { key: String, line: usize },
    /// Not JSON (or not one value).
    Invalid(serde_json::Error),
}

/// The error for `key` repeated in an object at `at` (`file:line`, or
/// `file: line N` where the number after a JSON file's name is an item).
pub fn repeated(at: &str, key: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{at}: key {key:?} is in one object twice: only its last value would be read, \
         the others dropped unseen"
    )
}

/// The JSON file `path` of `text`: an error naming the file when it is
/// not JSON, and the file, line and key of a key twice in one object.
pub fn read(path: &Path, text: &str) -> anyhow::Result<Value> {
    match from_slice(text.as_bytes()) {
        Ok(doc) => Ok(doc),
        Err(Bad::Repeated { key, line }) => {
            Err(repeated(&format!("{}: line {line}", path.display()), &key))
        }
        Err(Bad::Invalid(e)) => {
            Err(anyhow::Error::new(e).context(format!("{}: not valid JSON", path.display())))
        }
    }
}

/// A bench run's record that compare reads beside its trials (`plan.json`,
/// `env.json`, `summary.json`, `env-resume-*.json`), parsed once: `None`
/// when it cannot be read or is not JSON (what reads it goes without, as
/// for a run that never wrote it), and an error naming the file, line and
/// key of a key twice in one object.
pub fn read_record(path: &Path) -> anyhow::Result<Option<Value>> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(None);
    };
    match from_slice(&bytes) {
        Ok(doc) => Ok(Some(doc)),
        Err(Bad::Repeated { key, line }) => {
            Err(repeated(&format!("{}: line {line}", path.display()), &key))
        }
        Err(Bad::Invalid(_)) => Ok(None),
    }
}

/// `bytes` as one JSON value, every object's keys unique.
pub fn from_slice(bytes: &[u8]) -> Result<Value, Bad> {
    let repeated = Cell::new(None);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Unique(&repeated)
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    value.map_err(|e| match repeated.take() {
        Some(key) => Bad::Repeated {
            key,
            line: e.line(),
        },
        None => Bad::Invalid(e),
    })
}

/// A value whose objects are checked for repeated keys; the first one
/// found is left in the cell.
#[derive(Clone, Copy)]
struct Unique<'a>(&'a Cell<Option<String>>);

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match out.entry(key) {
                serde_json::map::Entry::Occupied(e) => {
                    // the error's position is the repeated key's
                    self.0.set(Some(e.key().clone()));
                    return Err(de::Error::custom("a key repeated in an object"));
                }
                serde_json::map::Entry::Vacant(e) => {
                    e.insert(map.next_value_seed(self)?);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn key_and_line(text: &str) -> (String, usize) {
        match from_slice(text.as_bytes()) {
            Err(Bad::Repeated { key, line }) => (key, line),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_value_is_as_serde_json_reads_it() {
        let text = r#"{"a":[1,-2,18446744073709551615,0.1,1e300,"\u00e9",null,true],
            "b":{"c":{}},"d":[]}"#;
        let want: Value = serde_json::from_str(text).unwrap();
        assert_eq!(from_slice(text.as_bytes()).unwrap(), want);
        assert_eq!(from_slice(b" 3 ").unwrap(), Value::from(3));
    }

    #[test]
    fn a_repeated_key_is_named_with_its_line_at_any_depth() {
        assert_eq!(key_and_line(r#"{"m":1,"m":5}"#), ("m".to_string(), 1));
        let nested = "[{\"x\":1},\n {\"x\":2,\n  \"metrics\":{\"a\":{\"value\":1},\n  \"a\":{}}}]";
        assert_eq!(key_and_line(nested), ("a".to_string(), 4));
        // the same key in two objects is no repeat
        assert!(from_slice(br#"[{"m":1},{"m":2,"n":{"m":3}}]"#).is_ok());
    }

    #[test]
    fn text_that_is_not_json_is_invalid_even_after_a_repeat() {
        assert!(matches!(from_slice(br#"{"m":1"#), Err(Bad::Invalid(_))));
        assert!(matches!(from_slice(b"1 2"), Err(Bad::Invalid(_))));
        // a repeat is found before the text ends: the caller tells a torn line
        assert!(matches!(
            from_slice(br#"{"m":1,"m":2,"#),
            Err(Bad::Repeated { .. })
        ));
    }
}
