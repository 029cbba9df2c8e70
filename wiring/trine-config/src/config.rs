//! trine's configuration: one typed struct, layered as defaults < TOML file
//! (`--config`) < `TRINE_*` environment < command-line flags, validated once.

use std::path::{Path, PathBuf};
use trine_core::Named;

mod layers;
mod sections;

pub use sections::{AuthMode, QuotasSection, ServeSection, ServerSection, TenantQuota, TlsSection};

use serde::{Deserialize, Deserializer};
use trine_core::parsed::parsed;
use trine_embed::EmbedderKind;
use trine_store::ReadConsistency;

fn embedder<'de, D: Deserializer<'de>>(d: D) -> Result<EmbedderKind, D::Error> {
    parsed(d, "embedder", |raw| {
        EmbedderKind::parse(raw).map_err(|e| e.to_string())
    })
}

fn read_consistency<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ReadConsistency>, D::Error> {
    parsed(d, "read_consistency", ReadConsistency::parse).map(Some)
}

/// Where memories live and how they are embedded.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The embedded store's data directory (used when `qdrant` is unset).
    pub data: PathBuf,
    /// A Qdrant server's gRPC URL; unset means the embedded store.
    pub qdrant: Option<String>,
    /// The Qdrant server's API key, if it asks for one.
    pub qdrant_api_key: Option<String>,
    /// The API keys file a gateway checks calls against (`trine keys`
    /// writes it); unset: `keys.json` in the data directory.
    pub keys_file: Option<PathBuf>,
    /// The key a client (`search`, `bench` with `--endpoint`) sends; never
    /// read from the config file.
    #[serde(skip)]
    pub api_key: Option<String>,
    /// The collection's name.
    pub collection: String,
    /// `minilm` (default), `static` or `hash`.
    #[serde(deserialize_with = "embedder")]
    pub embedder: EmbedderKind,
    /// Where model files live (`scripts/fetch-model.sh` fills it).
    pub models: PathBuf,
    /// The tracing filter (`RUST_LOG` overrides it).
    pub log: String,
    /// An OTLP/gRPC collector for spans (`http://localhost:4317`); unset
    /// means `OTEL_EXPORTER_OTLP_ENDPOINT`, and neither means no export.
    pub otlp_endpoint: Option<String>,
    /// Addresses of the internal services, for `serve --role gateway`.
    pub peers: PeersConfig,
    /// The lexical channel.
    pub lexical: LexicalSection,
    /// The messages around a hit, in each channel.
    pub context: ContextSection,
    /// How the lists are fused.
    pub fusion: FusionSection,
    /// Where each field of a memory lives in the payload, and how times are
    /// written: a collection another tool wrote is searched as it is.
    pub payload: trine_store::PayloadSchema,
    /// Shards of a collection trine creates on a Qdrant server (a cluster).
    pub shards: Option<u32>,
    /// Copies of each shard across the cluster's nodes.
    pub replication_factor: Option<u32>,
    /// Replicas that acknowledge a write before it is answered (Qdrant's
    /// default 1: a node down leaves writes working).
    pub write_consistency_factor: Option<u32>,
    /// Replicas each read asks: majority, quorum, all or a number (Qdrant's
    /// default: one).
    #[serde(deserialize_with = "read_consistency")]
    pub read_consistency: Option<ReadConsistency>,
    /// The lexical reads a search makes at once go to the server as one
    /// batch query: fewer calls and less CPU a search, but Qdrant 1.19 runs
    /// them one after another, so their times add up. Off: side by side.
    pub batch_reads: bool,
    /// What each server takes on at once.
    pub server: ServerSection,
    /// Where `trine serve` listens, its keys and backups.
    pub serve: ServeSection,
    /// TLS of this process's server and of its calls to peers.
    pub tls: TlsSection,
    /// Each tenant's request rate and memories held.
    pub quotas: QuotasSection,
}

/// `[lexical]`, the lexical service's own settings.
pub type LexicalSection = trine_lexical::Settings;

/// `[context]`, trine-core's own settings of the messages around a hit.
pub type ContextSection = trine_core::context::Settings;

/// `[fusion]`, trine-core's own partial fusion settings over the
/// embedder's default.
pub type FusionSection = trine_core::fusion::Partial;

/// `[peers]`, the mesh's own settings of where a gateway finds its peers.
pub type PeersConfig = trine_mesh::PeerSettings;

