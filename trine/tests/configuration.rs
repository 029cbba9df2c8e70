//! docs/configuration.md names every key of the config file and every
//! `TRINE_*` variable a command reads: a setting added without its
//! documentation fails here.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::fmt;

use clap::CommandFactory;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use trine::config::{
    ContextSection, FusionSection, LexicalSection, PeersConfig, QuotasSection, ServerSection,
    TenantQuota, TlsSection,
};

/// What [`Probe`] found: the field names a derived `Deserialize` asks for.
#[derive(Debug)]
struct Fields(&'static [&'static str]);

impl fmt::Display for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::error::Error for Fields {}

impl de::Error for Fields {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Self(&[])
    }
}

/// A deserializer that answers a struct's request with the names of its
/// fields (serde hands them over) and nothing else.
struct Probe;

impl<'de> Deserializer<'de> for Probe {
    type Error = Fields;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Fields> {
        Err(Fields(fields))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Fields> {
        Err(Fields(&[]))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The keys of the config file's table `T` reads.
fn keys<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    match T::deserialize(Probe) {
        Err(Fields(fields)) => fields,
        Ok(_) => &[],
    }
}

fn documentation() -> String {
    std::fs::read_to_string(trine_testkit::workspace_dir().join("docs/configuration.md")).unwrap()
}

/// Each table of the file (`""` the top level) and the keys it takes.
fn tables() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("", keys::<trine::Config>()),
        ("lexical", keys::<LexicalSection>()),
        ("context", keys::<ContextSection>()),
        ("fusion", keys::<FusionSection>()),
        ("payload", keys::<trine_store::PayloadSchema>()),
        ("peers", keys::<PeersConfig>()),
        ("server", keys::<ServerSection>()),
        ("tls", keys::<TlsSection>()),
        ("quotas", keys::<QuotasSection>()),
        ("quotas.tenant.NAME", keys::<TenantQuota>()),
    ]
}

#[test]
fn every_key_of_the_config_file_is_documented() {
    let docs = documentation();
    let tables = tables();
    let sections: Vec<&str> = tables.iter().skip(1).map(|(t, _)| *t).collect();
    let mut missing = Vec::new();
    for (table, keys) in &tables {
        assert!(
            !keys.is_empty(),
            "no keys read for [{table}]: the probe broke"
        );
        // A table of named tables is written with a name of the reader's.
        let header = match table.strip_suffix(".NAME") {
            Some(stem) => format!("[{stem}."),
            None => format!("[{table}]"),
        };
        if !table.is_empty() && !docs.contains(&header) {
            missing.push(format!("the table [{table}]"));
        }
        for key in *keys {
            // A table is a key of the table above it, documented as a table.
            let path = if table.is_empty() {
                (*key).to_string()
            } else {
                format!("{table}.{key}")
            };
            if sections.iter().any(|s| s.starts_with(&path)) {
                continue;
            }
            let named = docs.contains(&format!("`{key}`")) || docs.contains(&format!("{key} = "));
            if !named {
                missing.push(if table.is_empty() {
                    format!("`{key}`")
                } else {
                    format!("[{table}] `{key}`")
                });
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys the config file takes that docs/configuration.md does not name: {missing:#?}"
    );
}

/// The `TRINE_*` variables of every command's flags (clap's `env`).
fn variables(command: &clap::Command, into: &mut std::collections::BTreeSet<String>) {
    for arg in command.get_arguments() {
        if let Some(name) = arg.get_env() {
            into.insert(name.to_string_lossy().into_owned());
        }
    }
    for sub in command.get_subcommands() {
        variables(sub, into);
    }
}

#[test]
fn every_trine_variable_is_documented() {
    let docs = documentation();
    let mut names = std::collections::BTreeSet::new();
    variables(&trine::Cli::command(), &mut names);
    assert!(names.len() > 10, "too few variables found: {names:?}");
    let missing: Vec<&String> = names
        .iter()
        .filter(|name| !docs.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "variables the commands read that docs/configuration.md does not name: {missing:?}"
    );
}

/// The page's example file is a file trine takes.
#[test]
fn the_example_file_loads() {
    let docs = documentation();
    let start = docs.find("A TOML file uses the same names:").unwrap();
    let example: String = docs[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.is_empty() || line.starts_with("    "))
        .map(|line| format!("{}\n", line.strip_prefix("    ").unwrap_or(line)))
        .collect();
    assert!(example.contains("[fusion]"), "{example}");
    let config = trine::Config::from_toml(&example)
        .unwrap_or_else(|e| panic!("docs/configuration.md's example: {e}\n{example}"));
    assert_eq!(config.collection, "memories");
}
