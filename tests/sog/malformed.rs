//! Broken input of every kind gets its own named error, never a panic.

use std::collections::HashMap;

use crate::common::*;
use bevy_splat::asset::formats::sog::{
    DecodeOptions, SogError, decode_bundle, decode_bundle_with, decode_images, parse_meta,
};
use serde_json::{Value, json};

fn angel_files() -> Vec<(String, Vec<u8>)> {
    unzip(&read(fixture("angel.sog")))
}

fn angel_meta() -> Value {
    let files = angel_files();
    let meta = files.iter().find(|(n, _)| n == "meta.json").unwrap();
    serde_json::from_slice(&meta.1).unwrap()
}

/// The angel bundle with meta.json replaced.
fn angel_with_meta(meta: &[u8]) -> Vec<u8> {
    let mut files = angel_files();
    for (name, bytes) in &mut files {
        if name == "meta.json" {
            *bytes = meta.to_vec();
        }
    }
    rezip(&files)
}

fn angel_with(edit: impl FnOnce(&mut Value)) -> Result<(), SogError> {
    let mut meta = angel_meta();
    edit(&mut meta);
    decode_bundle(&angel_with_meta(&serde_json::to_vec(&meta).unwrap())).map(|_| ())
}

fn synthetic_with(
    synthetic: &Synthetic,
    edit: impl FnOnce(&mut Value, &mut HashMap<String, Vec<u8>>),
) -> Result<(), SogError> {
    let mut meta = synthetic.meta_json();
    let mut files = synthetic.files();
    edit(&mut meta, &mut files);
    files.insert("meta.json".into(), serde_json::to_vec(&meta).unwrap());
    decode_files(&files, &DecodeOptions::default()).map(|_| ())
}

/// A VP8L header (no pixel data) claiming a `width` × `height` canvas.
fn webp_header(width: u32, height: u32) -> Vec<u8> {
    let bits = (width - 1) | ((height - 1) << 14) | (1 << 28);
    let mut chunk = vec![0x2f];
    chunk.extend(bits.to_le_bytes());
    chunk.extend([0u8; 16]);
    let mut out = b"RIFF".to_vec();
    out.extend((4 + 8 + chunk.len() as u32).to_le_bytes());
    out.extend(b"WEBPVP8L");
    out.extend((chunk.len() as u32).to_le_bytes());
    out.extend(chunk);
    out
}

#[test]
fn synthetic_scenes_decode() {
    for bands in 0..=3 {
        let s = Synthetic::random(100, bands, 7 + u64::from(bands));
        let decoded = decode_files(&s.files(), &DecodeOptions::default()).expect("synthetic");
        assert_eq!((decoded.len(), decoded.sh_degree), (100, bands));
        let bundled = decode_bundle(&s.bundle()).expect("bundled synthetic");
        assert_eq!(bundled, decoded);
    }
}

#[test]
fn not_a_zip() {
    assert!(matches!(
        decode_bundle(b"definitely not a zip"),
        Err(SogError::Zip(_))
    ));
    assert!(matches!(decode_bundle(b""), Err(SogError::Zip(_))));
}

#[test]
fn zip_without_meta_json() {
    let files: Vec<_> = angel_files()
        .into_iter()
        .filter(|(n, _)| n != "meta.json")
        .collect();
    assert!(matches!(
        decode_bundle(&rezip(&files)),
        Err(SogError::MissingMetaJson)
    ));
}

#[test]
fn meta_json_not_json() {
    let err = decode_bundle(&angel_with_meta(b"{\"version\": 2, ")).unwrap_err();
    assert!(matches!(err, SogError::Json(_)), "{err}");
    // A key of the wrong type carries serde's message.
    let err = angel_with(|m| m["count"] = json!("many")).unwrap_err();
    assert!(
        matches!(&err, SogError::Json(e) if e.to_string().contains("invalid type")),
        "{err}"
    );
}

#[test]
fn meta_json_missing_keys() {
    for (path, key) in [
        (&["count"][..], "count"),
        (&["means"], "means"),
        (&["means", "mins"], "means.mins"),
        (&["scales", "codebook"], "scales.codebook"),
        (&["quats", "files"], "quats.files"),
        (&["sh0"], "sh0"),
    ] {
        let err = angel_with(|m| {
            let (last, parents) = path.split_last().unwrap();
            let mut node = m;
            for p in parents {
                node = &mut node[*p];
            }
            node.as_object_mut().unwrap().remove(*last);
        })
        .unwrap_err();
        assert!(
            matches!(err, SogError::MissingKey(k) if k == key),
            "{key}: {err}"
        );
    }
    // v1 without its count.
    let mut v1: Value =
        serde_json::from_slice(&read(fixture("playcanvas_logo_sog_v1/meta.json"))).unwrap();
    v1["means"].as_object_mut().unwrap().remove("shape");
    let err = parse_meta(&serde_json::to_vec(&v1).unwrap()).unwrap_err();
    assert!(matches!(err, SogError::MissingKey("means.shape")), "{err}");
}

