//! wiring/trine-fuzz's `wire` target, its choices read from libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(why) = trine_fuzz::Target::Wire.bytes(data) {
        panic!("wire: {why}");
    }
});
