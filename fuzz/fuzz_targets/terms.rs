//! wiring/trine-fuzz's `terms` target, its choices read from libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(why) = trine_fuzz::Target::Terms.bytes(data) {
        panic!("terms: {why}");
    }
});
