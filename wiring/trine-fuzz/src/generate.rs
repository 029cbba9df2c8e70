//! Inputs from a seed: the characters, sizes and shapes that break parsers.

/// Pieces text is made of: words, stop words, identifiers, dates and times,
/// punctuation and separators, case and folding traps (`ß`, `İ`, ligatures,
/// combining marks), zero-width and bidi characters, emoji sequences, CJK,
/// NUL and the byte-order mark.
const PIECES: &[&str] = &[
    "meeting",
    "Meeting",
    "the",
    "of",
    "a",
    "deploy",
    "943a48b",
    "libc6",
    "ipv6",
    "2026-11-11",
    "09:58",
    "12:00:00Z",
    "v1.2.3",
    "x86_64",
    "foo_bar",
    "foo-bar",
    "a/b/c.md",
    "user@host",
    "#42",
    "\"quoted\"",
    "'",
    "\"",
    "\\",
    "-",
    "_",
    ".",
    ":",
    "/",
    "@",
    "#",
    ",",
    ";",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "*",
    "?",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\u{a0}",
    "\u{2028}",
    "\u{3000}",
    "é",
    "É",
    "e\u{301}",
    "ß",
    "ẞ",
    "İ",
    "ı",
    "ﬁ",
    "Å",
    "Ω",
    "Σ",
    "ς",
    "Æ",
    "œ",
    "ð",
    "ø",
    "ł",
    "\u{200b}",
    "\u{200d}",
    "\u{202e}",
    "\u{fe0f}",
    "👩\u{200d}💻",
    "🇫🇷",
    "東京",
    "会議",
    "שלום",
    "مرحبا",
    "Привет",
    "\u{0}",
    "\u{feff}",
    "\u{fffd}",
    "\u{10ffff}",
    "0",
    "9",
    "00000000",
];

/// A seeded generator of fuzz inputs.
pub struct Gen {
    rng: fastrand::Rng,
}

impl Gen {
    pub fn new(seed: u64) -> Self {
        Self {
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.rng.usize(..n.max(1))
    }

    pub fn chance(&mut self, one_in: u32) -> bool {
        self.rng.u32(..one_in.max(1)) == 0
    }

    pub fn u32(&mut self) -> u32 {
        self.rng.u32(..)
    }

    /// Mostly small numbers and the edges, sometimes any.
    pub fn i64(&mut self) -> i64 {
        match self.below(6) {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => self.rng.i64(-1_000..1_000),
            3 => self.rng.i64(-62_135_596_800..253_402_300_799), // years 1..=9999
            _ => self.rng.i64(..),
        }
    }

    pub fn i32(&mut self) -> i32 {
        match self.below(5) {
            0 => i32::MIN,
            1 => i32::MAX,
            2 => 999_999_999 + self.rng.i32(-2..3),
            3 => self.rng.i32(0..1_000_000_000),
            _ => self.rng.i32(..),
        }
    }

    /// Finite and not: NaN, the infinities, zeros, subnormals, huge.
    pub fn f64(&mut self) -> f64 {
        match self.below(10) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            4 => f64::MIN_POSITIVE / 2.0,
            5 => f64::MAX,
            6 => f64::from_bits(self.rng.u64(..)),
            _ => self.rng.f64() * 2.0 - 0.5,
        }
    }

    /// A character: a piece's or any scalar value.
    pub fn char(&mut self) -> char {
        loop {
            if let Some(c) = char::from_u32(self.rng.u32(..0x11_0000)) {
                return c;
            }
        }
    }

    /// Text of pieces and random characters, up to about `max` bytes.
    pub fn text(&mut self, max: usize) -> String {
        let target = match self.below(8) {
            0 => 0,
            1 => max,
            _ => self.below(max.min(64) + 1),
        };
        let mut out = String::with_capacity(target + 8);
        while out.len() < target {
            if self.chance(4) {
                out.push(self.char());
            } else {
                out.push_str(PIECES[self.below(PIECES.len())]);
            }
        }
        out
    }

    /// A label: usually short, sometimes just over a limit.
    pub fn label(&mut self, limit: usize) -> String {
        match self.below(10) {
            0 => String::new(),
            1 => "x".repeat(limit),
            2 => "x".repeat(limit + 1),
            3 => "é".repeat(limit / 2 + 1),
            _ => self.text(24),
        }
    }

    /// Up to `max` of `item`, sometimes just over `limit`.
    pub fn many<T>(&mut self, limit: usize, mut item: impl FnMut(&mut Self) -> T) -> Vec<T> {
        let n = match self.below(10) {
            0 => limit,
            1 => limit + 1,
            _ => self.below(5),
        };
        (0..n).map(|_| item(self)).collect()
    }

    /// A UUID's text, or something close to one.
    pub fn id(&mut self) -> String {
        match self.below(6) {
            0 => String::new(),
            1 => self.text(40),
            2 => "00000000-0000-4000-8000-00000000000".to_string(),
            _ => format!(
                "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
                self.u32(),
                self.rng.u16(..),
                self.rng.u16(..0x1000),
                self.rng.u16(..0x1000),
                self.rng.u64(..1 << 48)
            ),
        }
    }

    /// Random bytes.
    pub fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.rng.u8(..)).collect()
    }

    /// `bytes` mutated a few times: bits flipped, bytes set to edges,
    /// truncated, a slice repeated or dropped, random bytes inserted.
    pub fn mutate(&mut self, mut bytes: Vec<u8>) -> Vec<u8> {
        for _ in 0..=self.below(4) {
            let len = bytes.len();
            match self.below(6) {
                0 if len > 0 => {
                    let i = self.below(len);
                    bytes[i] ^= 1 << self.below(8);
                }
                1 if len > 0 => {
                    let i = self.below(len);
                    bytes[i] = [0x00, 0x7f, 0x80, 0xff][self.below(4)];
                }
                2 => bytes.truncate(self.below(len + 1)),
                3 if len > 0 => {
                    let (a, b) = (self.below(len), self.below(len));
                    let (a, b) = (a.min(b), a.max(b));
                    let slice = bytes[a..b].to_vec();
                    let at = self.below(len + 1);
                    bytes.splice(at..at, slice);
                }
                4 if len > 0 => {
                    let (a, b) = (self.below(len), self.below(len));
                    bytes.drain(a.min(b)..a.max(b));
                }
                _ => {
                    let at = self.below(len + 1);
                    let noise = self.bytes(8);
                    bytes.splice(at..at, noise);
                }
            }
        }
        bytes
    }
}
