//! The one layering of the configuration: defaults < the TOML file <
//! `TRINE_SECTION__KEY` variables < flags (and the variables clap reads for
//! them). Every layer is written into one TOML table at its key, and the
//! table is read into [`Config`] once; a value that does not fit names the
//! key and the layer it came from.

use std::path::{Path, PathBuf};

use super::{Config, ConfigError, Overrides, TlsSection};

/// Where a value over the file came from, as an error names it (the
/// file's own are named by [`ConfigError::Parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Variable(String),
    Flag(&'static str),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Variable(name) => write!(f, "the variable {name}"),
            Self::Flag(flag) => write!(f, "{flag}"),
        }
    }
}

/// A key of the file a `TRINE_*` variable sets: `TRINE_LEXICAL__CAP` is
/// `lexical.cap`, `TRINE_QUOTAS__TENANT__ACME__RATE` `quotas.tenant.acme.rate`
/// (lower-cased); variables without `__` are flags' (clap reads them).
fn variable_key(name: &str) -> Option<Vec<String>> {
    let rest = name.strip_prefix("TRINE_")?;
    if !rest.contains("__") {
        return None;
    }
    let path: Vec<String> = rest.split("__").map(str::to_lowercase).collect();
    path.iter().all(|part| !part.is_empty()).then_some(path)
}

/// A variable's value as TOML reads it (a number, a boolean, a quoted
/// string, an array), else its text as a string.
fn variable_value(raw: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()))
}

/// Sets `path` in `table`, making the tables on the way.
fn set(table: &mut toml::Table, path: &[String], value: toml::Value) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Err("an empty key".to_string());
    };
    let mut at = table;
    for (depth, part) in parents.iter().enumerate() {
        let next = at
            .entry(part.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        at = next
            .as_table_mut()
            .ok_or_else(|| format!("{} is not a table", path[..=depth].join(".")))?;
    }
    at.insert(last.clone(), value);
    Ok(())
}

/// The table read as the configuration, or why not.
fn read(table: &toml::Table) -> Result<Config, String> {
    toml::Value::Table(table.clone())
        .try_into::<Config>()
        .map_err(|e| e.message().trim().to_string())
}

/// The layers as they are added, and what they make.
struct Layering {
    table: toml::Table,
    /// Each key set by a variable or a flag, and where from (last wins).
    origins: Vec<(String, Source)>,
}

impl Layering {
    /// Adds `value` at `path` from `source`; refused, naming both, when the
    /// table no longer reads as a configuration.
    fn add(
        &mut self,
        path: &[String],
        value: toml::Value,
        source: Source,
    ) -> Result<(), ConfigError> {
        let key = path.join(".");
        let shown = value.to_string();
        set(&mut self.table, path, value)
            .and_then(|()| read(&self.table).map(drop))
            .map_err(|why| ConfigError::Invalid(format!("{source} sets {key} = {shown}: {why}")))?;
        self.origins.push((key, source));
        Ok(())
    }

    /// Where the key a message names (`lexical.cap`, or `[fusion] rrf_k`)
    /// was set last, if a variable or a flag set it.
    fn origin_of(&self, message: &str) -> Option<&Source> {
        let names = |key: &str| {
            message.contains(key)
                || key
                    .rsplit_once('.')
                    .is_some_and(|(table, last)| message.contains(&format!("[{table}] {last}")))
        };
        self.origins
            .iter()
            .rev()
            .find(|(key, _)| names(key))
            .map(|(_, source)| source)
    }
}

