//! Settings read from text by their own parser while a config file is
//! deserialized: [`parsed`].

use serde::{Deserialize, Deserializer};

/// A string value read with `parse`, its error naming `key` (the config
/// file's `section.key`), so that a message says which setting is wrong.
pub fn parsed<'de, D, T>(
    d: D,
    key: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let raw = String::deserialize(d)?;
    parse(&raw).map_err(|e| serde::de::Error::custom(format!("{key}: {e}")))
}