#[test]
fn unsupported_version() {
    for version in [json!(3), json!("2"), json!(2.5), json!(0)] {
        let err = angel_with(|m| m["version"] = version.clone()).unwrap_err();
        assert!(
            matches!(err, SogError::UnsupportedVersion(_)),
            "{version}: {err}"
        );
    }
}

#[test]
fn codebook_of_the_wrong_length() {
    let err = angel_with(|m| {
        m["sh0"]["codebook"].as_array_mut().unwrap().pop();
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            SogError::CodebookLength {
                key: "sh0.codebook",
                len: 255
            }
        ),
        "{err}"
    );
}

#[test]
fn wrong_number_of_files_or_ranges() {
    let err = angel_with(|m| m["means"]["files"] = json!(["means_l.webp"])).unwrap_err();
    assert!(
        matches!(
            err,
            SogError::InvalidMeta {
                key: "means.files",
                ..
            }
        ),
        "{err}"
    );
    let err = angel_with(|m| m["means"]["maxs"] = json!([1.0, 2.0])).unwrap_err();
    assert!(
        matches!(
            err,
            SogError::InvalidMeta {
                key: "means.maxs",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn file_names_must_stay_beside_meta_json() {
    for name in [
        "../secret.webp",
        "/etc/passwd",
        "C:\\x.webp",
        "https://example.com/x.webp",
        "",
    ] {
        let err = angel_with(|m| m["quats"]["files"] = json!([name])).unwrap_err();
        assert!(
            matches!(
                err,
                SogError::InvalidMeta {
                    key: "quats.files",
                    ..
                }
            ),
            "{name}: {err}"
        );
    }
}

#[test]
fn missing_image() {
    let files: Vec<_> = angel_files()
        .into_iter()
        .filter(|(n, _)| n != "quats.webp")
        .collect();
    let err = decode_bundle(&rezip(&files)).unwrap_err();
    assert!(
        matches!(&err, SogError::MissingImage(n) if n == "quats.webp"),
        "{err}"
    );

    let meta = parse_meta(&read(fixture("playbot_lod3_sog/meta.json"))).unwrap();
    let files = folder_files(&fixture("playbot_lod3_sog"));
    let err = decode_images(&meta, |n| {
        (n != "shN_labels.webp")
            .then(|| files.get(n).map(Vec::as_slice))
            .flatten()
    })
    .unwrap_err();
    assert!(
        matches!(&err, SogError::MissingImage(n) if n == "shN_labels.webp"),
        "{err}"
    );
}

#[test]
fn corrupt_webp() {
    let s = Synthetic::random(64, 0, 1);
    // Not a WebP at all.
    let err = synthetic_with(&s, |_, f| {
        f.insert("scales.webp".into(), b"RIFF....WEBPjunk".to_vec());
    })
    .unwrap_err();
    assert!(
        matches!(&err, SogError::WebP { file, .. } if file == "scales.webp"),
        "{err}"
    );
    // A valid header with its pixel data cut off.
    let err = synthetic_with(&s, |_, f| {
        let image = f.get_mut("sh0.webp").unwrap();
        image.truncate(image.len() / 2);
    })
    .unwrap_err();
    assert!(
        matches!(&err, SogError::WebP { file, .. } if file == "sh0.webp"),
        "{err}"
    );
}

#[test]
fn image_smaller_than_count() {
    // angel's images are 268 × 268.
    let err = angel_with(|m| m["count"] = json!(268 * 268 + 1)).unwrap_err();
    assert!(
        matches!(&err, SogError::ImageTooSmall { file, width: 268, height: 268, count: 71_825 } if file == "means_l.webp"),
        "{err}"
    );
}

#[test]
fn huge_count_is_refused_before_any_image() {
    let err = angel_with(|m| m["count"] = json!(1u64 << 40)).unwrap_err();
    assert!(
        matches!(err, SogError::CountTooLarge { count, .. } if count == 1 << 40),
        "{err}"
    );
    let meta = parse_meta(
        &serde_json::to_vec(&{
            let mut m = angel_meta();
            m["count"] = json!(u64::MAX);
            m
        })
        .unwrap(),
    );
    assert!(matches!(
        meta.map(|m| decode_images(&m, |_| None)),
        Ok(Err(SogError::CountTooLarge { .. })) | Err(SogError::CountTooLarge { .. })
    ));
}

#[test]
fn tiny_webp_claiming_a_huge_canvas_is_refused_from_its_header() {
    let mut files = angel_files();
    for (name, bytes) in &mut files {
        if name == "quats.webp" {
            *bytes = webp_header(16_000, 16_000);
        }
    }
    let err = decode_bundle(&rezip(&files)).unwrap_err();
    assert!(
        matches!(&err, SogError::ImageTooLarge { file, width: 16_000, height: 16_000, .. } if file == "quats.webp"),
        "{err}"
    );
    // Even a canvas within the absolute cap is refused when `count` cannot need it.
    let s = Synthetic::random(10, 0, 3);
    let err = synthetic_with(&s, |_, f| {
        f.insert("means_u.webp".into(), webp_header(4096, 4096));
    })
    .unwrap_err();
    assert!(
        matches!(err, SogError::ImageTooLarge { width: 4096, .. }),
        "{err}"
    );
}

#[test]
fn sh_labels_outside_the_palette() {
    let s = Synthetic::random(100, 2, 5);
    // The synthetic palette has 128 entries; say only 16 are real.
    let err = synthetic_with(&s, |m, _| m["shN"]["count"] = json!(16)).unwrap_err();
    assert!(
        matches!(err, SogError::LabelOutOfRange { palette: 16, .. }),
        "{err}"
    );
    // Labels past the centroid image itself.
    let err = synthetic_with(&s, |_, f| {
        let (w, h) = (s.width, s.height);
        let labels = vec![0xffu8; (w * h * 4) as usize];
        f.insert("shN_labels.webp".into(), webp(w, h, &labels));
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            SogError::LabelOutOfRange {
                label: 65_535,
                palette: 128,
                ..
            }
        ),
        "{err}"
    );
    // And the real playbot with a palette cut short.
    let mut meta: Value =
        serde_json::from_slice(&read(fixture("playbot_lod3_sog/meta.json"))).unwrap();
    meta["shN"]["count"] = json!(100);
    let meta = parse_meta(&serde_json::to_vec(&meta).unwrap()).unwrap();
    let files = folder_files(&fixture("playbot_lod3_sog"));
    let err = decode_images(&meta, |n| files.get(n).map(Vec::as_slice)).unwrap_err();
    assert!(
        matches!(err, SogError::LabelOutOfRange { palette: 100, .. }),
        "{err}"
    );
}

#[test]
fn bands_out_of_range_or_mismatching_the_palette() {
    let s = Synthetic::random(64, 1, 9);
    let err = synthetic_with(&s, |m, _| m["shN"]["bands"] = json!(4)).unwrap_err();
    assert!(matches!(err, SogError::BandsOutOfRange(4)), "{err}");
    // bands 3 needs a 960-wide palette; this one is 192 wide (1 band).
    let err = synthetic_with(&s, |m, _| m["shN"]["bands"] = json!(3)).unwrap_err();
    assert!(
        matches!(&err, SogError::CentroidWidth { width: 192, .. }),
        "{err}"
    );
}

#[test]
fn zip_bombs_are_refused() {
    // An entry declaring more than the entry limit is refused before inflating.
    let zeros = vec![0u8; 4 << 20];
    let mut files = angel_files();
    files.push(("means_l.webp".into(), zeros.clone()));
    files.retain(|(n, b)| n != "means_l.webp" || b.len() == zeros.len());
    let small = DecodeOptions {
        max_entry_bytes: 1 << 20,
        ..DecodeOptions::default()
    };
    let err = decode_bundle_with(&rezip(&files), &small).unwrap_err();
    assert!(
        matches!(&err, SogError::EntryTooLarge { name, .. } if name == "means_l.webp"),
        "{err}"
    );
    // The total budget holds over all entries.
    let tight = DecodeOptions {
        max_total_inflated: 300_000,
        ..DecodeOptions::default()
    };
    let err = decode_bundle_with(&read(fixture("angel.sog")), &tight).unwrap_err();
    assert!(matches!(err, SogError::EntryTooLarge { .. }), "{err}");
}

#[test]
fn entry_lying_about_its_size_stops_at_the_declared_size() {
    // A deflated entry whose declared size says 1000 bytes but which inflates to 1 MiB.
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let deflated = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("meta.json", deflated).unwrap();
        std::io::Write::write_all(&mut zip, &vec![b' '; 1 << 20]).unwrap();
        zip.finish().unwrap();
    }
    let mut bytes = out.into_inner();
    // Patch the uncompressed size in the local header (offset 22) and in the central
    // directory record (offset 24 from its signature).
    bytes[22..26].copy_from_slice(&1000u32.to_le_bytes());
    let cd = bytes.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    bytes[cd + 24..cd + 28].copy_from_slice(&1000u32.to_le_bytes());
    let err = decode_bundle(&bytes).unwrap_err();
    eprintln!("lying entry: {err}");
    assert!(
        matches!(&err, SogError::EntryRead { name, .. } if name == "meta.json"),
        "{err}"
    );
}
