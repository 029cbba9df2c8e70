//! wiring/trine-fuzz's `keys` target, its choices read from libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(why) = trine_fuzz::Target::Keys.bytes(data) {
        panic!("keys: {why}");
    }
});
