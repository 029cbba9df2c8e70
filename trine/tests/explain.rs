//! The explain page in a real browser: headless Chromium (Debian's
//! `chromium`, which `.ci/run` installs) opens `/explain` for the sample's
//! planted title; the page shows its hits with their three lists, and the
//! screenshot holds each list's colour where its cells are.
#![allow(clippy::unwrap_used)] // test helpers fail loudly

use std::io::Read;
use std::path::Path;
use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Chromium, headless, on `url` with `args` (its own profile in `profile`).
fn browse(browser: &str, profile: &Path, args: &[&str], url: &str) -> Vec<u8> {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG.
fn pixels(png: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let (mut at, mut idat) = (8, Vec::new());
    let (mut width, mut height, mut channels) = (0, 0, 0);
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let data = &png[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                height = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!((data[8], data[12]), (8, 0), "8 bits, not interlaced");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("colour type {other}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = width * channels;
    let mut previous = vec![0u8; stride];
    let mut out = Vec::with_capacity(width * height);
    for row in raw.chunks(stride + 1).take(height) {
        let (filter, line) = (row[0], &row[1..]);
        let mut current = vec![0u8; stride];
        for i in 0..stride {
            let a = if i >= channels {
                current[i - channels]
            } else {
                0
            };
            let b = previous[i];
            let c = if i >= channels {
                previous[i - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => panic!("filter {other}"),
            };
            current[i] = line[i].wrapping_add(predicted);
        }
        out.extend(current.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        previous = current;
    }
    (width, height, out)
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

#[test]
fn the_explain_page_shows_the_title_with_its_three_lists() {
    let Some(browser) = chromium() else {
        trine_testkit::skipped("the explain page in a browser", "apt-get install chromium");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = trine_testkit::serve_sample(env!("CARGO_BIN_EXE_trine"), &data);
    let url = format!(
        "http://{}/explain?query=Meeting+2026-11-11+09%3A58&tenant=acme",
        served.ready["http"].as_str().unwrap()
    );
    let profile = dir.path().join("chromium");

    // The page as the browser built it: the title first, in the tier, with
    // its place in each of the three lists; the stages and the budget.
    let dom = String::from_utf8(browse(browser, &profile, &["--dump-dom"], &url)).unwrap();
    let rows: Vec<&str> = dom.split("<tr>").skip(2).collect();
    assert!(rows.len() >= 2, "{dom}");
    assert!(
        rows[0].contains(trine_testkit::TITLE),
        "the title first: {}",
        rows[0]
    );
    assert_eq!(
        rows[0].matches("class=\"list\"").count(),
        3,
        "in three lists: {}",
        rows[0]
    );
    assert!(rows[0].contains("tier rule held"), "{}", rows[0]);
    assert!(
        dom.contains("lexical.counts") && dom.contains("Counts share"),
        "{dom}"
    );

    // The screenshot: each list's colour stands where its cells are.
    let shot = dir.path().join("explain.png");
    browse(
        browser,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1400,1000",
        ],
        &url,
    );
    let (width, height, pixels) = pixels(&std::fs::read(&shot).unwrap());
    assert_eq!((width, height), (1400, 1000));
    for (list, colour) in [
        ("lexical", trine_gateway::explain::LEXICAL),
        ("semantic", trine_gateway::explain::SEMANTIC),
        ("verbatim", trine_gateway::explain::VERBATIM),
    ] {
        let want = rgb(colour);
        let near = pixels
            .iter()
            .filter(|p| p.iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 8))
            .count();
        assert!(
            near > 500,
            "{list}'s colour on {near} pixels of the screenshot"
        );
    }
    let white = pixels.iter().filter(|p| **p == [255, 255, 255]).count();
    assert!(white < pixels.len(), "not a blank page");
}