/// The flags (and the variables clap reads for them), each at its key.
fn flags(o: &Overrides) -> Vec<(&'static str, &'static str, Option<toml::Value>)> {
    let text = |v: &Option<String>| v.clone().map(toml::Value::String);
    let path = |v: &Option<PathBuf>| {
        v.as_ref()
            .map(|p| toml::Value::String(p.display().to_string()))
    };
    vec![
        ("data", "--data / TRINE_DATA", path(&o.data)),
        ("qdrant", "--qdrant / TRINE_QDRANT_URL", text(&o.qdrant)),
        (
            "qdrant_api_key",
            "--qdrant-api-key / TRINE_QDRANT_API_KEY",
            text(&o.qdrant_api_key),
        ),
        (
            "keys_file",
            "--keys-file / TRINE_KEYS_FILE",
            path(&o.keys_file),
        ),
        (
            "collection",
            "--collection / TRINE_COLLECTION",
            text(&o.collection),
        ),
        ("embedder", "--embedder / TRINE_EMBEDDER", text(&o.embedder)),
        ("models", "--models / TRINE_MODELS", path(&o.models)),
        ("log", "--log / TRINE_LOG", text(&o.log)),
        (
            "otlp_endpoint",
            "--otlp-endpoint / TRINE_OTLP_ENDPOINT",
            text(&o.otlp_endpoint),
        ),
        (
            "peers.lexical",
            "--lexical-addr / TRINE_LEXICAL_ADDR",
            text(&o.lexical_addr),
        ),
        (
            "peers.semantic",
            "--semantic-addr / TRINE_SEMANTIC_ADDR",
            text(&o.semantic_addr),
        ),
        (
            "peers.fusion",
            "--fusion-addr / TRINE_FUSION_ADDR",
            text(&o.fusion_addr),
        ),
        (
            "lexical.strategy",
            "--lexical-strategy / TRINE_LEXICAL_STRATEGY",
            text(&o.lexical_strategy),
        ),
        (
            "server.max_in_flight",
            "--max-in-flight / TRINE_MAX_IN_FLIGHT",
            o.max_in_flight
                .map(|n| toml::Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))),
        ),
    ]
}

/// Reads the file, as the first layer over the defaults.
fn file(path: &Path) -> Result<toml::Table, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let parse = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let table: toml::Table = toml::from_str(&text).map_err(|e| parse(e.message().to_string()))?;
    read(&table).map_err(parse)?;
    Ok(table)
}

