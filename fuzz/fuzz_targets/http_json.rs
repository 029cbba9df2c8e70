//! wiring/trine-fuzz's `http_json` target, its choices read from libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(why) = trine_fuzz::Target::HttpJson.bytes(data) {
        panic!("http_json: {why}");
    }
});