impl Default for Config {
    fn default() -> Self {
        Self {
            data: PathBuf::from("trine-data"),
            qdrant: None,
            qdrant_api_key: None,
            keys_file: None,
            api_key: None,
            collection: "memories".to_string(),
            embedder: EmbedderKind::MiniLm,
            models: PathBuf::from("models"),
            log: "warn".to_string(),
            otlp_endpoint: None,
            peers: PeersConfig::default(),
            lexical: LexicalSection::default(),
            context: ContextSection::default(),
            fusion: FusionSection::default(),
            payload: trine_store::PayloadSchema::default(),
            shards: None,
            replication_factor: None,
            write_consistency_factor: None,
            read_consistency: None,
            batch_reads: false,
            server: ServerSection::default(),
            serve: ServeSection::default(),
            tls: TlsSection::default(),
            quotas: QuotasSection::default(),
        }
    }
}

/// Values given as flags or `TRINE_*` variables (clap resolves flag over
/// environment); each overrides the file.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Overrides {
    /// TOML configuration file
    #[arg(long, global = true, env = "TRINE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Data directory of the embedded store [default: ./trine-data]
    #[arg(long, global = true, env = "TRINE_DATA", value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Qdrant server gRPC URL (e.g. http://localhost:6334); unset: embedded
    #[arg(long, global = true, env = "TRINE_QDRANT_URL", value_name = "URL")]
    pub qdrant: Option<String>,
    /// The Qdrant server's API key
    #[arg(
        long,
        global = true,
        env = "TRINE_QDRANT_API_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    pub qdrant_api_key: Option<String>,
    /// API keys file of `serve` and `trine keys` [default: DATA/keys.json]
    #[arg(long, global = true, env = "TRINE_KEYS_FILE", value_name = "FILE")]
    pub keys_file: Option<PathBuf>,
    /// API key sent to a gateway (`--endpoint`)
    #[arg(
        long,
        global = true,
        env = "TRINE_API_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    pub api_key: Option<String>,
    /// Collection name [default: memories]
    #[arg(long, global = true, env = "TRINE_COLLECTION")]
    pub collection: Option<String>,
    /// Embedder: minilm, static or hash [default: minilm]
    #[arg(long, global = true, env = "TRINE_EMBEDDER")]
    pub embedder: Option<String>,
    /// Model files directory [default: ./models]
    #[arg(long, global = true, env = "TRINE_MODELS", value_name = "DIR")]
    pub models: Option<PathBuf>,
    /// Log filter, e.g. info or trine=debug [default: warn]
    #[arg(long, global = true, env = "TRINE_LOG")]
    pub log: Option<String>,
    /// Log lines: plain (a warning as one sentence; the commands' default),
    /// text, json, or auto (json unless standard error is a terminal;
    /// `serve`'s default)
    #[arg(long, global = true, env = "TRINE_LOG_FORMAT", value_name = "FORMAT",
          value_parser = trine_telemetry::LogFormat::parse)]
    pub log_format: Option<trine_telemetry::LogFormat>,
    /// OTLP/gRPC collector for spans [default: $OTEL_EXPORTER_OTLP_ENDPOINT]
    #[arg(long, global = true, env = "TRINE_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// lexical-svc address, for `serve --role gateway`
    #[arg(long, global = true, env = "TRINE_LEXICAL_ADDR", value_name = "ADDR")]
    pub lexical_addr: Option<String>,
    /// semantic-svc address, for `serve --role gateway`
    #[arg(long, global = true, env = "TRINE_SEMANTIC_ADDR", value_name = "ADDR")]
    pub semantic_addr: Option<String>,
    /// fusion-svc address, for `serve --role gateway`
    #[arg(long, global = true, env = "TRINE_FUSION_ADDR", value_name = "ADDR")]
    pub fusion_addr: Option<String>,
    /// Lexical strategy of searches that name none: candidates, bm25, sparse,
    /// gate, off, auto [default: candidates]
    #[arg(
        long,
        global = true,
        env = "TRINE_LEXICAL_STRATEGY",
        value_name = "STRATEGY"
    )]
    pub lexical_strategy: Option<String>,
    /// Calls each server runs at once; beyond them it sheds with
    /// RESOURCE_EXHAUSTED [default: 256]
    #[arg(long, global = true, env = "TRINE_MAX_IN_FLIGHT", value_name = "N")]
    pub max_in_flight: Option<usize>,
    /// TLS from a directory laid out as a Kubernetes TLS Secret: tls.crt and
    /// tls.key this process's certificate; ca.crt, when there, the CA trusted
    /// for peers and required of clients (mutual TLS). Replaces [tls]
    #[arg(long, global = true, env = "TRINE_TLS_DIR", value_name = "DIR")]
    pub tls_dir: Option<PathBuf>,
}