/// Defaults, the file, the `TRINE_SECTION__KEY` variables of `variables`,
/// then the flags; validated.
pub(super) fn load(
    overrides: &Overrides,
    variables: impl IntoIterator<Item = (String, String)>,
) -> Result<Config, ConfigError> {
    let mut layers = Layering {
        table: match &overrides.config {
            Some(path) => file(path)?,
            None => toml::Table::new(),
        },
        origins: Vec::new(),
    };
    let mut variables: Vec<(String, String)> = variables.into_iter().collect();
    variables.sort();
    for (name, raw) in variables {
        if let Some(path) = variable_key(&name) {
            layers.add(&path, variable_value(&raw), Source::Variable(name))?;
        }
    }
    for (key, flag, value) in flags(overrides) {
        if let Some(value) = value {
            let path: Vec<String> = key.split('.').map(String::from).collect();
            layers.add(&path, value, Source::Flag(flag))?;
        }
    }
    let mut config = read(&layers.table).map_err(ConfigError::Invalid)?;
    // An empty address or key is none.
    config.qdrant = config.qdrant.filter(|url| !url.is_empty());
    config.qdrant_api_key = config.qdrant_api_key.filter(|k| !k.trim().is_empty());
    config.otlp_endpoint = config.otlp_endpoint.filter(|url| !url.is_empty());
    config.api_key = overrides.api_key.clone().filter(|k| !k.trim().is_empty());
    if let Some(dir) = &overrides.tls_dir {
        config.tls = TlsSection::from_secret(dir);
    }
    config.validate().map_err(|e| match e {
        ConfigError::Invalid(message) => match layers.origin_of(&message) {
            Some(source) => ConfigError::Invalid(format!("{message} (set by {source})")),
            None => match &overrides.config {
                Some(path) => ConfigError::Invalid(format!("{message} (in {})", path.display())),
                None => ConfigError::Invalid(message),
            },
        },
        other => other,
    })?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_name_keys_of_the_file() {
        let table: &[(&str, Option<&[&str]>)] = &[
            ("TRINE_LEXICAL__CAP", Some(&["lexical", "cap"])),
            ("TRINE_SERVE__BACKUP_DIR", Some(&["serve", "backup_dir"])),
            (
                "TRINE_QUOTAS__TENANT__ACME__RATE",
                Some(&["quotas", "tenant", "acme", "rate"]),
            ),
            ("TRINE_COLLECTION", None),
            ("TRINE_LEXICAL__", None),
            ("TRINE___CAP", None),
            ("OTHER__CAP", None),
        ];
        for (name, want) in table {
            let want = want.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert_eq!(variable_key(name), want, "{name}");
        }
    }

    #[test]
    fn a_variable_reads_as_toml_or_as_text() {
        let table = [
            ("128", toml::Value::Integer(128)),
            ("0.5", toml::Value::Float(0.5)),
            ("true", toml::Value::Boolean(true)),
            ("\"quoted\"", toml::Value::String("quoted".into())),
            ("sparse", toml::Value::String("sparse".into())),
            ("0.0.0.0:50051", toml::Value::String("0.0.0.0:50051".into())),
            ("", toml::Value::String(String::new())),
        ];
        for (raw, want) in table {
            assert_eq!(variable_value(raw), want, "{raw:?}");
        }
    }

    fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn variables_sit_between_the_file_and_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trine.toml");
        std::fs::write(&path, "[lexical]\ncap = 64\nstrategy = \"bm25\"\n").unwrap();
        let mut o = Overrides {
            config: Some(path),
            ..Overrides::default()
        };
        let env = vars(&[
            ("TRINE_LEXICAL__CAP", "128"),
            ("TRINE_LEXICAL__STRATEGY", "sparse"),
            ("TRINE_SERVE__AUTH", "on"),
            ("TRINE_QUOTAS__TENANT__ACME__RATE", "5"),
            ("HOME", "/root"),
        ]);
        let config = load(&o, env.clone()).unwrap();
        assert_eq!(config.lexical.cap, 128);
        assert_eq!(config.lexical.strategy, trine_core::Strategy::Sparse);
        assert_eq!(config.serve.auth, super::super::AuthMode::On);
        assert_eq!(config.quotas.tenant["acme"].rate, Some(5.0));
        o.lexical_strategy = Some("gate".into());
        let flagged = load(&o, env).unwrap();
        assert_eq!(flagged.lexical.strategy, trine_core::Strategy::Gate);
        assert_eq!(flagged.lexical.cap, 128);
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn a_value_that_does_not_fit_names_its_key_and_its_layer() {
        let o = Overrides::default();
        let table: &[(&[(&str, &str)], Overrides, &[&str])] = &[
            (
                &[("TRINE_LEXICAL__CAP", "many")],
                Overrides::default(),
                &["TRINE_LEXICAL__CAP", "lexical.cap", "many"],
            ),
            (
                &[("TRINE_LEXICAL__COLOUR", "red")],
                Overrides::default(),
                &["TRINE_LEXICAL__COLOUR", "unknown field"],
            ),
            (
                &[("TRINE_LEXICAL__CAP", "0")],
                Overrides::default(),
                &["lexical.cap", "set by the variable TRINE_LEXICAL__CAP"],
            ),
            (
                &[("TRINE_FUSION__RRF_K", "-1")],
                Overrides::default(),
                &["rrf_k", "set by the variable TRINE_FUSION__RRF_K"],
            ),
            (
                &[],
                Overrides {
                    embedder: Some("bert".into()),
                    ..o.clone()
                },
                &["--embedder / TRINE_EMBEDDER", "bert"],
            ),
            (
                &[],
                Overrides {
                    lexical_strategy: Some("magic".into()),
                    ..o.clone()
                },
                &["--lexical-strategy / TRINE_LEXICAL_STRATEGY", "magic"],
            ),
        ];
        for (env, overrides, said) in table {
            let e = load(overrides, vars(env)).unwrap_err().to_string();
            for part in *said {
                assert!(e.contains(part), "{env:?}: {e:?} does not say {part:?}");
            }
        }
    }
}
