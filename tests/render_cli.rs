//! The `render` example under bad input: every malformed PLY, cameras file or command
//! line ends with a one-line error naming the problem — no panic, no image.

#[path = "../examples/render/cli.rs"]
mod cli;

use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render_cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn write(name: &str, contents: &[u8]) -> String {
    let path = scratch(name);
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

const GOOD_PLY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/train_3pts_sh3.ply");

fn camera(width: u32, name: &str, rotation: &str) -> String {
    format!(
        r#"[{{"id":0,"img_name":"{name}","width":{width},"height":8,"position":[0,0,-3],
        "rotation":{rotation},"fx":10,"fy":10}}]"#
    )
}

const IDENTITY: &str = "[[1,0,0],[0,1,0],[0,0,1]]";

fn run(ply: &str, cameras: &str) -> Result<Vec<PathBuf>, String> {
    let out = scratch("out").display().to_string();
    cli::run(["--ply", ply, "--cameras", cameras, "--out", &out].map(String::from))
}

#[test]
fn bad_inputs_end_with_a_one_line_error_naming_the_problem() {
    let good_cameras = write("good.json", camera(8, "v", IDENTITY).as_bytes());
    let cases: Vec<(&str, Result<Vec<PathBuf>, String>, &str)> = vec![
        (
            "missing PLY",
            run("/nonexistent/x.ply", &good_cameras),
            "cannot read /nonexistent/x.ply",
        ),
        (
            "not a PLY",
            run(&write("text.ply", b"hello world\n"), &good_cameras),
            "not a PLY",
        ),
        (
            "truncated PLY",
            run(
                &write("cut.ply", &std::fs::read(GOOD_PLY).unwrap()[..900]),
                &good_cameras,
            ),
            "truncated",
        ),
        (
            "bad header",
            run(
                &write(
                    "header.ply",
                    b"ply\nformat binary_little_endian 1.0\nelement vertex x\nend_header\n",
                ),
                &good_cameras,
            ),
            "header",
        ),
        (
            "missing cameras",
            run(GOOD_PLY, "/nonexistent/cameras.json"),
            "cannot read /nonexistent/cameras.json",
        ),
        (
            "malformed JSON",
            run(GOOD_PLY, &write("bad.json", b"[{\"id\": 0,")),
            "malformed cameras JSON",
        ),
        (
            "wrong JSON shape",
            run(GOOD_PLY, &write("shape.json", b"{\"a\": 1}")),
            "malformed cameras JSON",
        ),
        (
            "no cameras",
            run(GOOD_PLY, &write("empty.json", b"[]")),
            "no camera",
        ),
        (
            "zero-size camera",
            run(
                GOOD_PLY,
                &write("zero.json", camera(0, "v", IDENTITY).as_bytes()),
            ),
            "zero-size",
        ),
        (
            "not a rotation",
            run(
                GOOD_PLY,
                &write(
                    "rot.json",
                    camera(8, "v", "[[1,0,0],[0,1,0],[0,0,0]]").as_bytes(),
                ),
            ),
            "rotation",
        ),
        (
            "path in the image name",
            run(
                GOOD_PLY,
                &write("name.json", camera(8, "../escape", IDENTITY).as_bytes()),
            ),
            "plain file name",
        ),
        (
            "not UTF-8",
            run(GOOD_PLY, &write("binary.json", &[0xff, 0xfe, 0x00])),
            "not UTF-8",
        ),
        (
            "missing --out",
            cli::run(["--ply", GOOD_PLY, "--cameras", &good_cameras].map(String::from)),
            "missing --out",
        ),
        (
            "unknown flag",
            cli::run(["--frobnicate".to_string()]),
            "unknown argument",
        ),
        (
            "flag without value",
            cli::run(["--ply".to_string()]),
            "--ply needs a value",
        ),
    ];
    for (what, result, expected) in cases {
        let message = result.expect_err(what);
        assert!(
            message.contains(expected),
            "{what}: {message:?} should mention {expected:?}"
        );
        assert!(
            !message.contains('\n'),
            "{what}: error spans lines: {message:?}"
        );
    }
}

#[test]
fn good_input_writes_one_png_per_camera() {
    let cameras = write("ok.json", camera(8, "view", IDENTITY).as_bytes());
    let written = run(GOOD_PLY, &cameras).unwrap();
    assert_eq!(written, vec![scratch("out").join("view.png")]);
    let image = image::open(&written[0]).unwrap();
    assert_eq!((image.width(), image.height()), (8, 8));
}
