//! Enums written by name in settings, flags and requests. strum's derives
//! give each enum its names (`EnumString`, `IntoStaticStr`, `VariantNames`,
//! `VariantArray`); [`Named`] adds the one parse whose error says what was
//! expected, so no enum writes its names twice.

use std::str::FromStr;

pub use strum::{EnumString, IntoStaticStr, VariantArray, VariantNames};

/// An enum of named values, its names from strum's derives.
pub trait Named:
    Copy + FromStr + VariantNames + VariantArray + Into<&'static str> + 'static
{
    /// What a value is called in an error: `lexical strategy`.
    const WHAT: &'static str;

    /// Its name, the one [`Named::parse`] takes.
    fn name(self) -> &'static str {
        self.into()
    }

    /// The value of a name (surrounding spaces ignored); the error lists the
    /// names there are.
    fn parse(raw: &str) -> Result<Self, String> {
        raw.trim().parse().map_err(|_| {
            format!(
                "unknown {} {raw:?}: use {}",
                Self::WHAT,
                one_of(<Self as VariantNames>::VARIANTS)
            )
        })
    }

    /// Every value, in declaration order.
    fn all() -> &'static [Self] {
        <Self as VariantArray>::VARIANTS
    }
}

/// `a`, `a or b`, `a, b or c`.
pub fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [only] => (*only).to_string(),
        [head @ .., last] => format!("{} or {last}", head.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(
        Debug, Clone, Copy, PartialEq, EnumString, IntoStaticStr, VariantNames, VariantArray,
    )]
    #[strum(serialize_all = "snake_case")]
    enum Shade {
        Light,
        DeepBlue,
        #[strum(serialize = "x.ray")]
        XRay,
    }

    impl Named for Shade {
        const WHAT: &'static str = "shade";
    }

    #[test]
    fn names_parse_back_and_errors_list_them() {
        let cases: &[(&str, Result<Shade, &str>)] = &[
            ("light", Ok(Shade::Light)),
            (" deep_blue ", Ok(Shade::DeepBlue)),
            ("x.ray", Ok(Shade::XRay)),
            (
                "Light",
                Err("unknown shade \"Light\": use light, deep_blue or x.ray"),
            ),
            ("", Err("unknown shade \"\": use light, deep_blue or x.ray")),
        ];
        for (raw, want) in cases {
            assert_eq!(Shade::parse(raw), want.map_err(str::to_string), "{raw:?}");
        }
        for shade in Shade::all() {
            assert_eq!(Shade::parse(shade.name()), Ok(*shade));
        }
    }

    #[test]
    fn lists_read_as_a_sentence() {
        for (names, want) in [
            (&[][..], ""),
            (&["a"][..], "a"),
            (&["a", "b"][..], "a or b"),
            (&["a", "b", "c"][..], "a, b or c"),
        ] {
            assert_eq!(one_of(names), want);
        }
    }
}
