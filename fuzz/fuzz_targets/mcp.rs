//! wiring/trine-fuzz's `mcp` target, its choices read from libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(why) = trine_fuzz::Target::Mcp.bytes(data) {
        panic!("mcp: {why}");
    }
});
