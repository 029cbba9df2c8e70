//! The config file (`trine.toml`): any text parsed and checked as `trine`
//! reads a file; what it accepts names a collection Qdrant takes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = trine::config::Config::from_toml(text) {
        let name = &config.collection;
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "config: collection {name:?} accepted from {text:?}"
        );
    }
});
