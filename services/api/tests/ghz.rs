#![allow(clippy::unwrap_used)] // test helpers fail loudly
//! The ghz configs of deploy/ghz agree with the protos ghz will find by
//! reflection: the call names a method of the served descriptor set, every
//! data item is a request of that method's input type (field names, enum
//! values), and the load settings are the ones ghz reads.

use std::path::PathBuf;

use prost::Message;
use prost_types::{DescriptorProto, FileDescriptorSet};
use serde_json::Value;

fn ghz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/ghz")
}

fn read(name: &str) -> Value {
    let path = ghz_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn descriptors() -> FileDescriptorSet {
    FileDescriptorSet::decode(trine_api::FILE_DESCRIPTOR_SET).unwrap()
}

/// The message type `.trine.v1.Name`.
fn message<'a>(set: &'a FileDescriptorSet, full: &str) -> &'a DescriptorProto {
    let name = full.trim_start_matches(".trine.v1.");
    set.file
        .iter()
        .filter(|f| f.package() == "trine.v1")
        .flat_map(|f| &f.message_type)
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no message {full}"))
}

fn enum_values(set: &FileDescriptorSet, full: &str) -> Vec<String> {
    let name = full.trim_start_matches(".trine.v1.");
    set.file
        .iter()
        .flat_map(|f| &f.enum_type)
        .find(|e| e.name() == name)
        .unwrap_or_else(|| panic!("no enum {full}"))
        .value
        .iter()
        .map(|v| v.name().to_string())
        .collect()
}

/// Checks a JSON object against a message type, recursively.
fn check(set: &FileDescriptorSet, message_name: &str, value: &Value, at: &str) {
    let msg = message(set, message_name);
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("{at}: not an object"));
    for (key, v) in object {
        let field = msg
            .field
            .iter()
            .find(|f| f.name() == key || f.json_name() == key)
            .unwrap_or_else(|| panic!("{at}: {message_name} has no field {key:?}"));
        let at = format!("{at}.{key}");
        match field.r#type() {
            prost_types::field_descriptor_proto::Type::Message => {
                check(set, field.type_name(), v, &at);
            }
            prost_types::field_descriptor_proto::Type::Enum => {
                let name = v.as_str().unwrap_or_else(|| panic!("{at}: not a name"));
                let values = enum_values(set, field.type_name());
                assert!(
                    values.iter().any(|n| n == name),
                    "{at}: {name} not in {values:?}"
                );
            }
            prost_types::field_descriptor_proto::Type::String => {
                assert!(v.is_string(), "{at}: not a string");
            }
            _ => assert!(v.is_number() || v.is_boolean(), "{at}: {v}"),
        }
    }
}

#[test]
fn ghz_configs_match_the_served_protos() {
    let set = descriptors();
    for config in ["search-steady.json", "search-step.json"] {
        let c = read(config);
        let call = c["call"].as_str().unwrap();
        let (service, method) = call.rsplit_once('.').unwrap();
        let (package, service) = service.rsplit_once('.').unwrap();
        let input = set
            .file
            .iter()
            .filter(|f| f.package() == package)
            .flat_map(|f| &f.service)
            .find(|s| s.name() == service)
            .and_then(|s| s.method.iter().find(|m| m.name() == method))
            .unwrap_or_else(|| panic!("{config}: no method {call}"))
            .input_type()
            .to_string();
        assert!(c["insecure"].as_bool().unwrap(), "{config}: plaintext gRPC");
        assert!(
            c["host"].as_str().unwrap().contains(':'),
            "{config}: host:port"
        );
        let data_file = c["data-file"].as_str().unwrap();
        let data_name = data_file.rsplit('/').next().unwrap();
        let data = read(data_name);
        let items = data.as_array().unwrap();
        assert!(!items.is_empty(), "{data_file}: no request");
        for (i, item) in items.iter().enumerate() {
            check(&set, &input, item, &format!("{data_name}[{i}]"));
            assert!(
                item["filters"]["tenant"].is_string(),
                "{data_name}[{i}]: a tenant"
            );
        }
        let bounded = c.get("duration").is_some() || c.get("load-max-duration").is_some();
        assert!(bounded, "{config}: a bounded run");
    }
    let step = read("search-step.json");
    assert_eq!(step["load-schedule"], "step");
    for key in ["load-start", "load-step", "load-end"] {
        assert!(step[key].as_u64().unwrap() > 0, "{key}");
    }
}