/// A configuration that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

impl Config {
    /// Defaults, then the file, then the `TRINE_SECTION__KEY` variables,
    /// then the flags (and the variables clap reads for them); validated
    /// (`layers.rs`, the one layering).
    pub fn load(overrides: &Overrides) -> Result<Self, ConfigError> {
        layers::load(overrides, std::env::vars())
    }

    /// A config file's text, before the flags and the checks.
    fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.message().to_string())
    }

    /// A config file's text, parsed and checked as `load` checks a file given
    /// without flags (the config fuzz target's entry, fuzz/).
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let config = Self::parse(text).map_err(ConfigError::Invalid)?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let name_ok = !self.collection.is_empty()
            && self
                .collection
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return Err(ConfigError::Invalid(format!(
                "collection name {:?} must be letters, digits, - or _",
                self.collection
            )));
        }
        self.payload
            .validate()
            .map_err(|e| ConfigError::Invalid(format!("[payload]: {e}")))?;
        if self.write_consistency_factor == Some(0) {
            return Err(ConfigError::Invalid(
                "write_consistency_factor must be at least 1 (or left out)".to_string(),
            ));
        }
        if self.shards == Some(0) || self.replication_factor == Some(0) {
            return Err(ConfigError::Invalid(
                "shards and replication_factor must be at least 1 (or left out)".to_string(),
            ));
        }
        if self.lexical.cap == 0 {
            return Err(ConfigError::Invalid(
                "lexical.cap must be at least 1".to_string(),
            ));
        }
        let (lexical, semantic) = self.context.channels();
        for context in [lexical, semantic] {
            context
                .check()
                .map_err(|e| ConfigError::Invalid(format!("[context] {e}")))?;
        }
        self.fusion
            .over(self.embedder.fusion())
            .map_err(ConfigError::Invalid)?;
        self.quotas.check().map_err(ConfigError::Invalid)?;
        if self.server.max_in_flight == 0 || self.server.max_message_bytes < 1 << 16 {
            return Err(ConfigError::Invalid(
                "server.max_in_flight must be at least 1 and server.max_message_bytes at least 65536"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// The language whose common words late interaction's tokens leave out,
    /// a query's (semantic-svc) and a memory's (the writer) alike: those its
    /// lexical channel leaves out.
    pub fn token_language(&self) -> Option<trine_core::Language> {
        self.lexical
            .common_words
            .language(trine_core::Fold::default().with_stemmer(self.lexical.stemmer))
    }

    /// The services' settings from this configuration.
    pub fn mesh(&self) -> trine_mesh::MeshConfig {
        let mut mesh = trine_mesh::MeshConfig::default();
        self.lexical.apply(&mut mesh.lexical);
        mesh.stemmer = self.lexical.stemmer;
        (mesh.lexical.context, mesh.semantic.context) = self.context.channels();
        mesh.semantic.language = self.token_language();
        // Checked at load ([`Config::validate`]); the embedder's default else.
        mesh.search.fusion = self
            .fusion
            .over(self.embedder.fusion())
            .unwrap_or_else(|_| self.embedder.fusion());
        mesh.serving = trine_api::server::Serving {
            max_in_flight: self.server.max_in_flight,
            max_message_bytes: self.server.max_message_bytes,
            tls: None, // read from its files by `TlsSection::server`
        };
        mesh.quotas = self.quotas.quotas().map(std::sync::Arc::new);
        mesh
    }

    /// The API keys file: `keys_file`, or `keys.json` in the data directory.
    pub fn keys_path(&self) -> PathBuf {
        self.keys_file
            .clone()
            .unwrap_or_else(|| self.data.join("keys.json"))
    }

    /// A configuration for tests: the hash embedder on a data directory.
    pub fn for_test(data: &Path) -> Self {
        Self {
            data: data.to_path_buf(),
            embedder: EmbedderKind::Hash,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trine_core::Strategy;

    fn overrides_with_file(toml: &str) -> (tempfile::TempDir, Overrides) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trine.toml");
        std::fs::write(&path, toml).unwrap();
        let o = Overrides {
            config: Some(path),
            ..Overrides::default()
        };
        (dir, o)
    }

    #[test]
    fn layers_apply_in_order() {
        assert_eq!(
            Config::load(&Overrides::default()).unwrap(),
            Config::default()
        );

        let (_dir, mut o) = overrides_with_file("collection = \"notes\"\nembedder = \"hash\"\n");
        let from_file = Config::load(&o).unwrap();
        assert_eq!(from_file.collection, "notes");
        assert_eq!(from_file.embedder.name(), "hash");

        o.collection = Some("flagged".into());
        let flagged = Config::load(&o).unwrap();
        assert_eq!(flagged.collection, "flagged");
        assert_eq!(flagged.embedder.name(), "hash");
    }

    #[test]
    fn the_fusion_comes_from_the_fusion_section() {
        let default = Config::default().mesh();
        assert_eq!(default.search.fusion, trine_fusion::Settings::default());
        let (_dir, o) = overrides_with_file(
            "[fusion]\nmethod = \"rrf\"\nrrf_k = 5\ntier = false\nverbatim_weight = 2\n",
        );
        let fusion = Config::load(&o).unwrap().mesh().search.fusion;
        assert_eq!(fusion.method, trine_core::fusion::Method::Rrf);
        assert_eq!(fusion.rrf_k, 5.0);
        assert!(!fusion.tier);
        assert_eq!(fusion.weights.verbatim, 2.0);
        assert_eq!(
            fusion.weights.semantic,
            trine_fusion::Settings::default().weights.semantic,
            "what the section leaves out is the default"
        );
    }

    #[test]
    fn the_fusion_default_is_the_embedders() {
        let (_dir, o) = overrides_with_file("embedder = \"static\"\n");
        let fusion = Config::load(&o).unwrap().mesh().search.fusion;
        assert_eq!(fusion, EmbedderKind::Static.fusion());
        assert_ne!(fusion, trine_fusion::Settings::default());
        let (_dir, o) = overrides_with_file("embedder = \"static\"\n[fusion]\nadaptive = 0\n");
        let fusion = Config::load(&o).unwrap().mesh().search.fusion;
        assert_eq!(fusion.adaptive, 0.0, "the section overrides");
        assert_eq!(fusion.lexical_power, 1.0, "the static embedder's is linear");
        let (_dir, o) = overrides_with_file("[fusion]\nlexical_power = 3\n");
        assert_eq!(
            Config::load(&o).unwrap().mesh().search.fusion.lexical_power,
            3.0
        );
        let (_dir, o) = overrides_with_file("[fusion]\nlexical_power = 0\n");
        let err = Config::load(&o).unwrap_err().to_string();
        assert!(err.contains("lexical_power"), "{err}");
        assert_eq!(
            fusion.normalization,
            trine_core::fusion::Normalization::ZScore,
            "the rest is the embedder's default"
        );
    }

    #[test]
    fn the_count_cache_comes_from_the_lexical_section() {
        let default = Config::load(&Overrides::default()).unwrap().mesh();
        assert_eq!(
            default.lexical.count_cache,
            trine_lexical::CountCacheConfig::default()
        );
        assert!(default.lexical.count_statistics);
        let (_dir, o) = overrides_with_file(
            "[lexical]\ncount_cache_secs = 0\ncount_cache_min = 5\ncount_statistics = false\n",
        );
        let mesh = Config::load(&o).unwrap().mesh();
        assert!(mesh.lexical.count_cache.ttl.is_zero());
        assert_eq!(mesh.lexical.count_cache.min_count, 5);
        assert!(!mesh.lexical.count_statistics);
    }

    #[test]
    fn questions_take_the_sparse_list_unless_told_otherwise() {
        let default = Config::load(&Overrides::default()).unwrap().mesh();
        assert_eq!(default.lexical.question_strategy, Some(Strategy::Sparse));
        for (file, want) in [
            ("[lexical]\nquestion_strategy = \"none\"\n", None),
            (
                "[lexical]\nquestion_strategy = \"bm25\"\n",
                Some(Strategy::Bm25),
            ),
        ] {
            let (_dir, o) = overrides_with_file(file);
            assert_eq!(
                Config::load(&o).unwrap().mesh().lexical.question_strategy,
                want,
                "{file}"
            );
        }
    }

    #[test]
    fn the_stemmer_of_new_collections_is_a_known_language() {
        assert_eq!(
            Config::load(&Overrides::default()).unwrap().mesh().stemmer,
            None
        );
        let (_dir, o) = overrides_with_file("[lexical]\nstemmer = \"fr\"\n");
        let mesh = Config::load(&o).unwrap().mesh();
        assert_eq!(mesh.stemmer, Some(trine_core::Language::French));
        let (_dir, o) = overrides_with_file("[lexical]\nstemmer = \"none\"\n");
        assert_eq!(Config::load(&o).unwrap().mesh().stemmer, None);
        let (_dir, o) = overrides_with_file("[lexical]\nstemmer = \"klingon\"\n");
        let err = Config::load(&o).expect_err("unknown language").to_string();
        assert!(err.contains("unknown stemmer language `klingon`"), "{err}");
    }

    #[test]
    fn common_words_are_auto_none_or_a_language() {
        use trine_core::{CommonWords, Language};
        let default = Config::load(&Overrides::default()).unwrap().mesh();
        assert_eq!(default.lexical.common_words, CommonWords::Auto);
        let table = [
            ("none", CommonWords::None),
            ("fr", CommonWords::Of(Language::French)),
            ("auto", CommonWords::Auto),
        ];
        for (raw, want) in table {
            let (_dir, o) = overrides_with_file(&format!("[lexical]\ncommon_words = \"{raw}\"\n"));
            assert_eq!(
                Config::load(&o).unwrap().mesh().lexical.common_words,
                want,
                "{raw}"
            );
        }
        let (_dir, o) = overrides_with_file("[lexical]\ncommon_words = \"klingon\"\n");
        let err = Config::load(&o).expect_err("unknown language").to_string();
        assert!(err.contains("klingon") && err.contains("none"), "{err}");
    }

    #[test]
    fn the_context_section_reaches_both_channels_and_is_checked() {
        let default = Config::load(&Overrides::default()).unwrap().mesh();
        assert_eq!(
            default.lexical.context,
            trine_core::context::Context::default(),
            "the lexical window on by default"
        );
        assert!(default.semantic.context.is_off(), "off by default");
        let (_dir, o) = overrides_with_file(
            "[context]\nwindow = 2\ntop = 16\nlexical = 0.5\nsemantic = 0.25\n",
        );
        let mesh = Config::load(&o).unwrap().mesh();
        let want = |weight| trine_core::context::Context {
            window: 2,
            weight,
            top: 16,
        };
        assert_eq!(mesh.lexical.context, want(0.5));
        assert_eq!(mesh.semantic.context, want(0.25));
        for (bad, names) in [
            ("window = 9", "window 9"),
            ("top = 257", "top 257"),
            ("lexical = -1.0", "weight -1"),
        ] {
            let (_dir, o) = overrides_with_file(&format!("[context]\n{bad}\n"));
            let err = Config::load(&o).expect_err(bad).to_string();
            assert!(
                err.contains("[context]") && err.contains(names),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn the_payload_section_gives_the_stores_schema() {
        let (_dir, o) = overrides_with_file(
            "[payload]\ntext = \"content\"\ncreated_at = \"ts\"\ntime_format = \"unix_seconds\"\n",
        );
        let schema = Config::load(&o).unwrap().payload;
        assert_eq!(schema.text, "content");
        assert_eq!(schema.created_at, "ts");
        assert_eq!(schema.tenant, "tenant");
        assert_eq!(schema.time_format, trine_store::TimeFormat::UnixSeconds);
        let trine = Config::load(&Overrides::default()).unwrap().payload;
        assert_eq!(trine, trine_store::PayloadSchema::default());
    }

    #[test]
    fn keys_and_limits_come_from_file_then_flags() {
        let (_dir, mut o) = overrides_with_file(
            "qdrant_api_key = \"from-file\"\nkeys_file = \"/etc/trine-keys/keys.json\"\n[server]\nmax_in_flight = 8\n",
        );
        let config = Config::load(&o).unwrap();
        assert_eq!(config.qdrant_api_key.as_deref(), Some("from-file"));
        assert_eq!(
            config.keys_path(),
            PathBuf::from("/etc/trine-keys/keys.json")
        );
        assert_eq!(config.mesh().serving.max_in_flight, 8);
        assert_eq!(config.api_key, None);
        o.qdrant_api_key = Some("from-flag".into());
        o.api_key = Some("trine_k".into());
        o.max_in_flight = Some(3);
        let config = Config::load(&o).unwrap();
        assert_eq!(config.qdrant_api_key.as_deref(), Some("from-flag"));
        assert_eq!(config.api_key.as_deref(), Some("trine_k"));
        assert_eq!(config.mesh().serving.max_in_flight, 3);
        assert_eq!(
            Config::default().keys_path(),
            PathBuf::from("trine-data/keys.json")
        );
        let (_dir, o) = overrides_with_file("api_key = \"nope\"\n");
        assert!(
            Config::load(&o).is_err(),
            "a client key is never read from the file"
        );
        let (_dir, o) = overrides_with_file("[server]\nmax_in_flight = 0\n");
        assert!(Config::load(&o).is_err());
        let (_dir, o) = overrides_with_file(
            "write_consistency_factor = 2\nread_consistency = \"majority\"\nbatch_reads = true\n",
        );
        let config = Config::load(&o).unwrap();
        assert_eq!(config.write_consistency_factor, Some(2));
        assert_eq!(config.read_consistency, Some(ReadConsistency::Majority));
        assert!(config.batch_reads);
        assert!(
            !Config::default().batch_reads,
            "reads side by side unless asked"
        );
        for bad in [
            "read_consistency = \"most\"\n",
            "write_consistency_factor = 0\n",
        ] {
            let (_dir, o) = overrides_with_file(bad);
            assert!(Config::load(&o).is_err(), "{bad}");
        }
    }

    #[test]
    fn quotas_have_defaults_and_tenants() {
        assert!(Config::default().mesh().quotas.is_none());
        let (_dir, o) = overrides_with_file(
            "[quotas]\nrate = 50\npoints = 1000\n[quotas.tenant.acme]\nrate = 500\n",
        );
        let quotas = Config::load(&o).unwrap().mesh().quotas.unwrap();
        assert_eq!(quotas.points("acme"), Some(1000));
        let now = std::time::Instant::now();
        assert!((0..500).all(|_| quotas.admit("acme", now).is_ok()));
        assert!(quotas.admit("acme", now).is_err());
        assert!((0..50).all(|_| quotas.admit("globex", now).is_ok()));
        assert!(quotas.admit("globex", now).is_err());
        for bad in [
            "[quotas]\nrate = -1\n",
            "[quotas.tenant.acme]\nburst = 0.5\n",
        ] {
            let (_dir, o) = overrides_with_file(bad);
            assert!(Config::load(&o).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_configs_say_what_is_wrong() {
        let table = [
            ("colour = \"red\"\n", "unknown field"),
            ("embedder = \"bert\"\n", "bert"),
            ("collection = \"a b\"\n", "must be letters"),
            (
                "[lexical]\nstrategy = \"magic\"\n",
                "unknown lexical strategy",
            ),
            ("[lexical]\ncap = 0\n", "lexical.cap"),
            (
                "[lexical]\nquestion_strategy = \"auto\"\n",
                "picks no list of its own",
            ),
            (
                "[lexical]\nquestion_strategy = \"magic\"\n",
                "lexical.question_strategy",
            ),
            ("[fusion]\nmethod = \"borda\"\n", "unknown fusion method"),
            ("[fusion]\nrrf_k = 0\n", "rrf_k"),
            ("[fusion]\nquestion_confidence = 2\n", "question_confidence"),
            (
                "[fusion]\nnormalization = \"l2\"\n",
                "unknown normalization",
            ),
            ("[fusion]\nsemantic_weight = -1\n", "semantic_weight"),
            ("shards = 0\n", "at least 1"),
            ("[payload]\ntime_format = \"epoch\"\n", "unix_seconds"),
            ("[payload]\ntext = \"tenant\"\n", "given to two fields"),
            ("[payload]\ncolour = \"x\"\n", "unknown field"),
            ("[serve]\nauth = \"maybe\"\n", "unknown variant"),
            ("[serve]\nport = 1\n", "unknown field"),
            ("replication_factor = 0\n", "at least 1"),
        ];
        for (toml, want) in table {
            let (_dir, o) = overrides_with_file(toml);
            let err = Config::load(&o).unwrap_err().to_string();
            assert!(err.contains(want), "{toml}: {err}");
        }
    }
}
