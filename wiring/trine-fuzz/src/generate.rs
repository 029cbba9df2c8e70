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

/// A generator of fuzz inputs: from a seed (the harness's runs), or from
/// bytes a coverage-guided fuzzer gives (`cargo fuzz`, fuzz/): each choice
/// then reads the next bytes, so the fuzzer's mutations of them steer the
/// structure it builds. Past their end every choice reads zeros (the
/// smallest, first choice). A seeded generator can record its choices as
/// those bytes: replayed, they build the same input (fuzz/'s seed corpora).
pub struct Gen {
    source: Source,
    record: Option<Vec<u8>>,
}

enum Source {
    Seeded(fastrand::Rng),
    Bytes { data: Vec<u8>, at: usize },
}

/// How many bytes a choice among `n` takes (all eight for any `u64`).
fn width(n: u64) -> usize {
    match n {
        0 => 8,
        1..=0x100 => 1,
        0x101..=0x1_0000 => 2,
        0x1_0001..=0x1_0000_0000 => 4,
        _ => 8,
    }
}

impl Gen {
    pub fn new(seed: u64) -> Self {
        Self {
            source: Source::Seeded(fastrand::Rng::with_seed(seed)),
            record: None,
        }
    }

    /// As `new`, keeping each choice as the bytes `from_bytes` reads.
    pub fn recording(seed: u64) -> Self {
        Self {
            record: Some(Vec::new()),
            ..Self::new(seed)
        }
    }

    /// The bytes of the choices made so far (empty unless recording).
    pub fn recorded(&self) -> &[u8] {
        self.record.as_deref().unwrap_or_default()
    }

    /// Choices read from `data`.
    pub fn from_bytes(data: &[u8]) -> Self {
        Self {
            source: Source::Bytes {
                data: data.to_vec(),
                at: 0,
            },
            record: None,
        }
    }

    /// As `from_bytes`, recording the choices it reads.
    #[cfg(test)]
    pub(crate) fn replaying(data: &[u8]) -> Self {
        Self {
            record: Some(Vec::new()),
            ..Self::from_bytes(data)
        }
    }

    /// The one choice every other is made of: a number below `n` (any
    /// `u64` when `n` is 0).
    fn draw(&mut self, n: u64) -> u64 {
        let width = width(n);
        let v = match &mut self.source {
            Source::Seeded(rng) if n == 0 => rng.u64(..),
            Source::Seeded(rng) => rng.u64(..n),
            Source::Bytes { data, at } => {
                let mut v = 0u64;
                for i in 0..width {
                    v |= u64::from(data.get(*at).copied().unwrap_or(0)) << (8 * i);
                    *at += 1;
                }
                if n == 0 { v } else { v % n }
            }
        };
        if let Some(record) = &mut self.record {
            record.extend_from_slice(&v.to_le_bytes()[..width]);
        }
        v
    }

    /// A number in `lo..hi` (`hi > lo`).
    fn span(&mut self, lo: i64, hi: i64) -> i64 {
        let n = (i128::from(hi) - i128::from(lo)) as u64;
        (i128::from(lo) + i128::from(self.draw(n))) as i64
    }

    /// Any `u64`.
    fn any(&mut self) -> u64 {
        self.draw(0)
    }

    /// A number below `n` (`n > 0`).
    fn under(&mut self, n: u64) -> u64 {
        self.draw(n)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.draw(n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, one_in: u32) -> bool {
        self.draw(u64::from(one_in.max(1))) == 0
    }

    pub fn u32(&mut self) -> u32 {
        self.draw(1 << 32) as u32
    }

    /// Mostly small numbers and the edges, sometimes any.
    pub fn i64(&mut self) -> i64 {
        match self.below(6) {
            0 => i64::MIN,
            1 => i64::MAX,
            2 => self.span(-1_000, 1_000),
            3 => self.span(-62_135_596_800, 253_402_300_799), // years 1..=9999
            _ => self.any() as i64,
        }
    }

    pub fn i32(&mut self) -> i32 {
        match self.below(5) {
            0 => i32::MIN,
            1 => i32::MAX,
            2 => 999_999_999 + self.span(-2, 3) as i32,
            3 => self.span(0, 1_000_000_000) as i32,
            _ => self.any() as i32,
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
            6 => f64::from_bits(self.any()),
            _ => (self.any() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 0.5,
        }
    }

    /// A character: a piece's or any scalar value.
    pub fn char(&mut self) -> char {
        loop {
            if let Some(c) = char::from_u32(self.under(0x11_0000) as u32) {
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
                self.under(0x1_0000),
                self.under(0x1000),
                self.under(0x1000),
                self.under(1 << 48)
            ),
        }
    }

    /// Random bytes.
    pub fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.under(0x100) as u8).collect()
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
